import { randomBytes } from 'node:crypto';
import type { RouteRecord } from '../../../src/carriers/carrier-catalog.js';
import { carrierOrder, RouteTable } from '../../../src/carriers/routing/route-table.js';
import { LoopbackSmsc } from '../../support/smsc.js';
import type { Bench } from '../bench.js';
import type { FlowResult, RunnableScenario } from './scenario.js';
import { restSend } from './send-rest.js';

export const MESSAGES = 4_000;
const DEADLINE_MS = 120_000;
// The killed SMSC comes back this long after: the messages whose submit_sm it never answered wait for it.
const DOWN_MS = 3_000;
const SMPP_ENV = { SMPP_RECONNECT_MS: '100', SMPP_RESPONSE_TIMEOUT_MS: '2000' };
const ROUTE_CHOICES = 200_000;

/** What the two-carrier scenario adds to a flow's figures. */
export interface FailoverFigures {
  /** From the kill of the first SMSC to the first submit_sm the second one took; null when none came. */
  killToOtherMs: number | null;
  /** CPU of one route choice (lookup and carrier order) among 1,000 routes, in microseconds. */
  routeChoiceUs: number;
}

/**
 * The routes `* → a, b` as the operator's CLI leaves them, written straight to the tables (the
 * SMSCs take an empty password, so nothing needs sealing); removed afterwards, so that the next
 * gateway makes carrier `default` again.
 */
async function configure(bench: Bench, a: LoopbackSmsc, b: LoopbackSmsc): Promise<void> {
  await bench.database.query('DELETE FROM routes');
  await bench.database.query('DELETE FROM carriers');
  await bench.database.query(
    `INSERT INTO carriers (name, url, binds, updated_at) VALUES ('a', $1, 1, now()), ('b', $2, 1, now())`,
    [`smpp://tern@127.0.0.1:${a.port}`, `smpp://tern@127.0.0.1:${b.port}`],
  );
  await bench.database.query(
    `INSERT INTO routes (id, prefix, scope, carriers, updated_at) VALUES ($1, '*', '', '{a,b}', now())`,
    [`rte_bench${randomBytes(6).toString('hex')}`],
  );
}

async function unconfigure(bench: Bench): Promise<void> {
  await bench.database.query('DELETE FROM routes');
  await bench.database.query('DELETE FROM carriers');
}

/** Kills `a` once half the measured messages went out, brings it back DOWN_MS later; when it was killed. */
function killHalfway(
  a: LoopbackSmsc,
  b: LoopbackSmsc,
  warmup: number,
): { killedAt: () => number | null; stop(): void } {
  let killedAt: number | null = null;
  const timer = setInterval(() => {
    if (killedAt !== null || a.accepted.length + b.accepted.length < warmup + MESSAGES / 2) return;
    killedAt = Date.now();
    void a.close();
    setTimeout(() => void a.restart(), DOWN_MS);
  }, 5);
  return { killedAt: () => killedAt, stop: () => clearInterval(timer) };
}

/** CPU per route choice in this process: 1,000 prefixes, lookups of numbers that match and miss. */
function routeChoiceUs(): number {
  const routes: RouteRecord[] = Array.from({ length: 1_000 }, (_, index) => ({
    id: `r${index}`,
    prefix: String(100 + index),
    accountId: index % 10 === 0 ? `acc_${index}` : null,
    carriers: ['a', 'b'],
    split: index % 2 === 0 ? { a: 70, b: 30 } : null,
  }));
  routes.push({ id: 'any', prefix: '*', accountId: null, carriers: ['a', 'b'], split: null });
  const table = new RouteTable(routes);
  const numbers = Array.from({ length: 1_000 }, (_, index) => `${100 + index}55512345${index % 10}`);
  const started = process.cpuUsage();
  for (let choice = 0; choice < ROUTE_CHOICES; choice += 1) {
    const match = table.find(numbers[choice % numbers.length]!, `acc_${choice % 100}`);
    if (match) carrierOrder(match.route);
  }
  const used = process.cpuUsage(started);
  return (used.user + used.system) / ROUTE_CHOICES;
}

export const twoCarriers: RunnableScenario = {
  name: 'two-carriers',
  describe:
    `${MESSAGES.toLocaleString('en')} messages over REST through SMPP to two loopback SMSCs (route \`*\` → a, b: a first, b on failover); ` +
    `a is killed once half of them went out and comes back ${DOWN_MS / 1000} s later. Compare messages/s and CPU per message with end-to-end ` +
    '(one carrier, the simulator) in the same run; the kill → first submit at b and the CPU of a route choice are below the table',
  async run(bench, layout) {
    const [a, b] = await Promise.all([LoopbackSmsc.start('tern', ''), LoopbackSmsc.start('tern', '')]);
    a.autoReceipt = 'tlv';
    b.autoReceipt = 'tlv';
    await configure(bench, a, b);
    const killer = killHalfway(a, b, 500);
    try {
      const service = await bench.startGateway(layout, { workers: true, env: SMPP_ENV });
      const result = await bench.withService(service, async () =>
        bench.flow(service, restSend(await bench.bearer(service)), MESSAGES, DEADLINE_MS),
      );
      const killedAt = killer.killedAt();
      const firstAtB = b.received.find(
        (entry) => entry.command === 'submit_sm' && killedAt !== null && entry.at >= killedAt,
      );
      const failover: FailoverFigures = {
        killToOtherMs: killedAt !== null && firstAtB ? firstAtB.at - killedAt : null,
        routeChoiceUs: routeChoiceUs(),
      };
      return { ...result, failover } as FlowResult;
    } finally {
      killer.stop();
      await unconfigure(bench);
      await Promise.all([a.close(), b.close()]);
    }
  },
};
