import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from './support/database.js';
import { type SentinelGroup, startSentinelGroup } from './support/redis-sentinel.js';
import {
  type ApiResult,
  apiRequest,
  createAccountWithCli,
  FAST_RECOVERY_ENV,
  freePort,
  killAll,
  logIn,
  pollUntil,
  recordCarrierHandovers,
  sleep,
  startRedisServer,
  startTernProcess,
  transcripts,
} from './support/tern-processes.js';

// Tern pointed at Redis Sentinel (a master, its replica and a sentinel on loopback) through a
// failover forced in the middle of a campaign and of a stream of single sends: PostgreSQL holds
// what was accepted, so nothing is lost (the recovery sweep enqueues again what the new master
// never got), nothing is handed to the carrier twice, and the limits counted in Redis hold.

const CONTACTS = 400;
const SEND_LIMIT = 200;
const SENT_BEFORE = 150;
const SENT_AFTER = 100;
const STREAMED_AT_MOST = 180;
const JWT_SECRET = 'redis-failover-secret-of-at-least-32-bytes';

let database: TestDatabase;
let pool: pg.Pool;
let group: SentinelGroup;
let baseUrl: string;

beforeAll(async () => {
  database = await createTestDatabase();
  pool = new pg.Pool({ connectionString: database.directUrl, max: 3 });
  pool.on('error', () => undefined);
  await recordCarrierHandovers(pool);
  group = await startSentinelGroup();
}, 60_000);

afterAll(async () => {
  await killAll();
  await group?.stop();
  await pool?.end().catch(() => undefined);
  await database?.drop();
});

/**
 * Single sends from `token`, one every 100 ms (a pace of traffic, not a wait) until `until`
 * resolves (at most STREAMED_AT_MOST, within the account's limit): every answer, pushed into
 * `answers` as it comes so the test can wait on the stream's progress.
 */
async function sendStream(
  token: string,
  until: Promise<unknown>,
  answers: ApiResult[] = [],
): Promise<ApiResult[]> {
  let done = false;
  void until.finally(() => {
    done = true;
  });
  for (let i = 0; !done && i < STREAMED_AT_MOST; i += 1) {
    answers.push(
      await apiRequest(
        baseUrl,
        'POST',
        '/v1/messages/send',
        { to: phone(50_000 + i), message: 'streamed' },
        token,
      ),
    );
    await sleep(100);
  }
  return answers;
}

/** A number the simulator delivers without a reply or a failure (it fails those ending 0001). */
const phone = (i: number) => `+55119${String(10_000_000 + i * 10 + 7)}`;

async function sendMany(token: string, from: number, count: number): Promise<ApiResult[]> {
  const answers: ApiResult[] = [];
  for (let i = 0; i < count; i += 10) {
    answers.push(
      ...(await Promise.all(
        Array.from({ length: Math.min(10, count - i) }, (_, j) =>
          apiRequest(
            baseUrl,
            'POST',
            '/v1/messages/send',
            { to: phone(from + i + j), message: 'counted' },
            token,
          ),
        ),
      )),
    );
  }
  return answers;
}

async function startCampaign(token: string): Promise<string> {
  const call = (method: string, path: string, body?: unknown) =>
    apiRequest(baseUrl, method, path, body, token);
  const template = await call('POST', '/v1/templates', { name: 'Failover', content: 'Hi {{name}}' });
  const campaign = await call('POST', '/v1/campaigns', {
    name: 'Through a failover',
    template: template.body.template,
    batch_size: 25,
    delay: 1,
  });
  expect(campaign.status, JSON.stringify(campaign.body)).toBe(201);
  const id = campaign.body.campaign as string;
  const csv = ['phone,name', ...Array.from({ length: CONTACTS }, (_, i) => `${phone(i)},Contact ${i}`)].join(
    '\n',
  );
  const form = new FormData();
  form.append('phone_column', 'phone');
  form.append('name_column', 'name');
  form.append('file', new Blob([csv]), 'contacts.csv');
  const upload = await fetch(`${baseUrl}/v1/campaigns/${id}/contacts/import`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}` },
    body: form,
  });
  expect(upload.status).toBe(202);
  const job = ((await upload.json()) as { job: string }).job;
  await pollUntil(
    'the import to complete',
    async () => {
      const read = await call('GET', `/v1/campaigns/${id}/contacts/import/${job}`);
      return read.body.status === 'completed' ? true : undefined;
    },
    { timeoutMs: 30_000, describe: transcripts },
  );
  expect((await call('POST', `/v1/campaigns/${id}/start`)).status).toBe(200);
  return id;
}

describe('Redis Sentinel', () => {
  it('loses no accepted message, hands none over twice and keeps the limits through a failover', async () => {
    const port = await freePort();
    baseUrl = `http://127.0.0.1:${port}`;
    const env = {
      DATABASE_URL: database.url,
      DIRECT_DATABASE_URL: database.directUrl,
      ...group.env,
      REDIS_PREFIX: `tern_failover_${randomBytes(6).toString('hex')}`,
      JWT_SECRET,
      DEMO_ACCOUNT: 'false',
      HOST: '127.0.0.1',
      ...FAST_RECOVERY_ENV,
      SIMULATOR_DELAY_MS: '50',
      RATE_LIMIT_SEND_MESSAGE_MAX: String(SEND_LIMIT),
      RATE_LIMIT_WINDOW_S: '3600',
    };
    const [streaming, limited] = await Promise.all([
      createAccountWithCli(env),
      createAccountWithCli(env),
      startTernProcess('api', { ...env, PORT: String(port) }),
      startTernProcess('worker', env),
    ]);
    const [streamer, counted] = [await logIn(baseUrl, streaming), await logIn(baseUrl, limited)];

    const before = await sendMany(counted, 0, SENT_BEFORE);
    expect(before.map((answer) => answer.status)).toEqual(Array(SENT_BEFORE).fill(202));
    const campaign = await startCampaign(streamer);
    const campaignMessages = async () =>
      (await pool.query('SELECT count(*)::int AS n FROM messages WHERE campaign_id = $1', [campaign])).rows[0]
        .n as number;
    await pollUntil(
      'the campaign to be under way',
      async () => ((await campaignMessages()) >= 75 ? true : undefined),
      {
        timeoutMs: 30_000,
        describe: transcripts,
      },
    );

    let failedOver: () => void = () => undefined;
    const answers: ApiResult[] = [];
    const streamed = sendStream(
      streamer,
      new Promise<void>((resolve) => {
        failedOver = resolve;
      }),
      answers,
    );
    const streamState = () =>
      `${answers.length} answers: ${answers.map((answer) => answer.status).join(',')}`;
    // The stream is under way (sends accepted) before the master goes.
    await pollUntil(
      'the stream to have sends accepted',
      async () => (answers.filter((answer) => answer.status === 202).length >= 2 ? true : undefined),
      { timeoutMs: 20_000, intervalMs: 50, describe: streamState },
    );
    await group.replicated();
    // In the middle of the campaign.
    expect(await campaignMessages()).toBeLessThan(CONTACTS);
    const { from, to } = await group.failover();
    expect(await group.masterPort()).toBe(to);
    expect(to).not.toBe(from);
    // The API's request-path connection is back once its readiness probe reaches Redis again.
    await pollUntil(
      'the API to reach the new master',
      async () => ((await apiRequest(baseUrl, 'GET', '/health/ready')).status === 200 ? true : undefined),
      { timeoutMs: 20_000, describe: transcripts },
    );
    // Sends accepted again through the new master before the stream ends, not merely time passed.
    const answeredBeforeReady = answers.length;
    await pollUntil(
      'the stream to have sends accepted after the failover',
      async () =>
        answers.slice(answeredBeforeReady).filter((answer) => answer.status === 202).length >= 3
          ? true
          : undefined,
      { timeoutMs: 20_000, intervalMs: 50, describe: streamState },
    );
    failedOver();
    const stream = await streamed;
    expect(stream.filter((answer) => answer.status !== 202 && answer.status !== 503)).toEqual([]);
    const accepted = stream
      .filter((answer) => answer.status === 202)
      .map((answer) => answer.body.message as string);
    expect(accepted.length).toBeGreaterThan(0);

    // The count of the limited account's sends lived through the failover on the replica.
    const after = await sendMany(counted, SENT_BEFORE, SENT_AFTER);
    const statuses = after.map((answer) => answer.status);
    expect(statuses.filter((status) => status === 202)).toHaveLength(SEND_LIMIT - SENT_BEFORE);
    expect(statuses.filter((status) => status === 429)).toHaveLength(SENT_AFTER - (SEND_LIMIT - SENT_BEFORE));

    const expected = CONTACTS + accepted.length + SEND_LIMIT;
    const state = async () =>
      (
        await pool.query(`SELECT
           (SELECT count(*)::int FROM messages) AS messages,
           (SELECT count(*)::int FROM messages WHERE status = 'delivered') AS delivered,
           (SELECT status::text FROM campaigns WHERE id = '${campaign}') AS campaign`)
      ).rows[0] as { messages: number; delivered: number; campaign: string };
    await pollUntil(
      `all ${expected} messages delivered`,
      async () => {
        const now = await state();
        return now.delivered === expected && now.campaign === 'finished' ? true : undefined;
      },
      { timeoutMs: 90_000, describe: async () => `${JSON.stringify(await state())}\n${transcripts()}` },
    );
    expect((await state()).messages).toBe(expected);

    const { rows } = await pool.query(
      `SELECT
         (SELECT count(*)::int FROM messages m WHERE m.id = ANY($1::text[]) AND m.status = 'delivered') AS streamed_delivered,
         (SELECT count(*)::int FROM (SELECT contact_id FROM messages WHERE campaign_id = $2 GROUP BY 1 HAVING count(*) > 1) d) AS contacts_twice,
         (SELECT count(*)::int FROM messages m
            WHERE (SELECT count(*) FROM test_carrier_handovers h WHERE h.reference = m.id) <> 1) AS not_handed_over_once,
         (SELECT count(*)::int FROM test_carrier_handovers) AS handovers`,
      [accepted, campaign],
    );
    expect(rows[0]).toEqual({
      streamed_delivered: accepted.length,
      contacts_twice: 0,
      not_handed_over_once: 0,
      handovers: expected,
    });
  }, 240_000);

  it('warns at start when Redis may evict keys, naming its policy', async () => {
    const redis = await startRedisServer(await freePort(), ['--maxmemory-policy', 'allkeys-lru']);
    const api = await startTernProcess('api', {
      DATABASE_URL: database.url,
      DIRECT_DATABASE_URL: database.directUrl,
      REDIS_URL: redis.url,
      JWT_SECRET,
      HOST: '127.0.0.1',
      PORT: '0',
    });
    const warning = api
      .transcript()
      .split('\n')
      .filter((line) => line.includes('maxmemoryPolicy'))
      .map((line) => JSON.parse(line) as { level: number; maxmemoryPolicy: string; msg: string });
    expect(warning).toEqual([
      expect.objectContaining({
        level: 40,
        maxmemoryPolicy: 'allkeys-lru',
        msg: expect.stringContaining('noeviction'),
      }),
    ]);
    await api.stop();
  }, 60_000);
});
