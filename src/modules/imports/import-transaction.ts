import type pg from 'pg';
import { withTransactionClient } from '../../db/transaction-client.js';
import type { Prisma } from '../../generated/prisma/client.js';
import type { Clock } from '../../lib/clock.js';
import { newIds } from '../../lib/ids.js';
import { databaseTimeZones } from '../../lib/time-zone.js';
import type { ImportLimits } from './contact-imports.js';
import type { ContactRow, RowError } from './contact-rows.js';
import { importJobMayMove, importJobSourcesOf } from './import-job-transitions.js';
import type { FileFormat, ImportOptions } from './import-options.js';
import { type ParsedFile, parseInThread } from './import-parser.js';

/** An import of 100,000 rows takes seconds; this only ends a transaction left hanging by a stuck worker. */
const IDLE_IN_TRANSACTION_MS = 10 * 60_000;
export interface RunnableJob {
  id: string;
  accountId: string;
  campaignId: string;
  fileFormat: string;
  options: Prisma.JsonValue;
}

export interface ImportOutcome {
  rows: number;
  imported: number;
  duplicates: number;
  invalid: number;
  errors: RowError[];
}

export interface ImportRun {
  pool: pg.Pool;
  clock: Clock;
  limits: ImportLimits;
  job: RunnableJob;
  /** The job's file, copied to this process's disk for the parser. */
  path: string;
  /** Called with the rows read so far, while the file is read. */
  onProgress: (rows: number) => Promise<void>;
}

/** Commits what `work` did, unless it throws or answers null. */
function inTransaction<T>(
  pool: pg.Pool,
  work: (client: pg.PoolClient) => Promise<T | null>,
): Promise<T | null> {
  return withTransactionClient(pool, async (client) => {
    await client.query('BEGIN');
    await client.query(`SET LOCAL idle_in_transaction_session_timeout = ${IDLE_IN_TRANSACTION_MS}`);
    const result = await work(client);
    await client.query(result === null ? 'ROLLBACK' : 'COMMIT');
    return result;
  });
}

/**
 * Reads the file in the parser thread, stages its rows in a temporary table and inserts them
 * into `contacts` in one statement, all in one transaction. Null when another run of the job
 * completed it meanwhile (nothing is committed then).
 */
export function importInOneTransaction(run: ImportRun): Promise<ImportOutcome | null> {
  return inTransaction(run.pool, (client) => importFile(client, run));
}

async function importFile(client: pg.PoolClient, run: ImportRun): Promise<ImportOutcome | null> {
  const { job, clock } = run;
  await client.query(
    'CREATE TEMP TABLE import_staging (id text, phone text, name text, email text, document text, tags text, timezone text) ON COMMIT DROP',
  );
  const { file, staged } = await stageFile(client, run);

  // Imports into one campaign take their turn here, which also makes a second run of this
  // job (a worker thought dead that was not) wait, then see the first one's result.
  await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`contact-import:${job.campaignId}`]);
  const current = await client.query<{ status: string }>(
    'SELECT status::text AS status FROM import_jobs WHERE id = $1',
    [job.id],
  );
  if (!importJobMayMove(current.rows[0]?.status, 'completed')) return null;

  const now = clock.now();
  // Only this statement touches `contacts`, so the campaign is held for a moment, not for the whole read.
  const inserted = await client.query(
    `INSERT INTO contacts (id, account_id, campaign_id, phone, name, email, document, tags, timezone, import_job_id, created_at)
       SELECT id, $1, $2, phone, name, email, document, string_to_array(tags, '|'), timezone, $3, $4
       FROM import_staging
       ON CONFLICT (campaign_id, phone) DO NOTHING`,
    [job.accountId, job.campaignId, job.id, now],
  );
  const imported = inserted.rowCount ?? 0;
  const outcome: ImportOutcome = {
    rows: file.rows,
    imported,
    duplicates: file.duplicates + (staged - imported),
    invalid: file.invalid,
    errors: file.errors,
  };
  await completeJob(client, job.id, outcome, now);
  await client.query('DELETE FROM uploads WHERE id = $1', [job.id]);
  return outcome;
}

/** Reads the file in the parser thread into the staging table: one batch is written while the thread reads the next. */
async function stageFile(
  client: pg.PoolClient,
  { job, path, limits, onProgress }: ImportRun,
): Promise<{ file: ParsedFile; staged: number }> {
  let staged = 0;
  let staging: Promise<unknown> = Promise.resolve();
  const parsing = parseInThread({
    path,
    format: job.fileFormat as FileFormat,
    options: job.options as unknown as ImportOptions,
    maxInflatedBytes: limits.maxInflatedBytes,
    databaseTimeZones: databaseTimeZones(),
  });
  try {
    let step = await parsing.next();
    while (!step.done) {
      const message = step.value;
      if (message.kind === 'batch') {
        await staging;
        staging = stage(client, message.contacts);
        staging.catch(() => undefined);
        staged += message.contacts.length;
      } else {
        await onProgress(message.rows);
      }
      step = await parsing.next();
    }
    await staging;
    return { file: step.value, staged };
  } finally {
    // Stops the thread if the database failed first.
    await parsing.return(undefined as never);
  }
}

/**
 * Moves the job to `completed` if the transition table lets it; otherwise the transaction, and
 * the contacts it inserted, are rolled back.
 */
async function completeJob(client: pg.PoolClient, jobId: string, outcome: ImportOutcome, now: Date) {
  const { rowCount } = await client.query(
    `UPDATE import_jobs SET status = 'completed', total_rows = $2, processed = $2, imported = $3, duplicates = $4, invalid = $5,
         row_errors = $6, finished_at = $7
       WHERE id = $1 AND status = ANY($8::"ImportStatus"[])`,
    [
      jobId,
      outcome.rows,
      outcome.imported,
      outcome.duplicates,
      outcome.invalid,
      JSON.stringify(outcome.errors),
      now,
      importJobSourcesOf('completed'),
    ],
  );
  if (rowCount !== 1) throw new Error(`import job ${jobId} may not move to completed from its status`);
}

/** Stages a batch of contacts in the run's temporary table. */
async function stage(client: pg.PoolClient, contacts: ContactRow[]): Promise<unknown> {
  if (contacts.length === 0) return;
  // Tags travel joined by '|', which no tag contains: the file's tags were split on it.
  return client.query(
    `INSERT INTO import_staging (id, phone, name, email, document, tags, timezone)
     SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[])`,
    [
      newIds('cnt', contacts.length),
      contacts.map((c) => c.phone),
      contacts.map((c) => c.name ?? null),
      contacts.map((c) => c.email ?? null),
      contacts.map((c) => c.document ?? null),
      contacts.map((c) => (c.tags ?? []).join('|')),
      contacts.map((c) => c.timezone ?? null),
    ],
  );
}
