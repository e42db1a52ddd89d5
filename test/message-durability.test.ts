import { randomBytes } from 'node:crypto';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { type MessageSendJob, messageSendQueue } from '../src/jobs/message-send.job.js';
import { createTestDatabase, type TestDatabase } from './support/database.js';
import { REDIS_URL } from './support/server-url.js';
import { deleteRedisKeys } from './support/tern.js';
import {
  apiRequest,
  type ChildHandle,
  createAccountWithCli,
  FAST_RECOVERY_ENV,
  freePort,
  killAll,
  logIn,
  pollUntil,
  recordCarrierHandovers,
  startRedisServer,
  startTernProcess,
  warnings,
  withDeadline,
} from './support/tern-processes.js';

// The durability promise of a send, checked against real processes that die: a 202 means the
// message is in PostgreSQL, and whatever happens to a worker or to Redis afterwards, it reaches
// the carrier exactly once and ends delivered.

const MESSAGES = 20;
const DELIVERY_TIMEOUT_MS = 20_000;
// Room for starting four processes on a busy two-core machine, so that a stuck message fails
// on DELIVERY_TIMEOUT_MS, which says which messages and why, rather than on the test's timeout.
const TEST_TIMEOUT_MS = DELIVERY_TIMEOUT_MS + 30_000;
const JWT_SECRET = 'durability-test-secret-of-at-least-32-bytes';

// The lease is well above a carrier call of SUBMIT_LATENCY_MS, so a live claim is never taken over.
const RECOVERY_ENV = { ...FAST_RECOVERY_ENV, SIMULATOR_DELAY_MS: '50' };
const SUBMIT_LATENCY_MS = 800;
const HELD = 3;

interface Fixture {
  database: TestDatabase;
  pool: pg.Pool;
  redisPrefix: string;
  /** Its keys are on the shared Redis and must be deleted; a Redis of the test's own dies with it. */
  sharedRedis: boolean;
}

let fixture: Fixture | null = null;
const lockers: pg.Client[] = [];

afterEach(async () => {
  await killAll();
  await Promise.all(lockers.splice(0).map((client) => client.end().catch(() => undefined)));
  if (!fixture) return;
  const { database, pool, redisPrefix, sharedRedis } = fixture;
  fixture = null;
  await pool.end().catch(() => undefined);
  await database.drop();
  if (sharedRedis) await deleteRedisKeys(redisPrefix);
});

async function setUp(options: { sharedRedis: boolean }): Promise<Fixture> {
  const database = await createTestDatabase();
  const pool = new pg.Pool({ connectionString: database.url, max: 2 });
  // pool.end() resolves before its sockets close, so the forced DROP DATABASE of the clean-up
  // can still terminate one; unheard, that error would be thrown from the pool.
  pool.on('error', () => undefined);
  fixture = {
    database,
    pool,
    redisPrefix: `tern_dur_${randomBytes(6).toString('hex')}`,
    sharedRedis: options.sharedRedis,
  };
  await recordCarrierHandovers(fixture.pool);
  return fixture;
}

function ternEnv(f: Fixture, redisUrl: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    DATABASE_URL: f.database.url,
    REDIS_URL: redisUrl,
    REDIS_PREFIX: f.redisPrefix,
    JWT_SECRET,
    DEMO_ACCOUNT: 'false',
    HOST: '127.0.0.1',
    ...RECOVERY_ENV,
    ...extra,
  };
}

/** Looks at the send queue through BullMQ itself rather than at its key names. */
async function inspectQueue<T>(
  redisUrl: string,
  prefix: string,
  look: (queue: Queue<MessageSendJob>) => Promise<T>,
): Promise<T> {
  const connection = new Redis(redisUrl, { maxRetriesPerRequest: 1, retryStrategy: () => null });
  connection.on('error', () => undefined);
  const queue = new Queue<MessageSendJob>(messageSendQueue.name, { connection, prefix });
  try {
    return await withDeadline(look(queue), 5_000, 'the send queue to answer');
  } finally {
    await queue.close().catch(() => undefined);
    connection.disconnect();
  }
}

let numberSeed = 10;
/** Numbers the simulator delivers: those ending 0001 fail and 0002 reply. */
function nextNumber(): string {
  numberSeed += 1;
  return `3519123${String(numberSeed).padStart(5, '0')}`;
}

/** Sends `count` messages at once; each must be accepted with 202. Returns their ids. */
async function sendMessages(baseUrl: string, token: string, count: number): Promise<string[]> {
  const responses = await Promise.all(
    Array.from({ length: count }, (_, index) =>
      apiRequest(
        baseUrl,
        'POST',
        '/v1/messages/send',
        { to: nextNumber(), message: `durability ${index}` },
        token,
      ),
    ),
  );
  for (const response of responses) {
    expect(response.status, JSON.stringify(response.body)).toBe(202);
    expect(response.body).toMatchObject({ message: expect.stringMatching(/^msg_/), status: 'queued' });
  }
  return responses.map((response) => response.body.message as string);
}

/** Backends of the database blocked on a row lock: claims waiting for the test's lock. */
async function claimsWaitingForLocks(pool: pg.Pool, database: string): Promise<number> {
  const { rows } = await pool.query<{ waiting: number }>(
    `SELECT count(*)::int AS waiting FROM pg_stat_activity WHERE datname = $1 AND wait_event_type = 'Lock' AND query ILIKE '%claimed_at%'`,
    [database],
  );
  return rows[0]!.waiting;
}

interface MessageRow {
  id: string;
  status: string;
  claimed: boolean;
  carrier_message_id: string | null;
  error_code: string | null;
  submissions: number;
  submitted_id: string | null;
  handovers: number;
}

async function messageStates(pool: pg.Pool): Promise<MessageRow[]> {
  const { rows } = await pool.query<MessageRow>(`
    SELECT m.id, m.status::text AS status, m.claimed_at IS NOT NULL AS claimed, m.carrier_message_id, m.error_code,
      (SELECT count(*)::int FROM simulated_submissions s WHERE s.reference = m.id) AS submissions,
      (SELECT s.carrier_message_id FROM simulated_submissions s WHERE s.reference = m.id) AS submitted_id,
      (SELECT count(*)::int FROM test_carrier_handovers h WHERE h.reference = m.id) AS handovers
    FROM messages m ORDER BY m.id`);
  return rows;
}

function summary(rows: MessageRow[]): string {
  const byStatus: Record<string, number> = {};
  for (const row of rows) byStatus[row.status] = (byStatus[row.status] ?? 0) + 1;
  return JSON.stringify(byStatus);
}

async function waitUntilAllDelivered(
  f: Fixture,
  redisUrl: string,
  ids: string[],
  workers: ChildHandle[],
): Promise<MessageRow[]> {
  return pollUntil(
    `${ids.length} messages to be delivered`,
    async () => {
      const rows = await messageStates(f.pool);
      return rows.length === ids.length && rows.every((row) => row.status === 'delivered') ? rows : undefined;
    },
    {
      timeoutMs: DELIVERY_TIMEOUT_MS,
      describe: async () => {
        const rows = await messageStates(f.pool);
        const pending = rows.filter((row) => row.status !== 'delivered');
        const jobs = await inspectQueue(redisUrl, f.redisPrefix, async (queue) => {
          const states = new Map<string, string>();
          for (const state of ['waiting', 'active', 'delayed', 'failed', 'completed'] as const) {
            for (const job of await queue.getJobs([state]))
              for (const id of job.data.messageIds) states.set(id, state);
          }
          return pending.map((row) => states.get(row.id) ?? 'no job');
        }).catch((error: unknown) => pending.map(() => `(queue not readable: ${String(error)})`));
        const details = pending.map((row, index) => ({
          id: row.id,
          status: row.status,
          claimed: row.claimed,
          submissions: row.submissions,
          job: jobs[index],
        }));
        const withoutCarrierId = rows.filter(
          (row) => row.status === 'delivered' && row.carrier_message_id === null,
        ).length;
        return (
          `${summary(rows)}; delivered without the carrier's id: ${withoutCarrierId}; ` +
          `not delivered: ${JSON.stringify(details)}\n${workers.map(warnings).join('\n')}`
        );
      },
    },
  );
}

/** Delivered, and the carrier holds exactly one submission, whose id the message carries. */
async function expectEachSentExactlyOnce(pool: pg.Pool, ids: string[]): Promise<MessageRow[]> {
  // The carrier's id may be written just after the delivery report moved the status; give it a
  // moment rather than fail on the order of two writes, then show whatever is still missing.
  const rows = await pollUntil(
    "every delivered message to carry the carrier's id",
    async () => {
      const current = await messageStates(pool);
      return current.every((row) => row.carrier_message_id !== null) ? current : undefined;
    },
    { timeoutMs: 2_000 },
  ).catch(() => messageStates(pool));
  expect(rows.map((row) => row.id)).toEqual([...ids].sort());
  for (const row of rows) {
    expect(row, row.id).toMatchObject({
      status: 'delivered',
      error_code: null,
      submissions: 1,
      carrier_message_id: row.submitted_id,
    });
    expect(row.carrier_message_id, row.id).toMatch(/^sim_/);
  }
  const { rows: totals } = await pool.query<{ submissions: number }>(
    'SELECT count(*)::int AS submissions FROM simulated_submissions',
  );
  expect(totals[0]!.submissions).toBe(ids.length);
  return rows;
}

describe('a message accepted with 202', () => {
  it(
    'is sent exactly once and delivered after its worker is killed between claiming and recording the send',
    async () => {
      const f = await setUp({ sharedRedis: true });
      const port = await freePort();
      const baseUrl = `http://127.0.0.1:${port}`;
      const env = ternEnv(f, REDIS_URL);
      await startTernProcess('api', { ...env, PORT: String(port) });
      const token = await logIn(baseUrl, await createAccountWithCli(env));
      const ids = await sendMessages(baseUrl, token, MESSAGES);

      // A worker can also die before its claim is written. Holding these rows keeps their jobs
      // active in the worker, waiting inside the claim, when it is killed.
      const held = ids.slice(-HELD);
      const locker = new pg.Client({ connectionString: f.database.url });
      locker.on('error', () => undefined);
      lockers.push(locker);
      await locker.connect();
      await locker.query('BEGIN');
      await locker.query('SELECT id FROM messages WHERE id = ANY($1) FOR UPDATE', [held]);

      const firstWorker = await startTernProcess('worker', {
        ...env,
        SIMULATOR_SUBMIT_LATENCY_MS: String(SUBMIT_LATENCY_MS),
        // No report falls due before the kill, so the dead worker cannot have reported or
        // locked one: what happens next is the send path's doing.
        SIMULATOR_DELAY_MS: String(SUBMIT_LATENCY_MS * 4),
      });

      // Inside the window: the carrier has the message, PostgreSQL does not know it was sent.
      const inWindow = (rows: MessageRow[]) =>
        rows.filter((row) => row.status === 'queued' && row.claimed && row.submissions === 1);
      await pollUntil(
        'messages inside the carrier call, and the held ones waiting in their claim',
        async () => {
          const [rows, waiting] = await Promise.all([
            messageStates(f.pool),
            claimsWaitingForLocks(f.pool, f.database.name),
          ]);
          // The recovery sweep may hand the held (unclaimed, old enough) rows to a second job, whose claims wait too.
          return inWindow(rows).length > 0 && waiting >= HELD ? true : undefined;
        },
        { timeoutMs: 10_000, intervalMs: 50, describe: async () => summary(await messageStates(f.pool)) },
      );
      expect((await firstWorker.stop('SIGKILL')).signal).toBe('SIGKILL');

      const atDeath = await messageStates(f.pool);
      const interrupted = inWindow(atDeath);
      expect(interrupted.length).toBeGreaterThan(0);
      expect(
        atDeath
          .filter((row) => held.includes(row.id))
          .every((row) => row.status === 'queued' && row.submissions === 0),
      ).toBe(true);
      await locker.query('ROLLBACK');

      const secondWorker = await startTernProcess('worker', env);
      const started = Date.now();
      await waitUntilAllDelivered(f, REDIS_URL, ids, [secondWorker]);
      console.info(
        `worker killed with ${interrupted.length}/${ids.length} messages inside the carrier call and ${HELD} inside their claim ` +
          `(${summary(atDeath)}); all delivered ${Date.now() - started} ms after a new worker started`,
      );

      const rows = await expectEachSentExactlyOnce(f.pool, ids);
      // A message whose carrier call the dead worker began may be submitted again, which is safe
      // only because the simulator takes the same reference twice as one submission; the held
      // ones never reached the carrier before, so they are handed over once.
      for (const row of rows) {
        if (held.includes(row.id)) expect(row.handovers, row.id).toBe(1);
        else expect(row.handovers, row.id).toBeLessThanOrEqual(2);
      }
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'is sent exactly once and delivered after Redis restarts with its job, or while Redis is down',
    async () => {
      const f = await setUp({ sharedRedis: false });
      const [apiPort, redisPort] = await Promise.all([freePort(), freePort()]);
      let ownRedis = await startRedisServer(redisPort);
      const baseUrl = `http://127.0.0.1:${apiPort}`;
      const env = ternEnv(f, ownRedis.url);
      const [, worker] = await Promise.all([
        startTernProcess('api', { ...env, PORT: String(apiPort) }),
        startTernProcess('worker', env),
      ]);
      const token = await logIn(baseUrl, await createAccountWithCli(env));

      // Without a worker the jobs stay in Redis, so the restart is what loses them.
      expect((await worker.stop('SIGTERM')).code).toBe(0);
      const queuedIds = await sendMessages(baseUrl, token, MESSAGES);
      // Concurrent sends share jobs; every message is in one.
      const waiting = await inspectQueue(ownRedis.url, f.redisPrefix, (queue) => queue.getWaiting());
      expect(waiting.flatMap((job) => job.data.messageIds).sort()).toEqual([...queuedIds].sort());

      await ownRedis.handle.stop('SIGKILL');
      // The message is committed before the enqueue, so Redis being away must not cost the 202.
      const downAt = Date.now();
      const whileDownIds = await sendMessages(baseUrl, token, 3);
      const downMs = Date.now() - downAt;
      ownRedis = await startRedisServer(redisPort);

      const ids = [...queuedIds, ...whileDownIds];
      expect(summary(await messageStates(f.pool))).toBe(JSON.stringify({ queued: ids.length }));

      const newWorker = await startTernProcess('worker', env);
      const started = Date.now();
      await waitUntilAllDelivered(f, ownRedis.url, ids, [newWorker]);
      console.info(
        `3 sends answered 202 in ${downMs} ms with Redis down; after the Redis restart, ` +
          `${ids.length} messages delivered ${Date.now() - started} ms after a worker started`,
      );

      const rows = await expectEachSentExactlyOnce(f.pool, ids);
      // No worker died mid-call here, so nothing may reach the carrier a second time.
      for (const row of rows) expect(row.handovers, row.id).toBe(1);
    },
    TEST_TIMEOUT_MS,
  );
});
