import { readdirSync } from 'node:fs';
import pg from 'pg';
import { redactUrl, UnreachableError } from '../lib/unreachable.js';
import { DEFAULT_MIGRATIONS_DIR } from './migrations.js';

const CONNECT_TIMEOUT_MS = 5_000;

/** A database the CLI will not work on: missing, without Tern's schema, or behind this build's migrations. */
export class NotTernDatabaseError extends Error {
  constructor(databaseUrl: string, problem: string) {
    super(
      `the database ${redactUrl(databaseUrl)} ${problem}; the CLI never creates or migrates one: check DATABASE_URL (and DIRECT_DATABASE_URL), or start Tern once (npm start) to create and migrate it`,
    );
    this.name = 'NotTernDatabaseError';
  }
}

/**
 * Checks, without changing anything, that the URL names a database Tern made: it exists, holds
 * Tern's migrations table and has every migration this build ships applied. What the operator's
 * commands write must land where the running service reads.
 */
export async function checkTernDatabase(
  databaseUrl: string,
  migrationsDir = DEFAULT_MIGRATIONS_DIR,
): Promise<void> {
  const client = new pg.Client({
    connectionString: databaseUrl,
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
  });
  try {
    await client.connect();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === '3D000')
      throw new NotTernDatabaseError(databaseUrl, 'does not exist');
    throw new UnreachableError('PostgreSQL', databaseUrl, error);
  }
  try {
    const { rows } = await client.query<{ migrations: string | null; accounts: string | null }>(
      "SELECT to_regclass('_prisma_migrations')::text AS migrations, to_regclass('accounts')::text AS accounts",
    );
    if (!rows[0]?.migrations || !rows[0].accounts)
      throw new NotTernDatabaseError(databaseUrl, 'holds no Tern schema');
    const applied = await client.query<{ migration_name: string }>(
      'SELECT migration_name FROM _prisma_migrations WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL',
    );
    const done = new Set(applied.rows.map((row) => row.migration_name));
    const pending = readdirSync(migrationsDir, { withFileTypes: true }).filter(
      (entry) => entry.isDirectory() && !done.has(entry.name),
    );
    if (pending.length > 0)
      throw new NotTernDatabaseError(
        databaseUrl,
        `lacks ${pending.length} migration(s) of this build (npm run db:migrate applies them)`,
      );
  } finally {
    await client.end().catch(() => undefined);
  }
}
