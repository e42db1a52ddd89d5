import { randomBytes } from 'node:crypto';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, expect, it } from 'vitest';
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
  startTernProcess,
  transcripts,
} from './support/tern-processes.js';
import { WebhookReceiver } from './support/webhook-receiver.js';

// The layout of docs/operations.md ("Running on several machines"): two API processes and two
// worker processes that share only PostgreSQL and Redis, each with an IMPORT_DIR of its own as
// if on four machines, through an import, a campaign, single sends and webhooks, with one
// worker killed in the middle of the campaign.

const CONTACTS = 600;
const SINGLES_PER_API = 20;
const JWT_SECRET = 'several-machines-secret-of-at-least-32-bytes';

let database: TestDatabase | null = null;
let pool: pg.Pool | null = null;
let receiver: WebhookReceiver | null = null;
const redisPrefix = `tern_machines_${randomBytes(6).toString('hex')}`;
const directories: string[] = [];

afterAll(async () => {
  await killAll();
  await receiver?.close();
  await pool?.end().catch(() => undefined);
  await database?.drop();
  await deleteRedisKeys(redisPrefix);
  for (const directory of directories) await rm(directory, { recursive: true, force: true });
});

/** A machine of its own: an IMPORT_DIR no other process sees. */
async function machineDirectory(name: string): Promise<string> {
  const directory = await mkdtemp(join(tmpdir(), `tern-machine-${name}-`));
  directories.push(directory);
  return directory;
}

const phone = (i: number) => `+55119${String(20_000_000 + i * 10 + 7)}`;

async function importContacts(base: string, token: string, campaign: string): Promise<void> {
  const csv = ['phone,name', ...Array.from({ length: CONTACTS }, (_, i) => `${phone(i)},Contact ${i}`)].join(
    '\n',
  );
  const form = new FormData();
  form.append('phone_column', 'phone');
  form.append('name_column', 'name');
  form.append('file', new Blob([csv]), 'contacts.csv');
  const upload = await fetch(`${base}/v1/campaigns/${campaign}/contacts/import`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}` },
    body: form,
  });
  expect(upload.status).toBe(202);
  const job = ((await upload.json()) as { job: string }).job;
  const done = await pollUntil(
    'the import to end',
    async () => {
      const read = await apiRequest(
        base,
        'GET',
        `/v1/campaigns/${campaign}/contacts/import/${job}`,
        undefined,
        token,
      );
      return read.body.status === 'processing' ? undefined : read.body;
    },
    { timeoutMs: 30_000, describe: transcripts },
  );
  expect(done).toMatchObject({ status: 'completed', imported: CONTACTS });
}

it('runs an import, a campaign, sends and webhooks over two API and two worker processes sharing only PostgreSQL and Redis, through the death of a worker', async () => {
  database = await createTestDatabase();
  pool = new pg.Pool({ connectionString: database.directUrl, max: 3 });
  pool.on('error', () => undefined);
  await recordCarrierHandovers(pool);
  receiver = await WebhookReceiver.start();
  const env = {
    DATABASE_URL: database.url,
    DIRECT_DATABASE_URL: database.directUrl,
    REDIS_URL,
    REDIS_PREFIX: redisPrefix,
    JWT_SECRET,
    DEMO_ACCOUNT: 'false',
    HOST: '127.0.0.1',
    ...FAST_RECOVERY_ENV,
    SIMULATOR_DELAY_MS: '50',
    WEBHOOK_ALLOW_INSECURE: 'true',
    WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
    WEBHOOK_TIMEOUT_MS: '2000',
  };
  const [portA, portB] = [await freePort(), await freePort()];
  const [apiA, apiB] = [`http://127.0.0.1:${portA}`, `http://127.0.0.1:${portB}`];
  const dirApiA = await machineDirectory('api-a');
  const dirApiB = await machineDirectory('api-b');
  const dirWorkerA = await machineDirectory('worker-a');
  const dirWorkerB = await machineDirectory('worker-b');
  const [credentials, , , workerA] = await Promise.all([
    createAccountWithCli(env),
    startTernProcess('api', { ...env, PORT: String(portA), IMPORT_DIR: dirApiA }),
    startTernProcess('api', { ...env, PORT: String(portB), IMPORT_DIR: dirApiB }),
    startTernProcess('worker', { ...env, IMPORT_DIR: dirWorkerA }),
    startTernProcess('worker', { ...env, IMPORT_DIR: dirWorkerB }),
  ]);
  const token = await logIn(apiA, credentials);
  const call = (base: string, method: string, path: string, body?: unknown) =>
    apiRequest(base, method, path, body, token);

  const webhook = await call(apiB, 'POST', '/v1/webhooks', {
    url: `${receiver.url}/machines`,
    events: ['message.delivered', 'message.failed'],
  });
  expect(webhook.status, JSON.stringify(webhook.body)).toBe(201);
  const template = await call(apiA, 'POST', '/v1/templates', { name: 'Machines', content: 'Hi {{name}}' });
  const created = await call(apiB, 'POST', '/v1/campaigns', {
    name: 'Across machines',
    template: template.body.template,
    batch_size: 50,
    delay: 0.5,
  });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  const campaign = created.body.campaign as string;

  // Uploaded to one API process, imported by whichever worker took it: neither reads the other's disk.
  await importContacts(apiA, token, campaign);
  for (const directory of [dirApiA, dirApiB]) expect(await readdir(directory)).toEqual([]);
  expect((await pool.query('SELECT count(*)::int AS n FROM uploads')).rows[0].n).toBe(0);

  expect((await call(apiB, 'POST', `/v1/campaigns/${campaign}/start`)).status).toBe(200);
  const singles = await Promise.all(
    [apiA, apiB].flatMap((base, apiIndex) =>
      Array.from({ length: SINGLES_PER_API }, (_, i) =>
        call(base, 'POST', '/v1/messages/send', {
          to: phone(10_000 + apiIndex * 100 + i),
          message: 'single',
        }),
      ),
    ),
  );
  expect(singles.map((answer) => answer.status)).toEqual(Array(2 * SINGLES_PER_API).fill(202));

  const campaignMessages = async () =>
    (await pool!.query('SELECT count(*)::int AS n FROM messages WHERE campaign_id = $1', [campaign])).rows[0]
      .n as number;
  await pollUntil(
    'the campaign to be under way',
    async () => ((await campaignMessages()) >= 150 ? true : undefined),
    {
      timeoutMs: 30_000,
      describe: transcripts,
    },
  );
  expect(await campaignMessages()).toBeLessThan(CONTACTS);
  await (workerA as ChildHandle).stop('SIGKILL');

  const expected = CONTACTS + 2 * SINGLES_PER_API;
  const state = async () =>
    (
      await pool!.query(
        `SELECT (SELECT count(*)::int FROM messages WHERE status = 'delivered') AS delivered,
                (SELECT status::text FROM campaigns WHERE id = $1) AS campaign`,
        [campaign],
      )
    ).rows[0] as { delivered: number; campaign: string };
  await pollUntil(
    `all ${expected} messages delivered`,
    async () => {
      const now = await state();
      return now.delivered === expected && now.campaign === 'finished' ? true : undefined;
    },
    { timeoutMs: 90_000, describe: async () => `${JSON.stringify(await state())}\n${transcripts()}` },
  );

  const { rows } = await pool.query(
    `SELECT
       (SELECT count(*)::int FROM messages) AS messages,
       (SELECT count(*)::int FROM (SELECT contact_id FROM messages WHERE campaign_id = $1 GROUP BY 1 HAVING count(*) > 1) d) AS contacts_twice,
       (SELECT count(*)::int FROM messages m
          WHERE (SELECT count(*) FROM simulated_submissions s WHERE s.reference = m.id) <> 1) AS not_submitted_once,
       (SELECT count(*)::int FROM messages m
          WHERE (SELECT count(*) FROM test_carrier_handovers h WHERE h.reference = m.id) NOT IN (1, 2)) AS handed_over_otherwise`,
    [campaign],
  );
  // A message can be handed over a second time only if the killed worker held its claim; the
  // carrier takes the same reference twice as one submission.
  expect(rows[0]).toEqual({
    messages: expected,
    contacts_twice: 0,
    not_submitted_once: 0,
    handed_over_otherwise: 0,
  });

  // Every delivery told to the receiver, at least once each (an attempt the killed worker made
  // may be made again), by whichever worker made it.
  const delivered = await pollUntil(
    'a callback for every delivered message',
    async () => {
      const messages = new Set(
        receiver!
          .at('/machines')
          .map((callback) => JSON.parse(callback.body) as { event: string; message: string })
          .filter((body) => body.event === 'message.delivered')
          .map((body) => body.message),
      );
      return messages.size === expected ? messages : undefined;
    },
    { timeoutMs: 90_000, describe: transcripts },
  );
  expect(delivered.size).toBe(expected);
}, 300_000);
