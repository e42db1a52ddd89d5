import { connect, type Socket } from 'node:net';
import { Redis } from 'ioredis';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLivePubSub, LivePublisher } from '../src/modules/live/live-events.js';
import { REDIS_URL } from './support/server-url.js';
import { startTern, type TestAccount, type TestTern } from './support/tern.js';
import { pollUntil, sleep } from './support/tern-processes.js';

// A dashboard that opens a live-update stream and then stops reading it (a hung tab, a hostile
// client) must not make the API keep every later event of its account: past a bound of unread
// updates its stream ends and its subscription slot is free again.

let t: TestTern;
let alice: TestAccount;
let publisher: Redis;
let subscriber: Redis;
let live: LivePublisher;

beforeAll(async () => {
  t = await startTern({ role: 'api', env: { SUBSCRIPTIONS_PER_ACCOUNT: '1' } });
  alice = await t.createAccount();
  publisher = new Redis(REDIS_URL);
  subscriber = new Redis(REDIS_URL);
  live = new LivePublisher(createLivePubSub(publisher, subscriber, pino({ level: 'silent' })), t.redisPrefix);
});
afterAll(async () => {
  publisher.disconnect();
  subscriber.disconnect();
  await t.stop();
});

const SUBSCRIPTION = JSON.stringify({ query: 'subscription { messageUpdated { status } }' });

/** An SSE subscription over a raw socket, so that the test decides when (if ever) it is read. */
function openStream(token: string): Promise<Socket> {
  const { port } = new URL(t.url);
  return new Promise((resolve, reject) => {
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
      socket.once('data', (head) => {
        // The status line has arrived; from here on nothing is read.
        socket.pause();
        expect(head.toString('latin1')).toMatch(/^HTTP\/1\.1 200/);
        resolve(socket);
      });
    });
    socket.once('error', reject);
  });
}

/** Whether the account can open a stream now: its one slot is free. */
async function slotFree(): Promise<boolean> {
  const response = await fetch(`${t.url}/graphql`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'text/event-stream',
      authorization: `Bearer ${alice.token}`,
    },
    body: SUBSCRIPTION,
  });
  await response.body?.cancel();
  return response.status === 200;
}

describe('a live-update stream whose client stops reading', () => {
  it('ends once too many updates wait for it, freeing its slot; the client then reads it to its end', async () => {
    const stalled = await openStream(alice.token);
    expect(await slotFree()).toBe(false);

    // Far more than any socket buffers: 200 batches of 500 status changes, ~6 MB of events.
    const changes = Array.from({ length: 500 }, (_, index) => ({
      accountId: alice.account,
      id: `msg_${index}`,
      to: '5511999990000',
      campaignId: null,
      status: 'sent' as const,
    }));
    for (let batch = 0; batch < 200; batch++) {
      live.messages(changes);
      await sleep(5);
    }
    await pollUntil(
      'the stalled stream to give its slot back',
      async () => ((await slotFree()) ? true : undefined),
      {
        timeoutMs: 20_000,
        intervalMs: 200,
      },
    );

    // Reading again, the client gets what was already on its way, then the end of the stream.
    let received = '';
    stalled.on('data', (chunk: Buffer) => (received += chunk.toString('utf8')));
    stalled.resume();
    await pollUntil(
      'the stalled stream to end',
      async () => (received.includes('event: complete') ? true : undefined),
      {
        timeoutMs: 20_000,
        intervalMs: 100,
      },
    );
    stalled.destroy();
  }, 60_000);
});
