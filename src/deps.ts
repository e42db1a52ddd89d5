import { Redis } from 'ioredis';
import pino, { type Logger } from 'pino';
import { systemClock, type Clock } from './clock.js';
import type { Config } from './config.js';
import { createPrismaClient } from './db/prisma.js';
import type { PrismaClient } from './generated/prisma/client.js';

/** Everything with a connection or a clock in it, made once per process and passed down. */
export interface Dependencies {
  config: Config;
  logger: Logger;
  clock: Clock;
  prisma: PrismaClient;
  /** For commands on the request path: fails fast instead of queueing while Redis is away. */
  redis: Redis;
}

export function createLogger(config: Pick<Config, 'logLevel'>): Logger {
  return pino({ level: config.logLevel, base: { service: 'tern' } });
}

export function createDependencies(
  config: Config,
  overrides: Partial<Pick<Dependencies, 'clock' | 'logger'>> = {},
): Dependencies {
  return {
    config,
    logger: overrides.logger ?? createLogger(config),
    clock: overrides.clock ?? systemClock,
    prisma: createPrismaClient(config.databaseUrl),
    redis: new Redis(config.redisUrl, {
      lazyConnect: true,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 1,
      connectTimeout: 5_000,
    }),
  };
}

export async function closeDependencies(deps: Dependencies): Promise<void> {
  // A lazy connection that never connected has nothing to quit, and quit() would wait on it.
  const redisClosed = deps.redis.status === 'wait' ? Promise.resolve(deps.redis.disconnect()) : deps.redis.quit();
  await Promise.allSettled([deps.prisma.$disconnect(), redisClosed]);
}
