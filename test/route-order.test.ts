import { Queue } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type MessageSendViaJob, messageSendViaQueueName } from '../src/jobs/message-send-via.job.js';
import { REDIS_URL } from './support/server-url.js';
import { LoopbackSmsc } from './support/smsc.js';
import { startTern, type TestAccount, type TestTern } from './support/tern.js';
import { type ChildHandle, killAll, startTernProcess, transcripts } from './support/tern-processes.js';
import { waitFor } from './support/wait.js';

// Route order across worker processes: three workers, an SMPP carrier with one bind (so two of
// the three hold none of it) first on the route and the simulator second. While the SMSC is up,
// every message goes through it, whichever worker takes its job; once it is gone, through the
// simulator; each message handed over once, also when Redis loses the jobs of forwarded messages.
// An API-only Tern in this process takes the sends.

const FIRST_BATCH = 1_000;
const SECOND_BATCH = 300;

let smsc: LoopbackSmsc;
let api: TestTern;
let alice: TestAccount;
let workers: ChildHandle[] = [];

beforeAll(async () => {
  smsc = await LoopbackSmsc.start();
  smsc.autoReceipt = 'tlv';
  api = await startTern({ role: 'api' });
  alice = await api.createAccount();
  const catalog = api.tern.services.carrierCatalog;
  await catalog.addCarrier('smsc', { url: smsc.url(), binds: 1 });
  await catalog.addCarrier('backup', { url: 'simulator://?delay_ms=20' });
  const fallback = (await catalog.settings()).routes.find((route) => route.prefix === '*')!;
  await catalog.updateRoute(fallback.id, { carriers: 'smsc,backup' });
  await catalog.removeCarrier('default');
  const env = {
    DATABASE_URL: api.database.url,
    REDIS_URL,
    REDIS_PREFIX: api.redisPrefix,
    SMPP_RECONNECT_MS: '50',
    // A forward Redis lost is found again within the test.
    RECOVERY_INTERVAL_MS: '300',
    RECOVERY_AFTER_MS: '1000',
  };
  workers = await Promise.all([1, 2, 3].map(() => startTernProcess('worker', env)));
}, 120_000);

afterAll(async () => {
  await killAll();
  await api?.stop();
  await smsc?.close();
});

/** What the three workers last published of a carrier, one state per worker. */
async function statesOf(carrier: string): Promise<string[]> {
  const published = await api.tern.services.carrierHealth.read(null);
  return published
    .filter((entry) => entry.carrier === carrier)
    .map((entry) => entry.state)
    .sort();
}

async function sendMany(count: number, firstNumber: number): Promise<Map<string, string>> {
  const sent = new Map<string, string>();
  for (let start = 0; start < count; start += 50) {
    const numbers = Array.from(
      { length: Math.min(50, count - start) },
      (_, index) => `4477${String(firstNumber + start + index).padStart(8, '0')}`,
    );
    const ids = await Promise.all(
      numbers.map(async (to) => {
        const response = await api.request('POST', '/v1/messages/send', {
          token: alice.token,
          body: { to, message: 'In order' },
        });
        expect(response.status, JSON.stringify(response.body)).toBe(202);
        return response.body.message as string;
      }),
    );
    for (const [index, to] of numbers.entries()) sent.set(ids[index]!, to);
  }
  return sent;
}

/** Waits until every message is delivered; their carriers, by id. */
async function deliveredCarriers(ids: string[]): Promise<Map<string, string | null>> {
  const prisma = api.tern.deps.prisma;
  await waitFor(
    async () =>
      (await prisma.message.count({ where: { id: { in: ids }, status: 'delivered' } })) === ids.length
        ? true
        : null,
    90_000,
    200,
  ).catch(async (error) => {
    const left = await prisma.message.groupBy({
      by: ['status', 'carrier'],
      where: { id: { in: ids }, status: { not: 'delivered' } },
      _count: true,
    });
    throw new Error(`${String(error)}; not delivered: ${JSON.stringify(left)}\n${transcripts()}`);
  });
  const rows = await prisma.message.findMany({
    where: { id: { in: ids } },
    select: { id: true, carrier: true },
  });
  return new Map(rows.map((row) => [row.id, row.carrier]));
}

/** How many times each number reached the SMSC (submit_sm received) and the simulated network. */
async function handOvers(sent: Map<string, string>) {
  const atSmsc = new Map<string, number>();
  for (const submit of smsc.submitsReceived())
    atSmsc.set(submit.destination, (atSmsc.get(submit.destination) ?? 0) + 1);
  const simulated = await api.tern.deps.prisma.simulatedSubmission.findMany({
    where: { reference: { in: [...sent.keys()] } },
    select: { reference: true },
  });
  const atSimulator = new Set(simulated.map((row) => row.reference));
  return [...sent].map(([id, to]) => ({ smsc: atSmsc.get(to) ?? 0, simulator: atSimulator.has(id) ? 1 : 0 }));
}

/** The worker process that holds the SMSC's bind, from what the workers publish. */
async function holder(): Promise<ChildHandle> {
  return waitFor(async () => {
    const published = await api.tern.services.carrierHealth.read(null);
    const pid = published
      .find((entry) => entry.carrier === 'smsc' && entry.state === 'bound')
      ?.worker.split(':')[1];
    return workers.find((worker) => worker.child.pid === Number(pid)) ?? null;
  }, 30_000);
}

describe('route order across worker processes', () => {
  it('sends everything through the first carrier while it is up anywhere, though two of three workers hold no bind of it', async () => {
    // One worker holds the bind; the two others forward its messages to it.
    await waitFor(async () => {
      const states = await statesOf('smsc');
      return states.join() === 'bound,forwarding,forwarding' ? true : null;
    }, 30_000);
    const sent = await sendMany(FIRST_BATCH, 0);
    const carriers = await deliveredCarriers([...sent.keys()]);
    expect([...carriers.values()].filter((carrier) => carrier !== 'smsc')).toEqual([]);
    expect(await handOvers(sent)).toEqual([...sent.keys()].map(() => ({ smsc: 1, simulator: 0 })));
    expect(smsc.boundSessions.length).toBe(1);
  }, 120_000);

  it('loses no forwarded message whose job Redis lost: the recovery sweep hands it over again, once', async () => {
    const stopped = await holder();
    // The holder stops consuming; the others keep forwarding to it for as long as it looked alive.
    stopped.child.kill('SIGSTOP');
    const queue = new Queue<MessageSendViaJob>(messageSendViaQueueName('smsc'), {
      connection: api.tern.deps.redis,
      prefix: api.redisPrefix,
    });
    try {
      const sent = await sendMany(20, 2_000);
      const waiting = await waitFor(async () => {
        const jobs = await queue.getJobs(['wait']);
        return jobs.length > 0 ? jobs.flatMap((job) => job.data.messageIds) : null;
      });
      await queue.obliterate({ force: true });
      stopped.child.kill('SIGCONT');
      const carriers = await deliveredCarriers([...sent.keys()]);
      expect(waiting.every((id) => carriers.has(id))).toBe(true);
      expect(await handOvers(sent)).toEqual(
        [...sent.keys()].map((id) =>
          carriers.get(id) === 'smsc' ? { smsc: 1, simulator: 0 } : { smsc: 0, simulator: 1 },
        ),
      );
    } finally {
      stopped.child.kill('SIGCONT');
      await queue.close();
    }
  }, 120_000);

  it('sends everything through the next carrier once the first is gone, each message once', async () => {
    await smsc.close();
    // Not a wait for time: the holder reports its session down, which is what the others route by.
    await waitFor(async () => ((await statesOf('smsc')).includes('bound') ? null : true), 30_000);
    const sent = await sendMany(SECOND_BATCH, FIRST_BATCH);
    const carriers = await deliveredCarriers([...sent.keys()]);
    expect([...carriers.values()].filter((carrier) => carrier !== 'backup')).toEqual([]);
    expect(await handOvers(sent)).toEqual([...sent.keys()].map(() => ({ smsc: 0, simulator: 1 })));
  }, 120_000);
});
