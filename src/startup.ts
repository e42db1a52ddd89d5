import { describeRedis, type RedisTarget } from './config.js';
import { createProbeConnection } from './jobs/redis-connections.js';
import { UnreachableError } from './lib/unreachable.js';

/** What start-up learnt of Redis. */
export interface RedisCheck {
  /** Redis's `maxmemory-policy`; null when it would not say (a managed Redis may refuse INFO). */
  evictionPolicy: string | null;
}

/**
 * Checks that Redis answers (through Sentinel when configured) and reads its eviction policy:
 * BullMQ is safe only with `noeviction`, since any other policy lets Redis drop a queue's keys
 * when memory runs short.
 */
export async function checkRedis(target: RedisTarget): Promise<RedisCheck> {
  const redis = createProbeConnection(target);
  // ioredis rejects connect() with a generic "Connection is closed"; the cause comes as an event.
  let cause: unknown;
  redis.on('error', (error) => {
    cause ??= error;
  });
  try {
    try {
      await redis.connect();
      await redis.ping();
    } catch (error) {
      throw new UnreachableError('Redis', describeRedis(target), cause ?? error);
    }
    const memory = await redis.info('memory').catch(() => '');
    return { evictionPolicy: /^maxmemory_policy:(\S+)/m.exec(memory)?.[1] ?? null };
  } finally {
    redis.disconnect();
  }
}
