import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { inject } from 'vitest';
import { withDatabase } from '../../src/db/schema-engine.js';
import { checkLedger } from './ledger.js';
import type { PgBouncer } from './pgbouncer.js';
import { SERVER_URL } from './server-url.js';

export interface TestDatabase {
  /** What Tern is given as DATABASE_URL: through PgBouncer when the run goes through one. */
  url: string;
  /** The database itself, for DIRECT_DATABASE_URL. */
  directUrl: string;
  name: string;
  /**
   * Checks the ledger (ledger.ts: rollups and quota usage equal a count of the messages), then
   * drops the database, also when the check throws.
   */
  drop(): Promise<void>;
  /**
   * For a test that writes an account's message rows by hand, past the statements that keep the
   * rollups and quota counts: the ledger check leaves that account out. `reason` is for the reader.
   */
  leaveOutOfLedger(accountId: string, reason: string): void;
}

/** This run's PgBouncer port: 0 without one, and outside vitest (the bench starts processes with this harness too). */
function runBouncerPort(): number {
  try {
    return inject('pgbouncerPort');
  } catch {
    return 0;
  }
}

/** True in the PgBouncer pass (the `pgbouncer` project), where every test database goes through PgBouncer. */
export function throughPgBouncer(): boolean {
  return runBouncerPort() !== 0;
}

/**
 * The bouncer every test database goes through in this project (the PgBouncer pass), or null.
 * Its port only: the bouncer runs in global-setup's process.
 */
function runBouncerUrl(name: string): string | null {
  const port = runBouncerPort();
  if (!port) return null;
  const url = new URL(withDatabase(SERVER_URL, name));
  url.hostname = '127.0.0.1';
  url.port = String(port);
  return url.toString();
}

/**
 * The environment of a Tern process given `databaseUrl`: through this run's PgBouncer, it also
 * gets the database itself as DIRECT_DATABASE_URL for its migrations, as an operator sets it.
 */
export function withDirectDatabaseUrl(env: Record<string, string>): Record<string, string> {
  const port = runBouncerPort();
  if (!port || !env.DATABASE_URL || env.DIRECT_DATABASE_URL) return env;
  const url = new URL(env.DATABASE_URL);
  if (url.port !== String(port)) return env;
  return { ...env, DIRECT_DATABASE_URL: withDatabase(SERVER_URL, url.pathname.slice(1)) };
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

/**
 * A fresh, migrated database of the test's own, copied from the template of global-setup;
 * reached through `through` (or this run's PgBouncer) when given.
 */
export async function createTestDatabase(options: { through?: PgBouncer } = {}): Promise<TestDatabase> {
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
  const directUrl = withDatabase(SERVER_URL, name);
  const handWritten = new Set<string>();
  let dropped = false;
  const dropDatabase = () =>
    admin(async (client) => void (await client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`)));
  return {
    url: options.through?.url(name) ?? runBouncerUrl(name) ?? directUrl,
    directUrl,
    name,
    async drop() {
      // Checked once: a database dropped twice is gone the second time.
      const check = !dropped;
      dropped = true;
      try {
        if (check) await checkLedger(directUrl, { except: [...handWritten] });
      } finally {
        await dropDatabase();
      }
    },
    leaveOutOfLedger(accountId) {
      handWritten.add(accountId);
    },
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
