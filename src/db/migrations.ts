// Creating and applying the SQL migrations of prisma/migrations without the Prisma CLI's native
// engine; the folder and the `_prisma_migrations` table stay exactly as `prisma migrate` has them.
import { mkdir, readdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { describeError, UnreachableError } from '../lib/unreachable.js';
import {
  databaseName,
  MIGRATION_LOCK_CONTENT,
  MIGRATION_LOCK_FILE,
  openSchemaEngine,
  withDatabase,
} from './schema-engine.js';

export const DEFAULT_DATABASE_URL = 'postgresql://postgres@127.0.0.1:5432/tern';
export const DEFAULT_MIGRATIONS_DIR = fileURLToPath(new URL('../../prisma/migrations', import.meta.url));
export const DEFAULT_SCHEMA_PATH = fileURLToPath(new URL('../../prisma/schema.prisma', import.meta.url));
export const MIGRATION_NAME_PATTERN = /^[a-z0-9_]+$/;

// Serialises migrateDatabase across processes. Deliberately not Prisma's own key (72707369): the
// engine takes that one itself on another connection, and would time out waiting for ours.
const MIGRATION_LOCK_KEY = 0x7465726e; // "tern"
const CONNECT_TIMEOUT_MS = 10_000;

export interface MigrationOptions {
  migrationsDir?: string;
  schemaPath?: string;
  log?: (message: string) => void;
}

export interface CreateMigrationOptions extends MigrationOptions {
  /** Server on which the shadow database is built; defaults to DEFAULT_DATABASE_URL. */
  databaseUrl?: string;
}

function hasCode(error: unknown, ...codes: string[]): boolean {
  const code = error instanceof Error ? (error as NodeJS.ErrnoException).code : undefined;
  return code !== undefined && codes.includes(code);
}

async function connect(databaseUrl: string): Promise<pg.Client> {
  const client = new pg.Client({
    connectionString: databaseUrl,
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
  });
  await client.connect();
  return client;
}

/** Creates the database named by the URL when it does not exist yet; true when it did create it. */
export async function ensureDatabase(databaseUrl: string): Promise<boolean> {
  const name = databaseName(databaseUrl);
  // Connecting to the database itself first needs no access to the maintenance database, which
  // hosted servers often refuse.
  try {
    await (await connect(databaseUrl)).end();
    return false;
  } catch (error) {
    if (!hasCode(error, '3D000')) throw new UnreachableError('PostgreSQL', databaseUrl, error);
  }

  const maintenanceUrl = withDatabase(databaseUrl, 'postgres');
  const admin = await connect(maintenanceUrl).catch((error: unknown) => {
    throw new UnreachableError('PostgreSQL', maintenanceUrl, error);
  });
  try {
    await admin.query(`CREATE DATABASE ${pg.escapeIdentifier(name)}`);
    return true;
  } catch (error) {
    // Another process created it in the meantime: 42P04 once its creation is committed, a unique
    // violation on pg_database while it is still in flight.
    if (hasCode(error, '42P04', '23505')) return false;
    throw new Error(`cannot create database ${name}: ${describeError(error)}`, { cause: error });
  } finally {
    await admin.end();
  }
}

/** Applies the pending migrations, once across concurrent callers; returns the names it applied. */
export async function migrateDatabase(databaseUrl: string, opts: MigrationOptions = {}): Promise<string[]> {
  const log = opts.log ?? (() => {});
  if (await ensureDatabase(databaseUrl)) log(`created database ${databaseName(databaseUrl)}`);

  const lock = await connect(databaseUrl);
  // An idle client that loses its connection emits 'error', which would otherwise crash the process.
  lock.on('error', (error) => log(`migration lock connection lost: ${error.message}`));
  try {
    const { rows } = await lock.query<{ locked: boolean }>('SELECT pg_try_advisory_lock($1) AS locked', [
      MIGRATION_LOCK_KEY,
    ]);
    if (!rows[0]?.locked) {
      log('waiting for another process to finish migrating');
      await lock.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
    }
    const engine = await openSchemaEngine({
      connectionString: databaseUrl,
      schemaPath: opts.schemaPath ?? DEFAULT_SCHEMA_PATH,
    });
    try {
      const applied = await engine.applyMigrations(opts.migrationsDir ?? DEFAULT_MIGRATIONS_DIR);
      for (const name of applied) log(`applied migration ${name}`);
      return applied;
    } finally {
      await engine.dispose();
    }
  } finally {
    // Closing the session releases the advisory lock, even when the connection is already broken.
    await lock.end();
  }
}

/**
 * Writes `<migrationsDir>/<UTC YYYYMMDDHHMMSS>_<name>/migration.sql` with the SQL that takes a
 * database built from the existing migrations to schema.prisma, like `prisma migrate dev
 * --create-only` (without its data-loss warning comments); null when they already agree.
 */
export async function createMigration(
  name: string,
  opts: CreateMigrationOptions = {},
): Promise<string | null> {
  if (!MIGRATION_NAME_PATTERN.test(name)) {
    throw new Error(`invalid migration name "${name}": use lowercase letters, digits and underscores`);
  }
  const migrationsDir = path.resolve(opts.migrationsDir ?? DEFAULT_MIGRATIONS_DIR);
  const databaseUrl = opts.databaseUrl ?? DEFAULT_DATABASE_URL;
  const log = opts.log ?? (() => {});

  // The engine connects to this database before it builds the shadow database next to it.
  if (await ensureDatabase(databaseUrl)) log(`created database ${databaseName(databaseUrl)}`);
  const engine = await openSchemaEngine({
    connectionString: databaseUrl,
    schemaPath: opts.schemaPath ?? DEFAULT_SCHEMA_PATH,
  });
  let script: string;
  try {
    script = await engine.diffFromMigrations(migrationsDir);
  } finally {
    await engine.dispose();
  }
  if (!script) return null;

  await mkdir(migrationsDir, { recursive: true });
  const folder = path.join(migrationsDir, `${await nextTimestamp(migrationsDir)}_${name}`);
  // Without `recursive`, an existing folder fails instead of being written into.
  await mkdir(folder);
  await writeFile(path.join(folder, 'migration.sql'), script);
  try {
    await writeFile(path.join(migrationsDir, MIGRATION_LOCK_FILE), MIGRATION_LOCK_CONTENT, { flag: 'wx' });
    log(`wrote ${MIGRATION_LOCK_FILE}`);
  } catch (error) {
    if (!hasCode(error, 'EEXIST')) throw error;
  }
  return folder;
}

const TIMESTAMP_PATTERN = /^\d{14}/;

function formatTimestamp(date: Date): string {
  return date.toISOString().replace(/\D/g, '').slice(0, 14);
}

// Migrations are applied in folder name order, so a new one must sort after every existing one,
// even when created within the same second as the last one or on a clock behind a teammate's.
async function nextTimestamp(migrationsDir: string): Promise<string> {
  const now = formatTimestamp(new Date());
  const latest = (await readdir(migrationsDir))
    .map((entry) => TIMESTAMP_PATTERN.exec(entry)?.[0])
    .filter((timestamp) => timestamp !== undefined)
    .sort()
    .at(-1);
  if (!latest || now > latest) return now;
  const latestDate = new Date(
    latest.replace(/^(\d{4})(\d\d)(\d\d)(\d\d)(\d\d)(\d\d)$/, '$1-$2-$3T$4:$5:$6Z'),
  );
  return formatTimestamp(new Date(latestDate.getTime() + 1000));
}
