import { randomBytes } from 'node:crypto';
import { afterAll } from 'vitest';
import { createTestDatabase, type TestDatabase } from './database.js';
import { REDIS_URL } from './server-url.js';
import { deleteRedisKeys } from './tern.js';
import { killAll } from './tern-processes.js';

export interface ProcessEnvironment {
  database: TestDatabase;
  /** What every Tern process and CLI run of the file is started with. */
  env: Record<string, string>;
}

/**
 * For a file whose tests run Tern as processes: a database and a Redis prefix of its own, made
 * when a test asks for them, and the processes, the database and the keys removed after the file.
 */
export function processEnvironment(
  name: string,
): (settings?: Record<string, string>) => Promise<ProcessEnvironment> {
  const redisPrefix = `tern_${name}_${randomBytes(6).toString('hex')}`;
  let database: TestDatabase | null = null;
  afterAll(async () => {
    await killAll();
    await database?.drop();
    await deleteRedisKeys(redisPrefix);
  });
  return async (settings = {}) => {
    database = await createTestDatabase();
    const env = {
      DATABASE_URL: database.url,
      DIRECT_DATABASE_URL: database.directUrl,
      REDIS_URL,
      REDIS_PREFIX: redisPrefix,
      JWT_SECRET: `${name}-processes-secret-of-at-least-32-bytes`,
      DEMO_ACCOUNT: 'false',
      HOST: '127.0.0.1',
      METRICS_PORT: '0',
      ...settings,
    };
    return { database, env };
  };
}
