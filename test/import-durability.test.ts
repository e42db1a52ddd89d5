import { randomBytes } from 'node:crypto';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterEach, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from './support/database.js';
import { REDIS_URL } from './support/server-url.js';
import { deleteRedisKeys } from './support/tern.js';
import {
  FAST_RECOVERY_ENV,
  freePort,
  killAll,
  pollUntil,
  runCli,
  startTernProcess,
  transcripts,
} from './support/tern-processes.js';

// The all-or-nothing promise of an import, checked against a worker process that is killed
// while its transaction holds every row of the file but has not committed them.

const ROWS = 30_000;
const JWT_SECRET = 'import-durability-secret-of-at-least-32-bytes';

let cleanUp: (() => Promise<void>) | null = null;

afterEach(async () => {
  await killAll();
  await cleanUp?.();
  cleanUp = null;
});

async function call(
  url: string,
  init: RequestInit & { token?: string },
): Promise<{ status: number; body: any }> {
  const headers = new Headers(init.headers);
  if (init.token) headers.set('authorization', `Bearer ${init.token}`);
  let response: Response;
  try {
    response = await fetch(url, { ...init, headers, signal: AbortSignal.timeout(10_000) });
  } catch (error) {
    throw new Error(`${init.method ?? 'GET'} ${url}: ${String(error)}\n${transcripts()}`);
  }
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : null };
}

const json = (body: unknown) => ({
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify(body),
});

it('imports nothing when its worker is killed mid-import, then everything once another worker retries it', async () => {
  const database: TestDatabase = await createTestDatabase();
  const pool = new pg.Pool({ connectionString: database.url, max: 3 });
  pool.on('error', () => undefined);
  const redisPrefix = `tern_imp_${randomBytes(6).toString('hex')}`;
  // Each process has a directory of its own, as on machines of their own: the upload reaches
  // the worker through PostgreSQL.
  const apiDir = await mkdtemp(join(tmpdir(), 'tern-import-durability-api-'));
  const workerDir = await mkdtemp(join(tmpdir(), 'tern-import-durability-worker-'));
  const retryDir = await mkdtemp(join(tmpdir(), 'tern-import-durability-retry-'));
  cleanUp = async () => {
    await pool.end().catch(() => undefined);
    await database.drop();
    await deleteRedisKeys(redisPrefix);
    for (const dir of [apiDir, workerDir, retryDir]) await rm(dir, { recursive: true, force: true });
  };
  const env = {
    DATABASE_URL: database.url,
    REDIS_URL,
    REDIS_PREFIX: redisPrefix,
    JWT_SECRET,
    DEMO_ACCOUNT: 'false',
    HOST: '127.0.0.1',
    ...FAST_RECOVERY_ENV,
  };
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  await startTernProcess('api', { ...env, PORT: String(port), IMPORT_DIR: apiDir });
  const worker = await startTernProcess('worker', { ...env, IMPORT_DIR: workerDir });

  const email = `import-${randomBytes(4).toString('hex')}@example.com`;
  await runCli(['accounts', 'create', '--email', email, '--password', 'import durability'], env);
  const token = (await call(`${base}/v1/auth/login`, json({ email, password: 'import durability' }))).body
    .token as string;
  const campaign = (await call(`${base}/v1/campaigns`, { ...json({ name: 'Durable import' }), token })).body
    .campaign as string;

  const csv = ['phone', ...Array.from({ length: ROWS }, (_, i) => `55119${String(30_000_000 + i)}`)].join(
    '\n',
  );
  const form = new FormData();
  form.append('phone_column', 'phone');
  form.append('file', new Blob([csv]), 'durable.csv');
  const accepted = await call(`${base}/v1/campaigns/${campaign}/contacts/import`, {
    method: 'POST',
    body: form,
    token,
  });
  expect(accepted.status, JSON.stringify(accepted.body)).toBe(202);
  // Nothing of the file waits on the API's disk, which another machine could not read.
  expect(await readdir(apiDir)).toEqual([]);
  const job = accepted.body.job as string;
  const readJob = async () =>
    (await call(`${base}/v1/campaigns/${campaign}/contacts/import/${job}`, { token })).body;

  // Holding the campaign row stops the worker inside its final INSERT: every row written, none committed.
  const holder = await pool.connect();
  await holder.query('BEGIN');
  await holder.query('SELECT 1 FROM campaigns WHERE id = $1 FOR UPDATE', [campaign]);
  const insertWaiting = async () => {
    const { rows } = await pool.query<{ pid: number }>(
      `SELECT pid FROM pg_stat_activity WHERE datname = $1 AND wait_event_type = 'Lock' AND query LIKE 'INSERT INTO contacts%'`,
      [database.name],
    );
    return rows[0]?.pid;
  };
  const importer = await pollUntil('the import to wait inside its INSERT', insertWaiting, {
    timeoutMs: 20_000,
    describe: transcripts,
  });
  expect(await readJob()).toMatchObject({ status: 'processing', processed: ROWS, imported: 0 });

  await worker.stop('SIGKILL');
  await holder.query('ROLLBACK');
  holder.release();
  // The dead worker's backend finishes its statement, finds its client gone and rolls back.
  await pollUntil(
    "the killed worker's transaction to end",
    async () =>
      (await pool.query('SELECT 1 FROM pg_stat_activity WHERE pid = $1', [importer])).rowCount === 0
        ? true
        : undefined,
    { timeoutMs: 10_000 },
  );
  expect((await pool.query('SELECT count(*)::int AS n FROM contacts')).rows[0].n).toBe(0);
  expect(await readJob()).toMatchObject({ status: 'processing', imported: 0 });

  await startTernProcess('worker', { ...env, IMPORT_DIR: retryDir });
  const done = await pollUntil(
    'the retried import to complete',
    async () => {
      const body = await readJob();
      return body.status === 'processing' ? undefined : body;
    },
    { timeoutMs: 30_000, describe: transcripts },
  );
  expect(done).toMatchObject({
    status: 'completed',
    total_rows: ROWS,
    processed: ROWS,
    imported: ROWS,
    duplicates: 0,
    invalid: 0,
  });
  const stored = await pool.query(
    'SELECT count(*)::int AS n, count(DISTINCT phone)::int AS phones FROM contacts WHERE campaign_id = $1',
    [campaign],
  );
  expect(stored.rows[0]).toEqual({ n: ROWS, phones: ROWS });
  expect((await pool.query('SELECT attempts FROM import_jobs WHERE id = $1', [job])).rows[0].attempts).toBe(
    2,
  );
  expect((await pool.query('SELECT count(*)::int AS n FROM uploads')).rows[0].n).toBe(0);
  expect((await pool.query('SELECT count(*)::int AS n FROM upload_chunks')).rows[0].n).toBe(0);
  await pollUntil(
    "the retrying worker's copy of the file to be removed",
    async () => ((await readdir(retryDir)).length === 0 ? true : undefined),
    { timeoutMs: 5_000 },
  );
  expect(await readdir(apiDir)).toEqual([]);
}, 120_000);

it('fails a job with internal_error, importing nothing, when the process running it dies a second time', async () => {
  const database: TestDatabase = await createTestDatabase();
  const pool = new pg.Pool({ connectionString: database.url, max: 3 });
  pool.on('error', () => undefined);
  const redisPrefix = `tern_imp_${randomBytes(6).toString('hex')}`;
  const importDir = await mkdtemp(join(tmpdir(), 'tern-import-deaths-'));
  cleanUp = async () => {
    await pool.end().catch(() => undefined);
    await database.drop();
    await deleteRedisKeys(redisPrefix);
    await rm(importDir, { recursive: true, force: true });
  };
  const env = {
    DATABASE_URL: database.url,
    REDIS_URL,
    REDIS_PREFIX: redisPrefix,
    JWT_SECRET,
    DEMO_ACCOUNT: 'false',
    HOST: '127.0.0.1',
    IMPORT_DIR: importDir,
    ...FAST_RECOVERY_ENV,
  };
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  await startTernProcess('api', { ...env, PORT: String(port) });

  const email = `deaths-${randomBytes(4).toString('hex')}@example.com`;
  await runCli(['accounts', 'create', '--email', email, '--password', 'import durability'], env);
  const token = (await call(`${base}/v1/auth/login`, json({ email, password: 'import durability' }))).body
    .token as string;
  const campaign = (await call(`${base}/v1/campaigns`, { ...json({ name: 'Deadly import' }), token })).body
    .campaign as string;
  const csv = ['phone', ...Array.from({ length: 5_000 }, (_, i) => `55119${String(40_000_000 + i)}`)].join(
    '\n',
  );
  const form = new FormData();
  form.append('phone_column', 'phone');
  form.append('file', new Blob([csv]), 'deadly.csv');
  const accepted = await call(`${base}/v1/campaigns/${campaign}/contacts/import`, {
    method: 'POST',
    body: form,
    token,
  });
  expect(accepted.status, JSON.stringify(accepted.body)).toBe(202);
  const job = accepted.body.job as string;
  const readJob = async () =>
    (await call(`${base}/v1/campaigns/${campaign}/contacts/import/${job}`, { token })).body;

  // A worker dies inside the job: held at its final INSERT by a lock on the campaign row, then killed.
  const holder = await pool.connect();
  const runs = async () =>
    (await pool.query('SELECT attempts FROM import_jobs WHERE id = $1', [job])).rows[0].attempts as number;
  try {
    await holder.query('BEGIN');
    await holder.query('SELECT 1 FROM campaigns WHERE id = $1 FOR UPDATE', [campaign]);
    // A killed worker's backend keeps waiting for its lock, so each run is known by a backend of
    // its own: the first waits in its INSERT, the second for the first's turn at the campaign.
    const seen = new Set<number>();
    for (const run of [1, 2]) {
      const worker = await startTernProcess('worker', env);
      const importer = await pollUntil(
        `run ${run} to wait for a lock with the whole file read`,
        async () => {
          const { rows } = await pool.query<{ pid: number }>(
            `SELECT pid FROM pg_stat_activity WHERE datname = $1 AND wait_event_type = 'Lock'
               AND (query LIKE 'INSERT INTO contacts%' OR query LIKE 'SELECT pg_advisory_xact_lock%')`,
            [database.name],
          );
          return rows.find((row) => !seen.has(row.pid))?.pid;
        },
        { timeoutMs: 30_000, describe: transcripts },
      );
      seen.add(importer);
      expect(await runs()).toBe(run);
      await worker.stop('SIGKILL');
    }
  } finally {
    await holder.query('ROLLBACK');
    holder.release();
  }

  // The third worker finds the job run twice without completing: it fails it rather than run it again.
  await startTernProcess('worker', env);
  const done = await pollUntil(
    'the job to fail',
    async () => {
      const body = await readJob();
      return body.status === 'processing' ? undefined : body;
    },
    { timeoutMs: 30_000, describe: transcripts },
  );
  expect(done).toMatchObject({
    status: 'failed',
    imported: 0,
    error: { code: 'internal_error', message: expect.stringContaining('stopped 2 times') },
  });
  expect(await runs()).toBe(3);
  expect((await pool.query('SELECT count(*)::int AS n FROM contacts')).rows[0].n).toBe(0);
}, 150_000);
