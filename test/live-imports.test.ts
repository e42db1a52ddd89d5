import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { REDIS_URL } from './support/server-url.js';
import { startTern, type TestAccount, type TestTern } from './support/tern.js';
import { pollUntil, withDeadline } from './support/tern-processes.js';

// importJobUpdated: an API-only Tern takes the upload, and a worker-only Tern on the same
// database and Redis prefix imports it; the subscriber of the API one follows the job to its end.

let api: TestTern;
let worker: TestTern | null = null;
let alice: TestAccount;
let bob: TestAccount;
let redis: Redis;
const importDir = mkdtempSync(join(tmpdir(), 'tern-live-import-'));

beforeAll(async () => {
  api = await startTern({ role: 'api', env: { IMPORT_DIR: importDir } });
  [alice, bob] = await Promise.all([api.createAccount(), api.createAccount()]);
  redis = new Redis(REDIS_URL);
});

afterAll(async () => {
  redis.disconnect();
  await worker?.stop();
  await api.stop();
  rmSync(importDir, { recursive: true, force: true });
});

const IMPORT_JOB_UPDATED =
  'subscription ($id: ID!) { importJobUpdated(id: $id) { id status processed imported } }';

/** The results of a subscription over server-sent events, as they arrive. */
async function subscribe(token: string, id: string) {
  const response = await fetch(`${api.url}/graphql`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'text/event-stream',
      authorization: `Bearer ${token}`,
    },
    body: JSON.stringify({ query: IMPORT_JOB_UPDATED, variables: { id } }),
  });
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
  let buffered = '';
  const next = async (): Promise<any> => {
    for (;;) {
      const end = buffered.indexOf('\n\n');
      if (end >= 0) {
        const block = buffered.slice(0, end);
        buffered = buffered.slice(end + 2);
        const data = block.split('\n').find((line) => line.startsWith('data:') && line.length > 6);
        if (block.includes('event: complete')) return { complete: true };
        if (data) return JSON.parse(data.slice(5));
        continue;
      }
      const chunk = await reader.read();
      if (chunk.done) return { complete: true };
      buffered += chunk.value;
    }
  };
  return {
    status: response.status,
    next: () => withDeadline(next(), 20_000, 'an update'),
    close: () => reader.cancel(),
  };
}

it('follows an import that another process runs to completed, for its own account only', async () => {
  const campaign = await api.request('POST', '/v1/campaigns', {
    token: alice.token,
    body: { name: 'Live import' },
  });
  const rows = Array.from({ length: 50 }, (_, i) => `55119${String(10_000_000 + i)},Contact ${i}`);
  const form = new FormData();
  form.append('phone_column', 'phone');
  form.append('file', new Blob([`phone,name\n${rows.join('\n')}\n`]), 'contacts.csv');
  const uploaded = await fetch(`${api.url}/v1/campaigns/${campaign.body.campaign}/contacts/import`, {
    method: 'POST',
    headers: { authorization: `Bearer ${alice.token}` },
    body: form,
  });
  const answer = (await uploaded.json()) as { job: string };
  expect(uploaded.status, JSON.stringify(answer)).toBe(202);
  const job = answer.job;

  const foreign = await subscribe(bob.token, job);
  expect((await foreign.next()).errors?.[0]?.extensions?.code).toBe('not_found');

  const watcher = await subscribe(alice.token, job);
  await pollUntil(
    'the subscription to reach Redis',
    async () => {
      const [, count] = (await redis.pubsub('NUMSUB', `${api.redisPrefix}:live:${alice.account}`)) as [
        string,
        number,
      ];
      return count > 0 ? true : undefined;
    },
    { timeoutMs: 10_000 },
  );
  worker = await startTern({ role: 'worker', sharing: api, env: { IMPORT_DIR: importDir } });

  let update: any;
  do {
    update = await watcher.next();
    expect(update.errors).toBeUndefined();
    expect(update.data.importJobUpdated.id).toBe(job);
  } while (update.data.importJobUpdated.status === 'processing');
  expect(update.data.importJobUpdated).toMatchObject({ status: 'completed', processed: 50, imported: 50 });
  await watcher.close();
}, 60_000);
