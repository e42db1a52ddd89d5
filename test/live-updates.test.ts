import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from './support/database.js';
import { REDIS_URL } from './support/server-url.js';
import { deleteRedisKeys } from './support/tern.js';
import {
  apiRequest,
  type ChildHandle,
  createAccountWithCli,
  freePort,
  killAll,
  logIn,
  pollUntil,
  startTernProcess,
  transcripts,
  withDeadline,
} from './support/tern-processes.js';

// GraphQL subscriptions as a dashboard uses them: server-sent events from an API process, about
// changes that a separate worker process makes, delivered through Redis.

const SUBSCRIPTIONS_PER_ACCOUNT = 2;
const EVENT_TIMEOUT_MS = 20_000;

let database: TestDatabase;
let env: Record<string, string>;
let apiA: string;
let apiB: string;
let apiBProcess: ChildHandle;
let redis: Redis;

interface Caller {
  account: string;
  token: string;
}
let alice: Caller;
let bob: Caller;

beforeAll(async () => {
  database = await createTestDatabase();
  env = {
    DATABASE_URL: database.url,
    REDIS_URL,
    REDIS_PREFIX: `tern_live_${randomBytes(6).toString('hex')}`,
    JWT_SECRET: 'live-test-secret-of-at-least-32-bytes-long',
    DEMO_ACCOUNT: 'false',
    HOST: '127.0.0.1',
    SUBSCRIPTIONS_PER_ACCOUNT: String(SUBSCRIPTIONS_PER_ACCOUNT),
    // Slow enough that sent and delivered are two updates apart, not one statement's.
    SIMULATOR_DELAY_MS: '300',
  };
  const [portA, portB] = await Promise.all([freePort(), freePort()]);
  // The first process migrates the database; the others then start on it.
  await startTernProcess('api', { ...env, PORT: String(portA) });
  [apiBProcess] = await Promise.all([
    startTernProcess('api', { ...env, PORT: String(portB) }),
    startTernProcess('worker', env),
  ]);
  apiA = `http://127.0.0.1:${portA}`;
  apiB = `http://127.0.0.1:${portB}`;
  redis = new Redis(REDIS_URL);
  const [a, b] = await Promise.all([createAccountWithCli(env), createAccountWithCli(env)]);
  alice = { account: a.account, token: await logIn(apiA, a) };
  bob = { account: b.account, token: await logIn(apiA, b) };
}, 180_000);

afterAll(async () => {
  redis?.disconnect();
  await killAll();
  await database?.drop();
  if (env) await deleteRedisKeys(env.REDIS_PREFIX!);
});

interface Subscription {
  /** The HTTP status and the first result (an error answers one and ends). */
  status: number;
  next(): Promise<any>;
  close(): void;
}

/** A subscription over server-sent events, read event by event as a browser's EventSource would. */
async function subscribe(
  baseUrl: string,
  token: string,
  query: string,
  variables = {},
): Promise<Subscription> {
  const abort = new AbortController();
  const response = await fetch(`${baseUrl}/graphql`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'text/event-stream',
      authorization: `Bearer ${token}`,
    },
    body: JSON.stringify({ query, variables }),
    signal: abort.signal,
  });
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
  let buffered = '';
  const results: any[] = [];
  const readEvent = async (): Promise<any> => {
    for (;;) {
      const end = buffered.indexOf('\n\n');
      if (end >= 0) {
        const block = buffered.slice(0, end);
        buffered = buffered.slice(end + 2);
        const data = block
          .split('\n')
          .filter((line) => line.startsWith('data:'))
          .map((line) => line.slice(5).trim())
          .join('\n');
        if (block.includes('event: complete')) return { complete: true };
        if (data) return JSON.parse(data);
        continue;
      }
      const chunk = await reader.read();
      if (chunk.done) return { complete: true };
      buffered += chunk.value;
    }
  };
  return {
    status: response.status,
    next: () => {
      const result = results.shift();
      return result
        ? Promise.resolve(result)
        : withDeadline(readEvent(), EVENT_TIMEOUT_MS, `a subscription event\n${transcripts()}`);
    },
    close: () => abort.abort(),
  };
}

/** Subscribers of the account's channel in Redis, over every process: a subscription is live once counted. */
async function channelSubscribers(account: string): Promise<number> {
  const [, count] = (await redis.pubsub('NUMSUB', `${env.REDIS_PREFIX}:live:${account}`)) as [string, number];
  return count;
}

async function untilSubscribed(account: string, count: number): Promise<void> {
  await pollUntil(
    `${count} subscriber(s) of ${account}`,
    async () => ((await channelSubscribers(account)) >= count ? true : undefined),
    { timeoutMs: EVENT_TIMEOUT_MS },
  );
}

const MESSAGE_UPDATED = `subscription ($to: String) {
  messageUpdated(to: $to) { kind status message { id to status } }
}`;

const REPLIES = `subscription ($to: String) {
  messageUpdated(to: $to) { kind status message { id replies { from } } }
}`;

async function send(token: string, to: string): Promise<string> {
  const sent = await apiRequest(apiA, 'POST', '/v1/messages/send', { to, message: 'live' }, token);
  expect(sent.status, JSON.stringify(sent.body)).toBe(202);
  return sent.body.message as string;
}

describe('messageUpdated', () => {
  it('follows a message queued → sent → delivered while a worker process moves it, and shows another account nothing', async () => {
    const to = '351912300100';
    const watcher = await subscribe(apiB, alice.token, MESSAGE_UPDATED, { to });
    const stranger = await subscribe(apiB, bob.token, MESSAGE_UPDATED);
    expect(watcher.status).toBe(200);
    await untilSubscribed(alice.account, 1);
    await untilSubscribed(bob.account, 1);

    const id = await send(alice.token, to);
    const statuses: string[] = [];
    while (statuses.at(-1) !== 'delivered') {
      const event = await watcher.next();
      expect(event.errors).toBeUndefined();
      expect(event.data.messageUpdated.message).toMatchObject({ id, to });
      statuses.push(event.data.messageUpdated.status);
    }
    expect(statuses).toEqual(['queued', 'sent', 'delivered']);

    // Bob's first update is about his own message: none of Alice's, published before, reached him.
    const own = await send(bob.token, '351912300200');
    const first = await stranger.next();
    expect(first.data.messageUpdated.message.id).toBe(own);
    watcher.close();
    stranger.close();
  }, 60_000);

  it('tells of a reply to a message, with the reply on the message', async () => {
    // The simulator answers numbers ending 0002 once it has delivered to them.
    const to = '351912300002';
    const watcher = await subscribe(apiB, alice.token, REPLIES, { to });
    await untilSubscribed(alice.account, 1);
    const id = await send(alice.token, to);
    let update: any;
    do {
      update = (await watcher.next()).data.messageUpdated;
    } while (update.kind !== 'reply');
    expect(update).toMatchObject({ status: null, message: { id, replies: [{ from: to }] } });
    watcher.close();
  }, 60_000);

  it('ends the stream of an API key revoked while it was open', async () => {
    const created = await apiRequest(apiA, 'POST', '/v1/api-keys', { name: 'dashboard' }, alice.token);
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const to = '351912300400';
    const watcher = await subscribe(apiB, created.body.key, MESSAGE_UPDATED, { to });
    expect(watcher.status).toBe(200);
    await untilSubscribed(alice.account, 1);
    await send(alice.token, to);
    expect((await watcher.next()).data.messageUpdated.status).toBe('queued');

    const revoked = await apiRequest(
      apiA,
      'DELETE',
      `/v1/api-keys/${created.body.api_key}`,
      undefined,
      alice.token,
    );
    expect(revoked.status, JSON.stringify(revoked.body)).toBe(200);
    // The next update finds the key gone: the stream ends instead of delivering it.
    await send(alice.token, to);
    let event = await watcher.next();
    while (!event.complete) {
      // Updates already delivered before the revocation was seen (sent, delivered) may come first.
      expect(event.data.messageUpdated.status).not.toBe('queued');
      event = await watcher.next();
    }
    expect(event).toEqual({ complete: true });
  }, 60_000);

  it('refuses a recipient that is not a number, as the message list does', async () => {
    const refused = await subscribe(apiA, alice.token, MESSAGE_UPDATED, { to: 'x'.repeat(500) });
    const answer = await refused.next();
    expect(answer.errors?.[0]?.extensions).toMatchObject({
      code: 'validation_error',
      details: [{ field: 'to' }],
    });
    refused.close();
  });

  it('refuses a subscription without a credential', async () => {
    const anonymous = await subscribe(apiA, 'not-a-token', MESSAGE_UPDATED);
    expect(anonymous.status).toBe(401);
    const answer = await anonymous.next();
    expect(answer.errors?.[0]?.extensions?.code).toBe('unauthorized');
    anonymous.close();
  });
});

describe('the per-account cap', () => {
  it('counts open subscriptions over every API process, answers rate_limited past it, and frees a slot on close', async () => {
    const caller = await createAccountWithCli(env).then(async (created) => ({
      account: created.account,
      token: await logIn(apiA, created),
    }));
    const first = await subscribe(apiA, caller.token, MESSAGE_UPDATED);
    const second = await subscribe(apiB, caller.token, MESSAGE_UPDATED);
    await untilSubscribed(caller.account, SUBSCRIPTIONS_PER_ACCOUNT);

    const refused = await subscribe(apiA, caller.token, MESSAGE_UPDATED);
    expect(refused.status).toBe(429);
    const answer = await refused.next();
    expect(answer.errors?.[0]?.extensions?.code).toBe('rate_limited');
    expect(answer.errors[0].message).toMatch(/At most 2 subscriptions/);
    refused.close();

    second.close();
    // The slot is freed when the server sees the stream closed: a refusal until then.
    const reopened = await pollUntil(
      'a slot to be freed',
      async () => {
        const attempt = await subscribe(apiA, caller.token, MESSAGE_UPDATED);
        if (attempt.status === 200) return attempt;
        attempt.close();
        return undefined;
      },
      { timeoutMs: EVENT_TIMEOUT_MS },
    );
    // Subscribed in Redis once the process holds the channel for both of its streams.
    await pollUntil(
      'the reopened stream to be live',
      async () => {
        const id = await send(caller.token, '351912300301');
        const event = await reopened.next();
        return event.data.messageUpdated.message.id === id ? true : undefined;
      },
      { timeoutMs: EVENT_TIMEOUT_MS },
    );
    first.close();
    reopened.close();
  }, 60_000);
});

describe('campaignUpdated', () => {
  // A relation (`template`) makes the campaign's read its own: it is read with it.
  const CAMPAIGN_UPDATED =
    'subscription ($id: ID!) { campaignUpdated(id: $id) { id status template { name } } }';

  it("streams a campaign's status changes to its account, and answers another account not_found", async () => {
    const owner = await createAccountWithCli(env).then(async (created) => ({
      account: created.account,
      token: await logIn(apiA, created),
    }));
    const created = await apiRequest(apiA, 'POST', '/v1/campaigns', { name: 'Live campaign' }, owner.token);
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const id = created.body.campaign as string;

    const foreign = await subscribe(apiB, bob.token, CAMPAIGN_UPDATED, { id });
    expect((await foreign.next()).errors?.[0]?.extensions?.code).toBe('not_found');
    foreign.close();

    const watcher = await subscribe(apiB, owner.token, CAMPAIGN_UPDATED, { id });
    await untilSubscribed(owner.account, 1);
    const cancelled = await apiRequest(apiA, 'POST', `/v1/campaigns/${id}/cancel`, undefined, owner.token);
    expect(cancelled.status, JSON.stringify(cancelled.body)).toBe(200);
    const update = await watcher.next();
    expect(update.data.campaignUpdated).toEqual({ id, status: 'cancelled', template: null });
    watcher.close();
  }, 60_000);
});

describe('a shutdown', () => {
  it('ends the open streams, so that they do not hold the process up', async () => {
    const stream = await subscribe(apiB, alice.token, MESSAGE_UPDATED);
    expect(stream.status).toBe(200);
    await untilSubscribed(alice.account, 1);
    const exit = await apiBProcess.stop('SIGTERM');
    expect(exit.code).toBe(0);
    expect(await stream.next()).toEqual({ complete: true });
  }, 60_000);
});
