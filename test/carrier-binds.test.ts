import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REDIS_URL } from './support/server-url.js';
import { LoopbackSmsc } from './support/smsc.js';
import { startTern, type TestAccount, type TestTern } from './support/tern.js';
import { type ChildHandle, killAll, startTernProcess } from './support/tern-processes.js';
import { waitFor } from './support/wait.js';

// Binds and pace are the cluster's: two real worker processes share one carrier's binds and its
// max_per_second, as counted at the SMSC. An API-only Tern in this process takes the sends.

const PER_SECOND = 20;

let smsc: LoopbackSmsc;
let api: TestTern;
let alice: TestAccount;
let workers: ChildHandle[] = [];
let mostSessions = 0;
let sampler: NodeJS.Timeout;

function workerEnv(): Record<string, string> {
  return {
    DATABASE_URL: api.database.url,
    REDIS_URL,
    REDIS_PREFIX: api.redisPrefix,
    SMPP_RECONNECT_MS: '50',
    SMPP_RESPONSE_TIMEOUT_MS: '1000',
    CLAIM_LEASE_MS: '6000',
    RECOVERY_INTERVAL_MS: '300',
    RECOVERY_AFTER_MS: '1000',
  };
}

beforeAll(async () => {
  smsc = await LoopbackSmsc.start();
  smsc.autoReceipt = 'tlv';
  api = await startTern({ role: 'api' });
  alice = await api.createAccount();
  const catalog = api.tern.services.carrierCatalog;
  await catalog.addCarrier('solo', { url: smsc.url(), binds: 1, maxPerSecond: PER_SECOND });
  const fallback = (await catalog.settings()).routes.find((route) => route.prefix === '*')!;
  await catalog.updateRoute(fallback.id, { carriers: 'solo' });
  await catalog.removeCarrier('default').catch(() => undefined);
  sampler = setInterval(() => {
    mostSessions = Math.max(mostSessions, smsc.boundSessions.length);
  }, 10);
  workers = await Promise.all([
    startTernProcess('worker', workerEnv()),
    startTernProcess('worker', workerEnv()),
  ]);
}, 120_000);

afterAll(async () => {
  clearInterval(sampler);
  await killAll();
  await api?.stop();
  await smsc?.close();
});

async function send(to: string) {
  const response = await api.request('POST', '/v1/messages/send', {
    token: alice.token,
    body: { to, message: 'Bind' },
  });
  expect(response.status, JSON.stringify(response.body)).toBe(202);
  return response.body.message as string;
}

async function allDelivered(ids: string[], timeoutMs = 30_000) {
  await waitFor(async () => {
    const done = await api.tern.deps.prisma.message.count({
      where: { id: { in: ids }, status: 'delivered' },
    });
    return done === ids.length ? true : null;
  }, timeoutMs);
}

const alive = (worker: ChildHandle) => worker.child.exitCode === null && worker.child.signalCode === null;

/** The live worker process that holds the carrier's bind, from what the workers publish. */
async function holder(): Promise<ChildHandle> {
  return waitFor(async () => {
    const published = await api.tern.services.carrierHealth.read(null);
    const pids = published
      .filter((entry) => entry.carrier === 'solo' && entry.bindsOpen === 1)
      .map((entry) => Number(entry.worker.split(':')[1]));
    return workers.find((worker) => alive(worker) && pids.includes(worker.child.pid!)) ?? null;
  }, 15_000);
}

describe('binds across worker processes', () => {
  it('keeps one session with binds 1, and another process takes the bind over when its holder dies', async () => {
    await waitFor(async () => (smsc.boundSessions.length === 1 ? true : null), 15_000);
    const first = await Promise.all(
      Array.from({ length: 10 }, (_, index) => send(`4477009005${String(index).padStart(2, '0')}`)),
    );
    await allDelivered(first);
    const dying = await holder();
    const session = smsc.boundSessions[0];
    await dying.stop('SIGKILL');
    await waitFor(
      async () => (smsc.boundSessions.length === 1 && smsc.boundSessions[0] !== session ? true : null),
      20_000,
    );
    const survivor = await holder();
    expect(survivor).not.toBe(dying);
    const after = await Promise.all(
      Array.from({ length: 10 }, (_, index) => send(`4477009006${String(index).padStart(2, '0')}`)),
    );
    await allDelivered(after);
    expect(mostSessions).toBe(1);
    workers.push(await startTernProcess('worker', workerEnv()));
  }, 90_000);

  it('holds max_per_second across two processes that both hold a bind, counted at the SMSC', async () => {
    const catalog = api.tern.services.carrierCatalog;
    await catalog.updateCarrier('solo', { binds: 2 });
    await waitFor(async () => (smsc.boundSessions.length === 2 ? true : null), 20_000);
    const sessions = new Set(smsc.boundSessions);
    const before = smsc.accepted.length;
    const ids = await Promise.all(
      Array.from({ length: 100 }, (_, index) => send(`4477009007${String(index).padStart(2, '0')}`)),
    );
    await allDelivered(ids, 60_000);
    const accepted = smsc.accepted.slice(before);
    // Both processes sent: the pace is shared, not each process's own.
    expect(new Set(accepted.map((entry) => entry.session)).size).toBe(2);
    expect(accepted.every((entry) => sessions.has(entry.session))).toBe(true);
    const times = smsc.received
      .filter((entry) => entry.command === 'submit_sm')
      .slice(-accepted.length)
      .map((entry) => entry.at);
    // Hand-overs are spaced evenly on Redis's clock, so any window, however it is cut, holds the
    // pace's share of them as they are handed over. The SMSC reads them after two processes'
    // timers, submit windows and sockets, which under load bring a few late ones together: half
    // a second's worth is allowed for that in any window, which a count per calendar second (up
    // to 2 × PER_SECOND across the turn of a second) still exceeds.
    const mostIn = (ms: number) =>
      Math.max(...times.map((start) => times.filter((at) => at >= start && at < start + ms).length));
    expect(mostIn(1000)).toBeLessThanOrEqual(PER_SECOND * 1.5);
    expect(mostIn(3000)).toBeLessThanOrEqual(PER_SECOND * 3.5);
    expect(times.at(-1)! - times[0]!).toBeGreaterThanOrEqual((100 / PER_SECOND - 1) * 1000);
  }, 90_000);
});
