import type { Redis } from 'ioredis';
import type pg from 'pg';
import pino, { type Logger } from 'pino';
import pretty from 'pino-pretty';
import type { Config } from './config.js';
import { createPool, createPrismaClient } from './db/prisma.js';
import type { PrismaClient } from './generated/prisma/client.js';
import { closeQueues, createQueues, type Queues, queueList } from './jobs/queues.js';
import { createProducerConnection, createSubscriberConnection } from './jobs/redis-connections.js';
import { type Clock, systemClock } from './lib/clock.js';
import { Metrics } from './metrics/metrics.js';

/** Everything with a connection or a clock in it, made once per process and passed down. */
export interface Dependencies {
  config: Config;
  logger: Logger;
  clock: Clock;
  prisma: PrismaClient;
  /**
   * The pool under Prisma, for bulk writes Prisma's client handles poorly: it keeps every raw
   * query's parameters in its debug buffer and copies them several times (the contact import);
   * and for the credential lookups of every request, where its per-query cost would dominate.
   */
  pool: pg.Pool;
  /**
   * The statistics reads' own connections (STATS_POOL_SIZE), so that however many arrive they
   * never hold those sends and logins need; waiting for one is bounded by the statements' time limit.
   */
  statsPool: pg.Pool;
  /** For commands on the request path: fails fast instead of queueing while Redis is away. */
  redis: Redis;
  /**
   * Receives live updates for GraphQL subscriptions (a connection in subscriber mode can do
   * nothing else); it connects only when a process first subscribes, so a worker never opens it.
   */
  subscriber: Redis;
  /** Producers of every queue, on the same fail-fast connection. */
  queues: Queues;
  /** This process's Prometheus series. */
  metrics: Metrics;
}

/**
 * JSON lines, one per event; `LOG_FORMAT=pretty` (the default in development on a terminal) writes
 * them for people instead, synchronously so that the last lines before an exit are not lost.
 */
export function createLogger(config: Pick<Config, 'logLevel' | 'logFormat'>): Logger {
  const options = { level: config.logLevel, base: { service: 'tern' } };
  return config.logFormat === 'pretty'
    ? pino(options, pretty({ sync: true, ignore: 'service,hostname' }))
    : pino(options);
}

export function createDependencies(
  config: Config,
  overrides: Partial<Pick<Dependencies, 'clock' | 'logger' | 'metrics'>> = {},
): Dependencies {
  const logger = overrides.logger ?? createLogger(config);
  const redis = createProducerConnection(config.redis, config.redisCommandTimeoutMs);
  // While Redis is away ioredis reconnects on its own; say so once per attempt, not as a crash.
  redis.on('error', (error) => logger.warn({ err: error }, 'Redis connection error'));
  const subscriber = createSubscriberConnection(config.redis);
  subscriber.on('error', (error) => logger.warn({ err: error }, 'Redis subscriber connection error'));
  const queues = createQueues(redis, config.redisPrefix);
  for (const queue of queueList(queues)) {
    queue.on('error', (error) => logger.warn({ err: error, queue: queue.name }, 'queue error'));
  }
  const pool = createPool(config.databaseUrl, config.databasePoolSize);
  const statsPool = createPool(
    config.databaseUrl,
    config.statsPoolSize,
    config.statsReads.statementTimeoutMs,
  );
  // An idle connection that fails (the server restarted) is dropped by the pool; say so, not crash.
  statsPool.on('error', (error) => logger.warn({ err: error }, 'statistics pool connection error'));
  return {
    config,
    logger,
    clock: overrides.clock ?? systemClock,
    prisma: createPrismaClient(pool),
    pool,
    statsPool,
    redis,
    subscriber,
    queues,
    metrics: overrides.metrics ?? new Metrics(),
  };
}

export async function closeDependencies(deps: Dependencies): Promise<void> {
  await closeQueues(deps.queues).catch(() => undefined);
  // Only a ready connection can quit politely; one still connecting would be kept alive by quit().
  const redisClosed =
    deps.redis.status === 'ready' ? deps.redis.quit() : Promise.resolve(deps.redis.disconnect());
  await Promise.allSettled([deps.prisma.$disconnect(), deps.statsPool.end(), redisClosed]);
  deps.subscriber.disconnect();
}
