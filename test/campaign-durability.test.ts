import { randomBytes } from 'node:crypto';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type CampaignDispatchJob, campaignDispatchQueue } from '../src/jobs/campaign-dispatch.job.js';
import { createTestDatabase, type TestDatabase } from './support/database.js';
import { REDIS_URL } from './support/server-url.js';
import { deleteRedisKeys } from './support/tern.js';
import {
  type ApiResult,
  apiRequest,
  type ChildHandle,
  createAccountWithCli,
  FAST_RECOVERY_ENV,
  freePort,
  killAll,
  logIn,
  pollUntil,
  recordCarrierHandovers,
  startTernProcess,
  warnings,
  withDeadline,
} from './support/tern-processes.js';

// Issue 5, against real processes that die: at most one message per contact per campaign across
// a worker killed inside a batch transaction, a restart, pause/resume and contacts added
// meanwhile; and the campaign finishes once every contact has its message.

const CONTACTS = 2_000;
const BATCH_SIZE = 100;
const BATCH_DELAY_S = 0.2;
/** Messages that must exist before the kill, so that it lands mid-campaign, not at its start. */
const DISPATCHED_BEFORE_KILL = 300;
const ADDED_WHILE_DEAD = 5;
// From the second worker's start (or the resume) until every contact has its message: the rest
// of the batches take about 10 s on a busy two-core machine, and taking the dispatch over from
// the dead worker should cost RECOVERY_AFTER_MS and a sweep or two, not the 30 s lock of the
// job the dead worker held.
const DISPATCH_TIMEOUT_MS = 30_000;
// Then until the last delivery: sending ~1,500 messages takes 15 to 40 s, depending on the load
// of the machine, which is not what this file is about.
const DELIVERY_TIMEOUT_MS = 60_000;
// Only a net under the deadlines of each step, which say what was awaited.
const TEST_TIMEOUT_MS = DISPATCH_TIMEOUT_MS + DELIVERY_TIMEOUT_MS + 30_000;
const JWT_SECRET = 'campaign-durability-secret-of-at-least-32-bytes';

const RECOVERY_ENV = { ...FAST_RECOVERY_ENV, SIMULATOR_DELAY_MS: '50' };

interface Shared {
  database: TestDatabase;
  pool: pg.Pool;
  env: Record<string, string>;
  baseUrl: string;
  token: string;
}

// One database, API process and account for the file: starting processes is much of the cost on
// two cores, and each test works on a campaign of its own.
let shared: Shared | null = null;
let database: TestDatabase | null = null;
let pool: pg.Pool | null = null;
const redisPrefix = `tern_cmpdur_${randomBytes(6).toString('hex')}`;
const workers: ChildHandle[] = [];
const rivals: pg.Client[] = [];

beforeAll(async () => {
  database = await createTestDatabase();
  pool = new pg.Pool({ connectionString: database.url, max: 3 });
  // pool.end() resolves before its sockets close, so the forced DROP DATABASE of the clean-up
  // can still terminate one; unheard, that error would be thrown from the pool.
  pool.on('error', () => undefined);
  await recordCarrierHandovers(pool);
  const port = await freePort();
  const env = {
    DATABASE_URL: database.url,
    REDIS_URL,
    REDIS_PREFIX: redisPrefix,
    JWT_SECRET,
    DEMO_ACCOUNT: 'false',
    HOST: '127.0.0.1',
    ...RECOVERY_ENV,
  };
  const baseUrl = `http://127.0.0.1:${port}`;
  // The CLI needs only the database, so it runs while the API starts.
  const [credentials] = await Promise.all([
    createAccountWithCli(env),
    startTernProcess('api', { ...env, PORT: String(port) }),
  ]);
  shared = { database, pool, env, baseUrl, token: await logIn(baseUrl, credentials) };
}, 60_000);

afterEach(async () => {
  // A failed test must not leave its worker, its rival transaction or its unfinished campaign
  // (which the next test's worker would go on sending) to the next one.
  await Promise.all(workers.splice(0).map((worker) => worker.stop('SIGKILL').catch(() => undefined)));
  await Promise.all(rivals.splice(0).map((client) => client.end().catch(() => undefined)));
  await pool
    ?.query(`UPDATE campaigns SET status = 'cancelled' WHERE status IN ('running', 'paused')`)
    .catch(() => undefined);
});

afterAll(async () => {
  await killAll();
  await pool?.end().catch(() => undefined);
  await database?.drop();
  await deleteRedisKeys(redisPrefix);
});

function setUp(): Shared {
  if (!shared) throw new Error('the shared API process did not start');
  return shared;
}

function api(s: Shared, method: string, path: string, body?: unknown): Promise<ApiResult> {
  return apiRequest(s.baseUrl, method, path, body, s.token);
}

async function startWorker(s: Shared): Promise<ChildHandle> {
  const worker = await startTernProcess('worker', s.env);
  workers.push(worker);
  return worker;
}

async function killWorker(worker: ChildHandle): Promise<void> {
  expect((await worker.stop('SIGKILL')).signal).toBe('SIGKILL');
}

/** A template and a campaign through /v1, with its contacts inserted in one statement. */
async function createCampaign(s: Shared, name: string, phonePrefix: string): Promise<string> {
  const template = await api(s, 'POST', '/v1/templates', {
    name: `${name} template`,
    content: 'Hi {{name}}',
  });
  expect(template.status, JSON.stringify(template.body)).toBe(201);
  const campaign = await api(s, 'POST', '/v1/campaigns', {
    name,
    template: template.body.template,
    batch_size: BATCH_SIZE,
    delay: BATCH_DELAY_S,
  });
  expect(campaign.status, JSON.stringify(campaign.body)).toBe(201);
  const id = campaign.body.campaign as string;
  // An hour in the past and a millisecond apart: a stable dispatch order, ahead of contacts added
  // later through the API. Numbers end 77, which the simulator delivers without a reply.
  await s.pool.query(
    `INSERT INTO contacts (id, account_id, campaign_id, phone, name, tags, created_at)
     SELECT 'cnt_' || md5(random()::text || i), a.account_id, $1, $2 || lpad(i::text, 6, '0') || '77', 'Contact ' || i, '{}',
       now() - interval '1 hour' + i * interval '1 millisecond'
     FROM generate_series(1, $3::int) AS i, (SELECT account_id FROM campaigns WHERE id = $1) AS a`,
    [id, phonePrefix, CONTACTS],
  );
  return id;
}

async function startCampaign(s: Shared, campaignId: string): Promise<void> {
  const started = await api(s, 'POST', `/v1/campaigns/${campaignId}/start`);
  expect(started.status, JSON.stringify(started.body)).toBe(200);
  expect(started.body.status).toBe('running');
}

/** Contacts added the way a client adds them. */
async function addContactsThroughApi(s: Shared, campaignId: string, phonePrefix: string): Promise<void> {
  for (let i = 1; i <= ADDED_WHILE_DEAD; i += 1) {
    const added = await api(s, 'POST', `/v1/campaigns/${campaignId}/contacts`, {
      phone: `${phonePrefix}${String(i).padStart(6, '0')}88`,
      name: `Late ${i}`,
    });
    expect(added.status, JSON.stringify(added.body)).toBe(201);
  }
}

interface CampaignState {
  status: string;
  dispatched_batches: number;
  contacts: number;
  messages: number;
  delivered: number;
  /** Contacts with more than one message: what the unique index must keep at 0. */
  duplicated: number;
}

async function campaignState(s: Shared, campaignId: string): Promise<CampaignState> {
  const { rows } = await s.pool.query<CampaignState>(
    `SELECT c.status::text AS status, c.dispatched_batches,
       (SELECT count(*)::int FROM contacts WHERE campaign_id = c.id) AS contacts,
       (SELECT count(*)::int FROM messages WHERE campaign_id = c.id) AS messages,
       (SELECT count(*)::int FROM messages WHERE campaign_id = c.id AND status = 'delivered') AS delivered,
       (SELECT count(*)::int FROM (SELECT 1 FROM messages WHERE campaign_id = c.id GROUP BY contact_id HAVING count(*) > 1) d) AS duplicated
     FROM campaigns c WHERE c.id = $1`,
    [campaignId],
  );
  return rows[0]!;
}

async function waitForDispatchUnderway(s: Shared, campaignId: string): Promise<void> {
  await pollUntil(
    `more than ${DISPATCHED_BEFORE_KILL} messages of the campaign`,
    async () => ((await campaignState(s, campaignId)).messages > DISPATCHED_BEFORE_KILL ? true : undefined),
    {
      timeoutMs: 20_000,
      intervalMs: 25,
      describe: async () => JSON.stringify(await campaignState(s, campaignId)),
    },
  );
}

/** What every backend of the test database is doing, for a failure message. */
async function backends(s: Shared): Promise<string> {
  const { rows } = await s.pool.query(
    `SELECT pid, state, wait_event_type, wait_event, pg_blocking_pids(pid) AS blocked_by, left(query, 120) AS query
     FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()`,
    [s.database.name],
  );
  return JSON.stringify(rows);
}

interface CaughtBatch {
  rival: pg.Client;
  /** The backend of the worker's batch transaction, stopped at the end of its INSERT. */
  pid: number;
  /** Messages of the campaign committed when the worker was caught. */
  committed: number;
  /** Rows the caught INSERT had written, uncommitted: the whole batch. */
  writtenUncommitted: number;
}

/**
 * Catches the worker inside a batch transaction that has written its messages: the test locks
 * (FOR UPDATE) a contact a couple of batches ahead. The foreign key checks of the dispatcher's
 * INSERT run once all its rows are in, and the one for that contact waits for the test, with
 * the campaign row locked and the batch written but not committed. (Writing a rival message
 * for the contact would not do: its own foreign key check locks the campaign row, and the
 * dispatcher would wait before writing anything.)
 */
async function catchBatchInsideTransaction(s: Shared, campaignId: string): Promise<CaughtBatch> {
  const rival = new pg.Client({ connectionString: s.database.url });
  rival.on('error', () => undefined);
  rivals.push(rival);
  await rival.connect();
  const rivalPid = (await rival.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
  let held: { id: string } | undefined;
  for (let attempt = 0; attempt < 10 && !held; attempt += 1) {
    await rival.query('BEGIN');
    try {
      // NOWAIT: a contact whose batch is being written right now is already key-share locked
      // and about to get its message, so another one is tried instead.
      const { rows } = await rival.query<{ id: string }>(
        `SELECT c.id FROM contacts c
         WHERE c.id = (SELECT p.id FROM contacts p
                       WHERE p.campaign_id = $1 AND NOT EXISTS (SELECT 1 FROM messages m WHERE m.campaign_id = $1 AND m.contact_id = p.id)
                       ORDER BY p.created_at, p.id OFFSET $2 LIMIT 1)
         FOR UPDATE NOWAIT`,
        [campaignId, 2 * BATCH_SIZE + BATCH_SIZE / 2],
      );
      // A batch may have committed between choosing the contact and locking it.
      const taken = rows[0]
        ? (
            await rival.query('SELECT 1 FROM messages WHERE campaign_id = $1 AND contact_id = $2', [
              campaignId,
              rows[0].id,
            ])
          ).rowCount
        : 1;
      if (taken === 0) held = rows[0];
    } catch (error) {
      if (!(error instanceof Error && /could not obtain lock/.test(error.message))) throw error;
    }
    if (!held) await rival.query('ROLLBACK');
  }
  if (!held) throw new Error('could not hold a contact ahead of the dispatcher');

  const pid = await pollUntil(
    "the worker's batch INSERT to wait for the contact the test holds",
    async () => {
      const { rows } = await s.pool.query<{ pid: number }>(
        `SELECT pid FROM pg_stat_activity
         WHERE datname = $1 AND wait_event_type = 'Lock' AND $2 = ANY(pg_blocking_pids(pid))
           -- The statement of insertMessageRows, whose INSERT comes after its rows and reservation,
           -- past the part of a long statement pg_stat_activity keeps.
           AND query ILIKE '%AS v("id", "account_id", "campaign_id", "contact_id"%'`,
        [s.database.name, rivalPid],
      );
      return rows[0]?.pid;
    },
    {
      timeoutMs: 10_000,
      intervalMs: 20,
      describe: async () => `${JSON.stringify(await campaignState(s, campaignId))}; ${await backends(s)}`,
    },
  );
  const state = await campaignState(s, campaignId);
  return {
    rival,
    pid,
    committed: state.messages,
    writtenUncommitted: Math.min(BATCH_SIZE, state.contacts - state.messages),
  };
}

/**
 * The killed worker's backend waits in its INSERT until the test lets go; then it finds its
 * client gone and rolls the batch back. Until it has, it still holds the campaign row.
 */
async function releaseDeadBatch(s: Shared, caught: CaughtBatch): Promise<void> {
  await caught.rival.query('ROLLBACK');
  await pollUntil(
    "the dead worker's batch transaction to end",
    async () =>
      (await s.pool.query('SELECT 1 FROM pg_stat_activity WHERE pid = $1', [caught.pid])).rowCount === 0
        ? true
        : undefined,
    { timeoutMs: 10_000, intervalMs: 20, describe: () => backends(s) },
  );
}

/**
 * An empty campaign overdue to start (scheduled an hour ago, no job for it): what the recovery
 * sweep's campaign task takes up and logs, a sign that the task has looked at every campaign in
 * that round. With no contacts it starts and finishes without a message.
 */
async function plantOverdueCampaign(s: Shared): Promise<void> {
  const template = await api(s, 'POST', '/v1/templates', { name: 'Overdue marker', content: 'Hi' });
  expect(template.status, JSON.stringify(template.body)).toBe(201);
  const campaign = await api(s, 'POST', '/v1/campaigns', {
    name: 'Overdue marker',
    template: template.body.template,
  });
  expect(campaign.status, JSON.stringify(campaign.body)).toBe(201);
  await s.pool.query(
    `UPDATE campaigns SET status = 'scheduled', send_at = now() - interval '1 hour' WHERE id = $1`,
    [campaign.body.campaign],
  );
}

/** Backends waiting for a campaign row lock: an action (pause) queued behind a batch. */
async function campaignLockWaiters(s: Shared): Promise<number> {
  const { rows } = await s.pool.query<{ waiting: number }>(
    `SELECT count(*)::int AS waiting FROM pg_stat_activity
     WHERE datname = $1 AND wait_event_type = 'Lock' AND query ILIKE '%FROM campaigns%FOR NO KEY UPDATE%'`,
    [s.database.name],
  );
  return rows[0]!.waiting;
}

/** How many of the campaign's dispatch jobs are still to run (active, waiting or delayed). */
async function campaignJobsPending(campaignId: string): Promise<number> {
  const connection = new Redis(REDIS_URL, { maxRetriesPerRequest: 1, retryStrategy: () => null });
  connection.on('error', () => undefined);
  const queue = new Queue<CampaignDispatchJob>(campaignDispatchQueue.name, {
    connection,
    prefix: redisPrefix,
  });
  try {
    const jobs = await queue.getJobs(['active', 'waiting', 'delayed', 'prioritized']);
    return jobs.filter((job) => job.data.campaignId === campaignId).length;
  } finally {
    await queue.close().catch(() => undefined);
    connection.disconnect();
  }
}

/** The campaign's dispatch jobs as BullMQ sees them, for the account of a stuck campaign. */
async function dispatchJobs(campaignId: string): Promise<string> {
  const connection = new Redis(REDIS_URL, { maxRetriesPerRequest: 1, retryStrategy: () => null });
  connection.on('error', () => undefined);
  const queue = new Queue<CampaignDispatchJob>(campaignDispatchQueue.name, {
    connection,
    prefix: redisPrefix,
  });
  try {
    const jobs = await withDeadline(
      queue.getJobs(['active', 'waiting', 'delayed', 'prioritized', 'failed']),
      5_000,
      'the dispatch queue',
    );
    const states = await Promise.all(
      jobs
        .filter((job) => job.data.campaignId === campaignId)
        .map(async (job) => {
          const lockTtl = await connection.pttl(
            `${redisPrefix}:${campaignDispatchQueue.name}:${job.id}:lock`,
          );
          return `${job.id}: ${await job.getState()} (attempts ${job.attemptsMade}, stalled ${job.stalledCounter}, lock ttl ${lockTtl} ms)`;
        }),
    );
    return states.join(', ') || 'none';
  } catch (error) {
    return `(not readable: ${String(error)})`;
  } finally {
    await queue.close().catch(() => undefined);
    connection.disconnect();
  }
}

/** Waits for the end; returns when, from `since`, the campaign finished and its last message was delivered. */
async function waitUntilFinishedAndDelivered(
  s: Shared,
  campaignId: string,
  worker: ChildHandle,
  since: number,
) {
  const describe = async () =>
    `${JSON.stringify(await campaignState(s, campaignId))}; dispatch jobs: ${await dispatchJobs(campaignId)}\n${warnings(worker, 15)}`;
  await pollUntil(
    'the campaign to finish, every contact having its message',
    async () => ((await campaignState(s, campaignId)).status === 'finished' ? true : undefined),
    { timeoutMs: DISPATCH_TIMEOUT_MS, intervalMs: 100, describe },
  );
  const finishedMs = Date.now() - since;
  await pollUntil(
    'every message of the campaign to be delivered',
    async () => {
      const state = await campaignState(s, campaignId);
      return state.delivered === state.messages && state.messages === state.contacts ? true : undefined;
    },
    { timeoutMs: DELIVERY_TIMEOUT_MS, intervalMs: 200, describe },
  );
  return { finishedMs, deliveredMs: Date.now() - since };
}

/** Issue 5's invariants, from the database, the carrier's side and the API. */
async function expectOneMessagePerContact(
  s: Shared,
  campaignId: string,
): Promise<{ handedOverTwice: number }> {
  const expected = CONTACTS + ADDED_WHILE_DEAD;
  const {
    rows: [counts],
  } = await s.pool.query(
    `SELECT
       (SELECT count(*)::int FROM contacts WHERE campaign_id = $1) AS contacts,
       (SELECT count(*)::int FROM messages WHERE campaign_id = $1) AS messages,
       (SELECT count(*)::int FROM (SELECT 1 FROM messages WHERE campaign_id = $1 GROUP BY contact_id HAVING count(*) > 1) d) AS duplicated_contacts,
       (SELECT count(*)::int FROM contacts c WHERE c.campaign_id = $1
          AND NOT EXISTS (SELECT 1 FROM messages m WHERE m.campaign_id = $1 AND m.contact_id = c.id)) AS contacts_without,
       (SELECT count(*)::int FROM messages WHERE campaign_id = $1 AND contact_id IS NULL) AS without_contact,
       (SELECT count(*)::int FROM messages m JOIN contacts c ON c.id = m.contact_id
          WHERE m.campaign_id = $1 AND (m.text <> 'Hi ' || c.name OR m."to" <> c.phone)) AS not_rendered_for_contact,
       (SELECT count(*)::int FROM messages WHERE campaign_id = $1 AND status <> 'delivered') AS not_delivered`,
    [campaignId],
  );
  expect(counts).toEqual({
    contacts: expected,
    messages: expected,
    duplicated_contacts: 0,
    contacts_without: 0,
    without_contact: 0,
    not_rendered_for_contact: 0,
    not_delivered: 0,
  });

  // One submission per message, whose id the message carries, and none for a message that does
  // not exist (one of a batch that was rolled back, say).
  const {
    rows: [carrier],
  } = await s.pool.query(
    `SELECT
       (SELECT count(*)::int FROM messages m WHERE m.campaign_id = $1
          AND (SELECT count(*) FROM simulated_submissions s WHERE s.reference = m.id) <> 1) AS not_submitted_once,
       (SELECT count(*)::int FROM messages m JOIN simulated_submissions s ON s.reference = m.id
          WHERE m.campaign_id = $1 AND m.carrier_message_id IS DISTINCT FROM s.carrier_message_id) AS other_carrier_id,
       (SELECT count(*)::int FROM simulated_submissions s WHERE NOT EXISTS (SELECT 1 FROM messages m WHERE m.id = s.reference)) AS unknown_references,
       (SELECT count(*)::int FROM messages m WHERE m.campaign_id = $1
          AND (SELECT count(*) FROM test_carrier_handovers h WHERE h.reference = m.id) NOT IN (1, 2)) AS handed_over_otherwise,
       (SELECT count(*)::int FROM messages m WHERE m.campaign_id = $1
          AND (SELECT count(*) FROM test_carrier_handovers h WHERE h.reference = m.id) = 2) AS handed_over_twice`,
    [campaignId],
  );
  // A second handover can only be of a message whose claim the killed worker held: the claim is
  // taken over after the lease and the simulator takes the same reference twice as one
  // submission, which is what keeps it to one transmission.
  expect(carrier).toMatchObject({
    not_submitted_once: 0,
    other_carrier_id: 0,
    unknown_references: 0,
    handed_over_otherwise: 0,
  });

  const view = await api(s, 'GET', `/v1/campaigns/${campaignId}`);
  expect(view.status, JSON.stringify(view.body)).toBe(200);
  expect(view.body).toMatchObject({
    status: 'finished',
    stats: { contacts: expected, queued: 0, sent: 0, delivered: expected, failed: 0 },
  });

  // Finished once, when the last contact had its message.
  const { rows: finished } = await s.pool.query(
    `SELECT (payload->'stats'->>'contacts')::int AS contacts FROM events WHERE campaign_id = $1 AND type = 'campaign.finished'`,
    [campaignId],
  );
  expect(finished).toEqual([{ contacts: expected }]);
  return { handedOverTwice: carrier.handed_over_twice as number };
}

describe('a campaign whose worker dies mid-dispatch', () => {
  it(
    'ends with exactly one message per contact after its worker is killed inside a batch transaction and restarted',
    async () => {
      const s = setUp();
      const [campaignId, firstWorker] = await Promise.all([
        createCampaign(s, 'Killed mid-batch', '351'),
        startWorker(s),
      ]);
      await startCampaign(s, campaignId);
      await waitForDispatchUnderway(s, campaignId);

      const caught = await catchBatchInsideTransaction(s, campaignId);
      await killWorker(firstWorker);
      const killedAt = Date.now();
      await releaseDeadBatch(s, caught);
      // All or nothing: the rows the dead batch had written went with it.
      const afterDeath = await campaignState(s, campaignId);
      expect(afterDeath).toMatchObject({ status: 'running', messages: caught.committed, duplicated: 0 });

      await addContactsThroughApi(s, campaignId, '352');
      const secondWorker = await startWorker(s);
      const restartedAt = Date.now();
      const { finishedMs, deliveredMs } = await waitUntilFinishedAndDelivered(
        s,
        campaignId,
        secondWorker,
        restartedAt,
      );
      const { handedOverTwice } = await expectOneMessagePerContact(s, campaignId);
      console.info(
        `killed inside batch ${afterDeath.dispatched_batches + 1} with ${caught.committed} messages committed and ` +
          `${caught.writtenUncommitted} written but not committed; a new worker started ${restartedAt - killedAt} ms later; ` +
          `from then the campaign finished in ${finishedMs} ms and its last message was delivered in ${deliveredMs} ms; ` +
          `${handedOverTwice} messages were handed to the carrier twice (one submission each)`,
      );
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'ends with exactly one message per contact when paused during a batch, its worker killed and restarted, then resumed',
    async () => {
      const s = setUp();
      const [campaignId, firstWorker] = await Promise.all([
        createCampaign(s, 'Paused mid-batch', '353'),
        startWorker(s),
      ]);
      await startCampaign(s, campaignId);
      await waitForDispatchUnderway(s, campaignId);

      const caught = await catchBatchInsideTransaction(s, campaignId);
      // The pause queues behind the open batch on the campaign row.
      const pausing = api(s, 'POST', `/v1/campaigns/${campaignId}/pause`);
      // Awaited below; should the test fail first, its rejection must not go unhandled.
      pausing.catch(() => undefined);
      await pollUntil(
        'the pause to wait for the campaign row',
        async () => ((await campaignLockWaiters(s)) > 0 ? true : undefined),
        {
          timeoutMs: 5_000,
          intervalMs: 20,
          describe: () => backends(s),
        },
      );
      await killWorker(firstWorker);
      const killedAt = Date.now();
      await releaseDeadBatch(s, caught);
      const paused = await pausing;
      expect(paused.status, JSON.stringify(paused.body)).toBe(200);
      expect(paused.body.status).toBe('paused');
      const afterDeath = await campaignState(s, campaignId);
      expect(afterDeath).toMatchObject({ status: 'paused', messages: caught.committed, duplicated: 0 });

      await addContactsThroughApi(s, campaignId, '354');
      await plantOverdueCampaign(s);
      const secondWorker = await startWorker(s);
      const restartedAt = Date.now();
      // The new worker's recovery sweep has looked at the campaigns (it took the planted one up),
      // and the stalled job of the dead batch has been run again and is gone from the queue:
      // both had their chance to dispatch the campaign, which they must leave alone while paused.
      await secondWorker.waitForOutput(/"msg":"recovery sweep re-enqueued overdue campaign jobs"/, 30_000);
      await pollUntil(
        "the dead batch's job to have run again",
        async () => ((await campaignJobsPending(campaignId)) === 0 ? true : undefined),
        { timeoutMs: 30_000, describe: () => dispatchJobs(campaignId) },
      );
      expect(await campaignState(s, campaignId)).toMatchObject({
        status: 'paused',
        messages: caught.committed,
      });

      const resumed = await api(s, 'POST', `/v1/campaigns/${campaignId}/resume`);
      expect(resumed.status, JSON.stringify(resumed.body)).toBe(200);
      expect(resumed.body.status).toBe('running');
      const resumedAt = Date.now();
      const { finishedMs, deliveredMs } = await waitUntilFinishedAndDelivered(
        s,
        campaignId,
        secondWorker,
        resumedAt,
      );
      const { handedOverTwice } = await expectOneMessagePerContact(s, campaignId);

      const { rows: transitions } = await s.pool.query<{ type: string }>(
        `SELECT type FROM events WHERE campaign_id = $1 AND type LIKE 'campaign.%' ORDER BY created_at, id`,
        [campaignId],
      );
      expect(transitions.map((row) => row.type)).toEqual([
        'campaign.started',
        'campaign.paused',
        'campaign.started',
        'campaign.finished',
      ]);
      console.info(
        `paused and killed inside batch ${afterDeath.dispatched_batches + 1} with ${caught.committed} messages committed and ` +
          `${caught.writtenUncommitted} written but not committed; a new worker started ${restartedAt - killedAt} ms later; ` +
          `from the resume the campaign finished in ${finishedMs} ms and its last message was delivered in ${deliveredMs} ms; ` +
          `${handedOverTwice} messages were handed to the carrier twice (one submission each)`,
      );
    },
    TEST_TIMEOUT_MS,
  );
});
