import { connect } from 'node:net';
import { Redis } from 'ioredis';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLivePubSub, LivePublisher } from '../src/modules/live/live-events.js';
import { REDIS_URL } from './support/server-url.js';
import { startTern, type TestAccount, type TestTern } from './support/tern.js';
import { freePort, pollUntil, sleep, startRedisServer } from './support/tern-processes.js';

// What a live-update stream may cost and how it ends: each update within a cost and an account's
// budget, a stream whose client leaves during set-up freed at once, a refusal while Redis is away.

const SUBSCRIPTIONS_PER_ACCOUNT = 2;

let t: TestTern;
let publisher: Redis;
let subscriber: Redis;
let live: LivePublisher;

beforeAll(async () => {
  t = await startTern({ role: 'api', env: { SUBSCRIPTIONS_PER_ACCOUNT: String(SUBSCRIPTIONS_PER_ACCOUNT) } });
  publisher = new Redis(REDIS_URL);
  subscriber = new Redis(REDIS_URL);
  live = new LivePublisher(createLivePubSub(publisher, subscriber, pino({ level: 'silent' })), t.redisPrefix);
});
afterAll(async () => {
  publisher?.disconnect();
  subscriber?.disconnect();
  await t?.stop();
});

interface Stream {
  status: number;
  /** The next event's result, `{ complete: true }` once the stream has ended. */
  next(): Promise<any>;
  close(): void;
}

async function subscribe(baseUrl: string, token: string, query: string): Promise<Stream> {
  const abort = new AbortController();
  const response = await fetch(`${baseUrl}/graphql`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'text/event-stream',
      authorization: `Bearer ${token}`,
    },
    body: JSON.stringify({ query }),
    signal: abort.signal,
  });
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
  let buffered = '';
  const next = async (): Promise<any> => {
    for (;;) {
      const end = buffered.indexOf('\n\n');
      if (end >= 0) {
        const block = buffered.slice(0, end);
        buffered = buffered.slice(end + 2);
        if (block.includes('event: complete')) return { complete: true };
        const data = block
          .split('\n')
          .filter((line) => line.startsWith('data:'))
          .map((line) => line.slice(5).trim())
          .join('\n');
        if (data) return { ...JSON.parse(data), headers: response.headers };
        continue;
      }
      const chunk = await reader.read();
      if (chunk.done) return { complete: true };
      buffered += chunk.value;
    }
  };
  return { status: response.status, next, close: () => abort.abort() };
}

const slotsKey = (account: TestAccount) => `${t.redisPrefix}:live:slots:${account.account}`;

/** Until the account's channel has its subscribers in Redis: a stream is live from then on. */
async function untilListening(account: TestAccount, subscribers: number): Promise<void> {
  await pollUntil(
    'the stream to listen',
    async () => {
      const [, count] = (await publisher.pubsub('NUMSUB', `${t.redisPrefix}:live:${account.account}`)) as [
        string,
        number,
      ];
      return count >= subscribers ? true : undefined;
    },
    { timeoutMs: 10_000 },
  );
}

describe('a client that leaves while its stream is being set up', () => {
  const SUBSCRIPTION = JSON.stringify({ query: 'subscription { messageUpdated { status } }' });

  /** Sends a subscription over a raw socket and drops the connection `afterMs` later, before reading a byte. */
  function abandon(token: string, afterMs: number): Promise<void> {
    const { port } = new URL(t.url);
    return new Promise((resolve) => {
      const socket = connect(Number(port), '127.0.0.1', () => {
        socket.write(
          [
            'POST /graphql HTTP/1.1',
            `Host: 127.0.0.1:${port}`,
            'Content-Type: application/json',
            'Accept: text/event-stream',
            `Authorization: Bearer ${token}`,
            `Content-Length: ${Buffer.byteLength(SUBSCRIPTION)}`,
            '',
            SUBSCRIPTION,
          ].join('\r\n'),
        );
        setTimeout(() => socket.destroy(), afterMs);
      });
      socket.on('error', () => undefined);
      socket.on('close', () => resolve());
    });
  }

  it('holds no slot: 60 of them leave the account free to subscribe', async () => {
    const account = await t.createAccount();
    // Dropped at every moment of the set-up: before the request is read, while the credential
    // is checked, while the slot is taken, before the first event.
    for (let attempt = 0; attempt < 60; attempt++) await abandon(account.token, attempt % 10);

    const redis = new Redis(REDIS_URL);
    try {
      await pollUntil(
        "the abandoned streams' slots to be freed",
        async () => ((await redis.zcard(slotsKey(account))) === 0 ? true : undefined),
        { timeoutMs: 10_000, describe: async () => `${await redis.zcard(slotsKey(account))} slots held` },
      );
    } finally {
      redis.disconnect();
    }
    const streams = await Promise.all(
      Array.from({ length: SUBSCRIPTIONS_PER_ACCOUNT }, () =>
        subscribe(t.url, account.token, 'subscription { messageUpdated { status } }'),
      ),
    );
    expect(streams.map((stream) => stream.status)).toEqual(streams.map(() => 200));
    for (const stream of streams) stream.close();
  }, 60_000);
});

describe('while Redis is down', () => {
  it('a subscription is answered 503 service_unavailable with Retry-After, as any request Tern cannot serve', async () => {
    const redis = await startRedisServer(await freePort());
    const own = await startTern({ role: 'api', env: { REDIS_URL: redis.url } });
    try {
      const account = await own.createAccount();
      await redis.handle.stop('SIGKILL');
      const stream = await subscribe(own.url, account.token, 'subscription { messageUpdated { status } }');
      expect(stream.status).toBe(503);
      const answer = await stream.next();
      expect(answer.errors?.[0]?.extensions?.code).toBe('service_unavailable');
      expect(answer.headers.get('retry-after')).toBe('5');
      expect(await stream.next()).toEqual({ complete: true });
    } finally {
      await own.stop();
    }
  }, 60_000);
});

describe('the reads of an update', () => {
  it("are shared by the account's streams and aliases delivering it together: one read of the message, one check of the credential", async () => {
    const account = await t.createAccount();
    const sent = await t.request('POST', '/v1/messages/send', {
      token: account.token,
      body: { to: '5511999990000', message: 'Read once' },
    });
    expect(sent.status, JSON.stringify(sent.body)).toBe(202);
    const id = sent.body.message as string;
    const selection = Array.from({ length: 10 }, (_, index) => `a${index}: message { id status }`).join(' ');
    const streams = await Promise.all(
      Array.from({ length: SUBSCRIPTIONS_PER_ACCOUNT }, () =>
        subscribe(t.url, account.token, `subscription { messageUpdated { ${selection} } }`),
      ),
    );
    await untilListening(account, 1);

    // Every statement Tern makes goes through its pool, Prisma's included.
    let statements = 0;
    const count = () => {
      statements += 1;
    };
    t.tern.deps.pool.on('acquire', count);
    try {
      live.messages([
        { accountId: account.account, id, to: '5511999990000', campaignId: null, status: 'queued' },
      ]);
      for (const stream of streams) {
        const update = await stream.next();
        expect(update.data.messageUpdated.a9).toEqual({ id, status: 'queued' });
      }
    } finally {
      t.tern.deps.pool.off('acquire', count);
    }
    // Two streams of ten aliases each read the message 20 times, and checked the token twice.
    expect(statements).toBeLessThanOrEqual(2);
    for (const stream of streams) stream.close();
  });
});

describe('the cost of an update', () => {
  // 10 to deliver it, 1 for each field (the update, kind, status, each message and id), each
  // reply 4 (itself, id, from, text) and each list of replies 100: 10 + 3 + 501 + 486 = 1,000.
  const AT_THE_LIMIT = `subscription {
    messageUpdated {
      kind status
      a1: message { replies(perPage: 100) { id from text } }
      a2: message { id replies(perPage: 96) { id from text } }
    }
  }`;

  it('may be 1,000: such a subscription opens', async () => {
    const account = await t.createAccount();
    const stream = await subscribe(t.url, account.token, AT_THE_LIMIT);
    expect(stream.status).toBe(200);
    stream.close();
  });

  it('is refused above 1,000 with 400 QUERY_TOO_LARGE before anything runs, though a query may ask for as much', async () => {
    const account = await t.createAccount();
    const oneMore = AT_THE_LIMIT.replace('a2: message { id', 'a2: message { id to');
    const refused = await subscribe(t.url, account.token, oneMore);
    expect(refused.status).toBe(400);
    const answer = await refused.next();
    expect(answer.errors[0].extensions.code).toBe('QUERY_TOO_LARGE');
    expect(answer.errors[0].message).toMatch(/cost up to 1,001, more than the 1,000 one update may/);
    // Nothing ran: no slot was taken.
    const redis = new Redis(REDIS_URL);
    try {
      expect(await redis.zcard(slotsKey(account))).toBe(0);
    } finally {
      redis.disconnect();
    }

    // The report's selection, 30 aliases of a message and 100 of its replies: a query may run it.
    const selection = Array.from(
      { length: 30 },
      (_, index) =>
        `a${index}: message(id: "msg_none") { ... on Message { id replies(perPage: 100) { id } } }`,
    ).join(' ');
    const query = await t.graphql(`{ ${selection} }`, {}, account.token);
    expect(query.status).toBe(200);
    const asSubscription = await subscribe(
      t.url,
      account.token,
      `subscription { messageUpdated { ${Array.from({ length: 30 }, (_, index) => `a${index}: message { id replies(perPage: 100) { id } }`).join(' ')} } }`,
    );
    expect(asSubscription.status).toBe(400);
    asSubscription.close();
  });

  it("is charged to the account's budget: a stream whose updates outrun it falls behind and ends at 500 waiting, though its client reads each at once", async () => {
    const account = await t.createAccount();
    // 10 + 1 + 30 = 41 an update, for little work: 48 updates a second of the account's 2,000.
    const costly = Array.from({ length: 30 }, (_, index) => `a${index}: kind`).join(' ');
    const stream = await subscribe(t.url, account.token, `subscription { messageUpdated { ${costly} } }`);
    expect(stream.status).toBe(200);
    await untilListening(account, 1);

    // Some 300 a second, which the process would deliver as they come were they not charged.
    const UPDATES = 2_000;
    const publishing = (async () => {
      for (let update = 0; update < UPDATES; update++) {
        live.messages([
          {
            accountId: account.account,
            id: `msg_${update}`,
            to: '5511999990000',
            campaignId: null,
            status: 'sent',
          },
        ]);
        if (update % 3 === 2) await sleep(10);
      }
    })();
    let delivered = 0;
    let ended = false;
    while (delivered < UPDATES) {
      const event = await stream.next();
      if (event.complete) {
        ended = true;
        break;
      }
      expect(event.data.messageUpdated.a29).toBe('status');
      delivered += 1;
    }
    await publishing;
    stream.close();
    expect({ ended, delivered }).toMatchObject({ ended: true });
    expect(delivered).toBeLessThan(UPDATES - 500);
    // Its slot is free again.
    const redis = new Redis(REDIS_URL);
    try {
      await pollUntil(
        'the slot to be freed',
        async () => ((await redis.zcard(slotsKey(account))) === 0 ? true : undefined),
        { timeoutMs: 10_000 },
      );
    } finally {
      redis.disconnect();
    }
  }, 60_000);
});
