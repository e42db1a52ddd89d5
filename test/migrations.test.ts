import { createHash, randomBytes } from 'node:crypto';
import { cp, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import {
  createMigration,
  DEFAULT_DATABASE_URL,
  DEFAULT_MIGRATIONS_DIR,
  DEFAULT_SCHEMA_PATH,
  ensureDatabase,
  migrateDatabase,
} from '../src/db/migrations.js';
import { MIGRATION_LOCK_CONTENT, withDatabase } from '../src/db/schema-engine.js';

const SERVER_URL = process.env.DATABASE_URL || DEFAULT_DATABASE_URL;

const FIXTURE_SCHEMA = `datasource db {
  provider = "postgresql"
}

model Thing {
  id   Int    @id @default(autoincrement())
  name String @unique
}
`;

// What the engine renders for FIXTURE_SCHEMA, so the fixture folder and schema agree.
const FIXTURE_MIGRATION = `-- CreateTable
CREATE TABLE "Thing" (
    "id" SERIAL NOT NULL,
    "name" TEXT NOT NULL,

    CONSTRAINT "Thing_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "Thing_name_key" ON "Thing"("name");
`;
const FIXTURE_MIGRATION_NAME = '20260101000000_init';

const databases: string[] = [];
const tempDirs: string[] = [];

function freshDatabaseUrl(): string {
  const name = `tern_test_${randomBytes(6).toString('hex')}`;
  databases.push(name);
  return withDatabase(SERVER_URL, name);
}

async function withAdmin<T>(run: (client: pg.Client) => Promise<T>, database = 'postgres'): Promise<T> {
  const client = new pg.Client({ connectionString: withDatabase(SERVER_URL, database) });
  await client.connect();
  try {
    return await run(client);
  } finally {
    await client.end();
  }
}

async function databaseExists(name: string): Promise<boolean> {
  return withAdmin(
    async (client) =>
      (await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name])).rowCount === 1,
  );
}

async function appliedMigrations(
  database: string,
): Promise<{ migration_name: string; checksum: string; finished: boolean; applied_steps_count: number }[]> {
  return withAdmin(async (client) => {
    const { rows } = await client.query(
      'SELECT migration_name, checksum, finished_at IS NOT NULL AS finished, applied_steps_count FROM _prisma_migrations ORDER BY migration_name',
    );
    return rows;
  }, database);
}

/** A schema and migrations folder in a temporary directory; `withMigration` adds the fixture migration. */
async function fixture({
  withMigration,
}: {
  withMigration: boolean;
}): Promise<{ schemaPath: string; migrationsDir: string }> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'tern-migrations-'));
  tempDirs.push(dir);
  const schemaPath = path.join(dir, 'schema.prisma');
  const migrationsDir = path.join(dir, 'migrations');
  await writeFile(schemaPath, FIXTURE_SCHEMA);
  await mkdir(migrationsDir);
  if (withMigration) {
    await mkdir(path.join(migrationsDir, FIXTURE_MIGRATION_NAME));
    await writeFile(path.join(migrationsDir, FIXTURE_MIGRATION_NAME, 'migration.sql'), FIXTURE_MIGRATION);
    await writeFile(path.join(migrationsDir, 'migration_lock.toml'), MIGRATION_LOCK_CONTENT);
  }
  return { schemaPath, migrationsDir };
}

afterEach(async () => {
  const names = databases.splice(0);
  await withAdmin(async (client) => {
    for (const name of names)
      await client.query(`DROP DATABASE IF EXISTS ${pg.escapeIdentifier(name)} WITH (FORCE)`);
  });
  await Promise.all(tempDirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});

describe('database migrations', { timeout: 60_000 }, () => {
  it('ensureDatabase creates a missing database once', async () => {
    const url = freshDatabaseUrl();
    expect(await ensureDatabase(url)).toBe(true);
    expect(await ensureDatabase(url)).toBe(false);
  });

  it('migrateDatabase creates a missing database and applies the folder as prisma migrate deploy does', async () => {
    const { schemaPath, migrationsDir } = await fixture({ withMigration: true });
    const url = freshDatabaseUrl();
    const logs: string[] = [];

    expect(await migrateDatabase(url, { schemaPath, migrationsDir, log: (line) => logs.push(line) })).toEqual(
      [FIXTURE_MIGRATION_NAME],
    );

    const database = new URL(url).pathname.slice(1);
    expect(await databaseExists(database)).toBe(true);
    expect(await appliedMigrations(database)).toEqual([
      {
        migration_name: FIXTURE_MIGRATION_NAME,
        checksum: createHash('sha256').update(FIXTURE_MIGRATION).digest('hex'),
        finished: true,
        applied_steps_count: 1,
      },
    ]);
    expect(logs).toEqual([`created database ${database}`, `applied migration ${FIXTURE_MIGRATION_NAME}`]);
  });

  it('a second migrateDatabase applies nothing', async () => {
    const { schemaPath, migrationsDir } = await fixture({ withMigration: true });
    const url = freshDatabaseUrl();

    await migrateDatabase(url, { schemaPath, migrationsDir });
    expect(await migrateDatabase(url, { schemaPath, migrationsDir })).toEqual([]);
    expect(await appliedMigrations(new URL(url).pathname.slice(1))).toHaveLength(1);
  });

  it('concurrent migrateDatabase calls on a fresh database all succeed and apply each migration once', async () => {
    const { schemaPath, migrationsDir } = await fixture({ withMigration: true });
    const url = freshDatabaseUrl();

    const results = await Promise.all(
      [1, 2, 3].map(() => migrateDatabase(url, { schemaPath, migrationsDir })),
    );

    expect(results.flat()).toEqual([FIXTURE_MIGRATION_NAME]);
    expect(await appliedMigrations(new URL(url).pathname.slice(1))).toHaveLength(1);
  });

  it('createMigration returns null when the schema and the migrations folder agree', async () => {
    const { schemaPath, migrationsDir } = await fixture({ withMigration: true });
    const before = await readdir(migrationsDir);

    expect(
      await createMigration('nothing', { schemaPath, migrationsDir, databaseUrl: freshDatabaseUrl() }),
    ).toBeNull();
    expect(await readdir(migrationsDir)).toEqual(before);
  });

  it('createMigration writes the next migration in Prisma format and cleans up its shadow database', async () => {
    const { schemaPath, migrationsDir } = await fixture({ withMigration: false });
    const url = freshDatabaseUrl();

    const first = await createMigration('init', { schemaPath, migrationsDir, databaseUrl: url });
    expect(path.basename(first ?? '')).toMatch(/^\d{14}_init$/);
    expect(await readFile(path.join(first ?? '', 'migration.sql'), 'utf8')).toBe(FIXTURE_MIGRATION);
    expect(await readFile(path.join(migrationsDir, 'migration_lock.toml'), 'utf8')).toBe(
      MIGRATION_LOCK_CONTENT,
    );

    await writeFile(
      schemaPath,
      FIXTURE_SCHEMA.replace('name String @unique', 'name String @unique\n  note String?'),
    );
    const second = await createMigration('add_note', { schemaPath, migrationsDir, databaseUrl: url });
    expect(await readFile(path.join(second ?? '', 'migration.sql'), 'utf8')).toContain(
      'ALTER TABLE "Thing" ADD COLUMN     "note" TEXT;',
    );
    expect(await createMigration('again', { schemaPath, migrationsDir, databaseUrl: url })).toBeNull();

    const prefix = `${new URL(url).pathname.slice(1)}_shadow_`;
    const leftovers = await withAdmin(
      async (client) =>
        (await client.query('SELECT datname FROM pg_database WHERE starts_with(datname, $1)', [prefix])).rows,
    );
    expect(leftovers).toEqual([]);
  });

  it('createMigration rejects names that are not [a-z0-9_]+', async () => {
    await expect(createMigration('../escape')).rejects.toThrow(/invalid migration name/);
  });

  it('prisma/migrations applies to a fresh database and matches prisma/schema.prisma', async () => {
    const url = freshDatabaseUrl();
    const folders = (await readdir(DEFAULT_MIGRATIONS_DIR, { withFileTypes: true }))
      .filter((entry) => entry.isDirectory())
      .map((entry) => entry.name)
      .sort();
    expect(await migrateDatabase(url)).toEqual(folders);

    // On a copy, so that a drift never writes into the real folder.
    const copy = path.join(await mkdtemp(path.join(os.tmpdir(), 'tern-migrations-')), 'migrations');
    tempDirs.push(path.dirname(copy));
    await cp(DEFAULT_MIGRATIONS_DIR, copy, { recursive: true });
    const drift = await createMigration('drift_check', {
      schemaPath: DEFAULT_SCHEMA_PATH,
      migrationsDir: copy,
      databaseUrl: url,
    });
    expect(
      drift,
      'prisma/schema.prisma has changes no migration covers: run npm run db:migration -- NAME',
    ).toBeNull();
  });
});
