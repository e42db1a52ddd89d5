import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { inject } from 'vitest';
import { withDatabase } from '../../src/db/schema-engine.js';
import { SERVER_URL } from './server-url.js';

export interface TestDatabase {
  url: string;
  name: string;
  drop(): Promise<void>;
}

async function admin<T>(run: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: withDatabase(SERVER_URL, 'postgres') });
  await client.connect();
  try {
    return await run(client);
  } finally {
    await client.end();
  }
}

/** A fresh, migrated database of the test's own, copied from the template of global-setup. */
export async function createTestDatabase(): Promise<TestDatabase> {
  const name = `tern_test_${randomBytes(6).toString('hex')}`;
  const template = inject('templateDatabase');
  await admin(async (client) => {
    // Copies from one template cannot run at the same instant; PostgreSQL says so and we wait.
    for (let attempt = 0; ; attempt += 1) {
      try {
        await client.query(`CREATE DATABASE "${name}" TEMPLATE "${template}"`);
        return;
      } catch (error) {
        const busy = error instanceof Error && /being accessed by other users/.test(error.message);
        if (!busy || attempt >= 50) throw error;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
  });
  return {
    url: withDatabase(SERVER_URL, name),
    name,
    drop: () =>
      admin(async (client) => void (await client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`))),
  };
}

/** Runs SQL in a test database directly: for arranging states the API cannot reach. */
export async function sql(databaseUrl: string, text: string, values: unknown[] = []) {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    return await client.query(text, values);
  } finally {
    await client.end();
  }
}
