import type { Redis } from 'ioredis';
import pino from 'pino';
import { loadConfig } from '../../../src/config.js';
import { createPool, createPrismaClient } from '../../../src/db/prisma.js';
import { systemClock } from '../../../src/lib/clock.js';
import { newId } from '../../../src/lib/ids.js';
import { Metrics } from '../../../src/metrics/metrics.js';
import { FraudGuard } from '../../../src/modules/fraud-guard/fraud-guard.js';
import { GuardRuleBook } from '../../../src/modules/fraud-guard/guard-rules.js';
import type { FlowResult, RunnableScenario } from './scenario.js';

// The fraud guard's own cost, measured in this process: the check a send makes before its
// segments are reserved (the account's rules, shared by concurrent checks, and one Redis script),
// with the deployment's default rules, against the bench's PostgreSQL and Redis.

const CHECKS = 20_000;
const WARM_UP = 2_000;
const CONCURRENCY = 50;

/** A Brazilian mobile of its own number range, so that every check passes: the common case. */
const ordinary = (i: number) => `55119${String(i % 10_000).padStart(4, '0')}${String(1000 + (i % 9000))}`;

export const fraudGuard: RunnableScenario = {
  name: 'fraud-guard',
  describe: `${CHECKS.toLocaleString('en')} checks of the fraud guard (default rules), ${CONCURRENCY} at a time, in the bench process: CPU per check and its latency (src/modules/fraud-guard)`,
  async run(bench) {
    const pool = createPool(bench.databaseUrl, 4);
    const prisma = createPrismaClient(pool);
    const defaults = loadConfig({}).fraudGuard;
    const prefix = `tern_bench_${bench.runId}_guard`;
    const guard = new FraudGuard({
      prisma,
      redis: bench.redis,
      prefix,
      clock: systemClock,
      metrics: new Metrics(),
      logger: pino({ level: 'warn' }),
      rules: new GuardRuleBook(prisma, systemClock, defaults),
      defaults,
    });
    try {
      const account = (await prisma.account.findFirstOrThrow({ select: { id: true } })).id;
      const check = (i: number) =>
        guard.check({ id: newId('msg'), accountId: account, to: ordinary(i), text: 'Your code is 123456' });
      await runChecks(WARM_UP, check);
      const cpu = process.cpuUsage();
      const started = performance.now();
      const latencies = await runChecks(CHECKS, (i) => check(WARM_UP + i));
      const wallMs = performance.now() - started;
      const used = process.cpuUsage(cpu);
      return resultOf(latencies, wallMs, (used.user + used.system) / 1000 / CHECKS);
    } finally {
      // The client's disconnect ends its pool.
      await prisma.$disconnect();
      await deleteKeys(bench.redis, prefix);
    }
  },
};

/** Each check timed, `CONCURRENCY` at a time; the latencies sorted. */
async function runChecks(count: number, check: (i: number) => Promise<unknown>): Promise<number[]> {
  const latencies: number[] = [];
  let next = 0;
  const lane = async () => {
    while (next < count) {
      const i = next++;
      const started = performance.now();
      await check(i);
      latencies.push(performance.now() - started);
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, lane));
  return latencies.sort((a, b) => a - b);
}

function resultOf(latencies: number[], wallMs: number, cpuMsPerCheck: number): FlowResult {
  const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? 0;
  return {
    kind: 'flow',
    items: CHECKS,
    intakePerSecond: (CHECKS / wallMs) * 1000,
    accepted: CHECKS,
    completed: CHECKS,
    failed: 0,
    wallSeconds: wallMs / 1000,
    perSecond: (CHECKS / wallMs) * 1000,
    p50Ms: at(0.5),
    p99Ms: at(0.99),
    incomplete: null,
    costs: {
      serviceCpuMsPer: cpuMsPerCheck,
      loadGeneratorCorePercent: 0,
      machineBusyPercent: 0,
      pgTransactionsPerMessage: null,
    },
    profile: null,
  };
}

async function deleteKeys(redis: Redis, prefix: string): Promise<void> {
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
    if (keys.length > 0) await redis.del(...keys);
    cursor = next;
  } while (cursor !== '0');
}
