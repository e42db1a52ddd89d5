import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from './support/database.js';
import { REDIS_URL } from './support/server-url.js';
import { deleteRedisKeys } from './support/tern.js';
import {
  apiRequest,
  createAccountWithCli,
  FAST_RECOVERY_ENV,
  freePort,
  killAll,
  logIn,
  pollUntil,
  startTernProcess,
} from './support/tern-processes.js';

// The statistics are kept by the statements that change the messages, so a worker killed in the
// middle of its batches leaves them equal to a count of the messages, whatever it was doing.

const MESSAGES = 300;
let database: TestDatabase | null = null;
const redisPrefix = `tern_stats_${randomBytes(6).toString('hex')}`;

afterAll(async () => {
  await killAll();
  await database?.drop();
  await deleteRedisKeys(redisPrefix);
});

const COUNTED = `
  SELECT date_trunc('hour', created_at) AS hour, COALESCE(country, '') AS country, COALESCE(carrier, '') AS carrier,
    count(*)::int AS messages, sum(segments)::int AS segments,
    (count(*) FILTER (WHERE status = 'queued'))::int AS queued, (count(*) FILTER (WHERE status = 'sent'))::int AS sent,
    (count(*) FILTER (WHERE status = 'delivered'))::int AS delivered, (count(*) FILTER (WHERE status = 'failed'))::int AS failed,
    (SELECT count(*)::int FROM inbound_messages i WHERE i.message_id = ANY(array_agg(m.id))) AS replies
  FROM messages m GROUP BY 1, 2, 3 ORDER BY 1, 2, 3`;

const ROLLED_UP = `
  SELECT date_trunc('hour', bucket) AS hour, country, carrier, sum(messages)::int AS messages, sum(segments)::int AS segments,
    sum(queued)::int AS queued, sum(sent)::int AS sent, sum(delivered)::int AS delivered, sum(failed)::int AS failed,
    sum(replies)::int AS replies
  FROM message_stats GROUP BY 1, 2, 3 HAVING sum(messages) > 0 OR sum(replies) > 0 ORDER BY 1, 2, 3`;

it('equal a count of the messages after a worker is killed in the middle of its batches', async () => {
  database = await createTestDatabase();
  const pool = new pg.Pool({ connectionString: database.directUrl, max: 2 });
  pool.on('error', () => undefined);
  const port = await freePort();
  const env = {
    DATABASE_URL: database.url,
    REDIS_URL,
    REDIS_PREFIX: redisPrefix,
    JWT_SECRET: 'stats-durability-secret-of-at-least-32-bytes',
    DEMO_ACCOUNT: 'false',
    HOST: '127.0.0.1',
    ...FAST_RECOVERY_ENV,
    SIMULATOR_DELAY_MS: '100',
  };
  await startTernProcess('api', { ...env, PORT: String(port) });
  const baseUrl = `http://127.0.0.1:${port}`;
  const token = await logIn(baseUrl, await createAccountWithCli(env));
  const worker = await startTernProcess('worker', env);
  // Numbers ending 0001 fail and 0002 are answered; the rest are delivered.
  const numbers = Array.from({ length: MESSAGES }, (_, index) => {
    const serial = String(index).padStart(3, '0');
    return [`44770${serial}0001`, `35191${serial}0002`, `351912345${serial}`][index % 3]!;
  });
  const sending = Promise.all(
    numbers.map((to) => apiRequest(baseUrl, 'POST', '/v1/messages/send', { to, message: 'Counted' }, token)),
  );
  await pollUntil(
    'the worker to be half-way',
    async () => {
      const { rows } = await pool.query(`SELECT count(*)::int AS n FROM messages WHERE status <> 'queued'`);
      return rows[0].n >= 20 ? true : undefined;
    },
    { timeoutMs: 30_000, intervalMs: 20 },
  );
  expect((await worker.stop('SIGKILL')).signal).toBe('SIGKILL');
  const answers = await sending;
  expect(answers.every((answer) => answer.status === 202)).toBe(true);
  const { rows: midway } = await pool.query(
    `SELECT count(*)::int AS n FROM messages WHERE status IN ('delivered', 'failed')`,
  );
  expect(midway[0].n).toBeLessThan(MESSAGES);
  await expectRollupsEqualCounts(pool);

  await startTernProcess('worker', env);
  await pollUntil(
    'every message to end',
    async () => {
      const { rows: open } = await pool.query(
        `SELECT count(*)::int AS n FROM messages WHERE status IN ('queued', 'sent')`,
      );
      return open[0].n === 0 ? true : undefined;
    },
    { timeoutMs: 60_000 },
  );
  await expectRollupsEqualCounts(pool);
  await pool.end();
}, 120_000);

const COUNTED_PER_HOUR = `
  SELECT date_trunc('hour', created_at) AS hour, count(*)::int AS messages, sum(segments)::int AS segments,
    (count(*) FILTER (WHERE status = 'delivered'))::int AS delivered, (count(*) FILTER (WHERE status = 'failed'))::int AS failed
  FROM messages GROUP BY 1 ORDER BY 1`;

const TOTALS_PER_HOUR = `
  SELECT date_trunc('hour', bucket) AS hour, sum(messages)::int AS messages, sum(segments)::int AS segments,
    sum(delivered)::int AS delivered, sum(failed)::int AS failed
  FROM message_stat_totals GROUP BY 1 ORDER BY 1`;

/**
 * Both rollups against a count of the messages, read in one snapshot: replies still arrive after
 * every message ended, and one committed between two reads would set them apart.
 */
async function expectRollupsEqualCounts(pool: pg.Pool) {
  const client = await pool.connect();
  try {
    await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
    expect(await rows(client, ROLLED_UP)).toEqual(await rows(client, COUNTED));
    expect(await rows(client, TOTALS_PER_HOUR)).toEqual(await rows(client, COUNTED_PER_HOUR));
  } finally {
    await client.query('ROLLBACK');
    client.release();
  }
}

async function rows(client: pg.PoolClient, sql: string) {
  const result = await client.query(sql);
  return result.rows.map((row) => ({ ...row, hour: new Date(row.hour).toISOString() }));
}
