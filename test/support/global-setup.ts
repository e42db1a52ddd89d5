import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { DEFAULT_MIGRATIONS_DIR, migrateDatabase } from '../../src/db/migrations.js';
import { withDatabase } from '../../src/db/schema-engine.js';
import { startPgBouncer } from './pgbouncer.js';
import { SERVER_URL } from './server-url.js';
import { ROOT } from './tern-processes.js';

declare module 'vitest' {
  export interface ProvidedContext {
    templateDatabase: string;
    /** The port of the PgBouncer every test database goes through; 0 for none. */
    pgbouncerPort: number;
  }
}

/** A name that changes whenever a migration does, so a stale template is never reused. */
function templateName(): string {
  const hash = createHash('sha256');
  for (const entry of readdirSync(DEFAULT_MIGRATIONS_DIR, { recursive: true, withFileTypes: true }).sort(
    (a, b) => join(a.parentPath, a.name).localeCompare(join(b.parentPath, b.name)),
  )) {
    if (!entry.isFile()) continue;
    hash.update(entry.name).update(readFileSync(join(entry.parentPath, entry.name)));
  }
  return `tern_template_${hash.digest('hex').slice(0, 16)}`;
}

/**
 * Migrates one template database per version of the migrations; every test file then gets a
 * copy of it in milliseconds (CREATE DATABASE … TEMPLATE) instead of migrating its own.
 */
export async function setup(project: TestProject) {
  // Tern's child processes and the CLI run compiled code, and /dashboard is served from its bundle,
  // as after `npm start`: dist/ is built here when a source is newer, once for the whole run.
  const build = spawnSync(process.execPath, [join(ROOT, 'scripts', 'build-if-stale.mjs')], {
    cwd: ROOT,
    stdio: 'inherit',
  });
  if (build.status !== 0) throw new Error(`scripts/build-if-stale.mjs exited with ${build.status}`);
  const name = templateName();
  const admin = new pg.Client({ connectionString: withDatabase(SERVER_URL, 'postgres') });
  await admin.connect();
  try {
    const { rowCount } = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1 AND datistemplate', [
      name,
    ]);
    if (!rowCount) {
      await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      await migrateDatabase(withDatabase(SERVER_URL, name));
      await admin.query(`ALTER DATABASE "${name}" WITH IS_TEMPLATE true`);
    }
  } finally {
    await admin.end();
  }
  project.provide('templateDatabase', name);
  // `npm run test:pgbouncer`: the same tests, with Tern's DATABASE_URL through PgBouncer.
  const bouncer = process.env.TEST_THROUGH_PGBOUNCER === 'true' ? await startPgBouncer() : null;
  project.provide('pgbouncerPort', bouncer?.port ?? 0);
  return async () => {
    if (!bouncer) return;
    try {
      // A run that was meant to go through the bouncer and did not would prove nothing.
      const transactions = await bouncer.transactions();
      if (transactions < 1_000)
        throw new Error(`only ${transactions} transactions went through PgBouncer: the tests bypassed it`);
      console.log(`PgBouncer carried ${transactions} transactions in transaction pooling`);
    } finally {
      await bouncer.stop();
    }
  };
}
