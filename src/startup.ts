import { Redis } from 'ioredis';
import { redactUrl } from './config.js';

/** A dependency that does not answer at start-up: reported in one line, naming its URL. */
export class UnreachableError extends Error {
  constructor(service: 'PostgreSQL' | 'Redis', url: string, cause: unknown) {
    super(`cannot reach ${service} at ${redactUrl(url)}: ${describeError(cause)}`, { cause });
    this.name = 'UnreachableError';
  }
}

// Node reports a refused connection to a name with several addresses (localhost: ::1 and
// 127.0.0.1) as an AggregateError whose own message is empty.
export function describeError(error: unknown): string {
  if (error instanceof AggregateError && !error.message) {
    return error.errors.map((inner: unknown) => describeError(inner)).join('; ');
  }
  return error instanceof Error ? error.message || error.name : String(error);
}

export async function checkRedis(redisUrl: string): Promise<void> {
  const redis = new Redis(redisUrl, {
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    connectTimeout: 5_000,
    retryStrategy: () => null,
  });
  // ioredis rejects connect() with a generic "Connection is closed"; the cause comes as an event.
  let cause: unknown;
  redis.on('error', (error) => {
    cause ??= error;
  });
  try {
    await redis.connect();
    await redis.ping();
  } catch (error) {
    throw new UnreachableError('Redis', redisUrl, cause ?? error);
  } finally {
    redis.disconnect();
  }
}
