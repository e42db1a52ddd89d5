import type { Redis } from 'ioredis';
import type pg from 'pg';
import pino, { type Logger } from 'pino';
import { systemClock, type Clock } from './clock.js';
import type { Config } from './config.js';
import { createPool, createPrismaClient } from './db/prisma.js';
import type { PrismaClient } from './generated/prisma/client.js';
import { createQueues, type Queues } from './jobs/queues.js';
import { createProducerConnection } from './jobs/redis-connections.js';

/** Everything with a connection or a clock in it, made once per process and passed down. */
export interface Dependencies {
  config: Config;
  logger: Logger;
  clock: Clock;
  prisma: PrismaClient;
  /**
   * The pool under Prisma, for bulk writes Prisma's client handles poorly: it keeps every raw
   * query's parameters in its debug buffer and copies them several times (the contact import).
   */
  pool: pg.Pool;
  /** For commands on the request path: fails fast instead of queueing while Redis is away. */
  redis: Redis;
  /** Producers of every queue, on the same fail-fast connection. */
  queues: Queues;
}

export function createLogger(config: Pick<Config, 'logLevel'>): Logger {
  return pino({ level: config.logLevel, base: { service: 'tern' } });
}

export function createDependencies(
  config: Config,
  overrides: Partial<Pick<Dependencies, 'clock' | 'logger'>> = {},
): Dependencies {
  const logger = overrides.logger ?? createLogger(config);
  const redis = createProducerConnection(config.redisUrl, config.redisCommandTimeoutMs);
  // While Redis is away ioredis reconnects on its own; say so once per attempt, not as a crash.
  redis.on('error', (error) => logger.warn({ err: error }, 'Redis connection error'));
  const queues = createQueues(redis, config.redisPrefix);
  for (const queue of [queues.messageSend, queues.campaignDispatch, queues.webhookDelivery, queues.contactImport]) {
    queue.on('error', (error) => logger.warn({ err: error, queue: queue.name }, 'queue error'));
  }
  const pool = createPool(config.databaseUrl, config.databasePoolSize);
  return {
    config,
    logger,
    clock: overrides.clock ?? systemClock,
    prisma: createPrismaClient(pool),
    pool,
    redis,
    queues,
  };
}

export async function closeDependencies(deps: Dependencies): Promise<void> {
  await deps.queues.close().catch(() => undefined);
  // Only a ready connection can quit politely; one still connecting would be kept alive by quit().
  const redisClosed = deps.redis.status === 'ready' ? deps.redis.quit() : Promise.resolve(deps.redis.disconnect());
  await Promise.allSettled([deps.prisma.$disconnect(), redisClosed]);
}
