import { randomBytes } from 'node:crypto';
import { runCli } from '../../support/tern-processes.js';
import type { Bench, Service } from '../bench.js';
import type { ReadResult, RunnableScenario } from './scenario.js';

const DAYS = 30;
const COUNTRIES = 25;
const END = new Date('2026-10-01T00:00:00Z');
const SAMPLES = 200;
/** Documents the attacker keeps in flight, each of ALIASES splits by country over DAYS days. */
const ATTACKERS = 6;
const ALIASES = 10;
/** The default request budget (RATE_LIMIT_MAX 600 a minute): the most the attacker may send. */
const REQUESTS_PER_MINUTE = 600;
const PACE_MS = (ATTACKERS * 60_000) / REQUESTS_PER_MINUTE;

const SPLITS = `query ($from: DateTime, $to: DateTime) {
${Array.from(
  { length: ALIASES },
  (_, index) =>
    `  s${index}: messageStats(from: $from, to: $to, groupBy: [COUNTRY]) { ... on MessageStats { totals { country messages } } }`,
).join('\n')}
}`;

/**
 * The attacker's statistics as issue 33 measured them: DAYS days of quarter-hours, COUNTRIES
 * countries, four slots each (288,000 rows), written straight into the rollups.
 */
async function seed(bench: Bench): Promise<string> {
  const { rows } = await bench.database.query<{ id: string }>('SELECT id FROM accounts LIMIT 1');
  const account = rows[0]!.id;
  await bench.database.query(
    `INSERT INTO message_stats (account_id, bucket, campaign_id, country, carrier, slot, messages, segments, sent, delivered, failed)
     SELECT $1, $2::timestamptz - make_interval(mins => 15 * q), '', 'C' || c, 'carrier-a', s, 3, 4, 0, 3, 0
     FROM generate_series(1, $3::int * 96) AS q, generate_series(1, $4::int) AS c, generate_series(0, 3) AS s`,
    [account, END.toISOString(), DAYS, COUNTRIES],
  );
  await bench.database.query(
    `INSERT INTO message_stat_totals (account_id, bucket, slot, messages, segments, sent, delivered, failed)
     SELECT account_id, bucket, slot, sum(messages), sum(segments), sum(sent), sum(delivered), sum(failed)
     FROM message_stats GROUP BY 1, 2, 3`,
  );
  await bench.database.query('VACUUM ANALYZE message_stats, message_stat_totals');
  return account;
}

/** Another tenant of the same Tern, with a login token of its own. */
async function otherTenant(bench: Bench, service: Service): Promise<string> {
  const email = `victim-${randomBytes(4).toString('hex')}@tern.local`;
  const password = randomBytes(12).toString('hex');
  await runCli(['accounts', 'create', '--email', email, '--password', password], {
    DATABASE_URL: bench.databaseUrl,
    REDIS_URL: process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379',
    LOG_LEVEL: 'warn',
  });
  const response = await fetch(`${service.url}/v1/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email, password }),
  });
  const body = (await response.json()) as { token?: string };
  if (!body.token) throw new Error(`the other tenant's login answered ${response.status}`);
  return `Bearer ${body.token}`;
}

/** The other tenant's GET /v1/settings, one at a time: its p50, p95, p99. */
async function timeSettings(service: Service, authorization: string, name: string) {
  const durations: number[] = [];
  for (let i = 0; i < SAMPLES; i++) {
    const started = performance.now();
    const response = await fetch(`${service.url}/v1/settings`, { headers: { authorization } });
    await response.arrayBuffer();
    if (response.status !== 200) throw new Error(`${name}: GET /v1/settings answered ${response.status}`);
    durations.push(performance.now() - started);
  }
  durations.sort((a, b) => a - b);
  const at = (q: number) => durations[Math.min(durations.length - 1, Math.floor(q * durations.length))]!;
  return { name, requests: durations.length, p50Ms: at(0.5), p95Ms: at(0.95), p99Ms: at(0.99) };
}

/** ATTACKERS loops sending the split document until told to stop; what each answer was. */
function attack(service: Service, authorization: string) {
  const answers = new Map<number, number>();
  let running = true;
  const variables = {
    from: new Date(END.getTime() - DAYS * 86_400_000).toISOString(),
    to: END.toISOString(),
  };
  const loops = Array.from({ length: ATTACKERS }, async () => {
    while (running) {
      const started = performance.now();
      const response = await fetch(`${service.url}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization },
        body: JSON.stringify({ query: SPLITS, variables }),
      });
      await response.arrayBuffer();
      answers.set(response.status, (answers.get(response.status) ?? 0) + 1);
      // Together the loops send at the request budget's pace (RATE_LIMIT_MAX a window), no faster.
      const wait = PACE_MS - (performance.now() - started);
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    }
  });
  return {
    answers,
    stop: async () => {
      running = false;
      await Promise.all(loops);
    },
  };
}

export const statsFairness: RunnableScenario = {
  name: 'stats-fairness',
  describe: `another tenant's GET /v1/settings, quiet and while an attacker keeps ${ATTACKERS} documents of ${ALIASES} aliased splits by country over ${DAYS} days (${(DAYS * 96 * COUNTRIES * 4).toLocaleString('en')} rollup rows) in flight, at the default request budget's pace, its statistics budget lifted`,
  async run(bench, layout): Promise<ReadResult> {
    await seed(bench);
    // The statistics budget is lifted so that what holds is the rest (slots, the pool, the time
    // limit); the request budget is the default one, which the attacker spends at its pace.
    const service = await bench.startGateway(layout, {
      workers: false,
      env: { STATS_BUDGET: '100000000', RATE_LIMIT_MAX: String(REQUESTS_PER_MINUTE) },
    });
    try {
      const attacker = await bench.bearer(service);
      const victim = await otherTenant(bench, service);
      const quiet = await timeSettings(service, victim, 'GET /v1/settings, quiet');
      const running = attack(service, attacker);
      let attacked: Awaited<ReturnType<typeof timeSettings>>;
      try {
        attacked = await timeSettings(service, victim, 'GET /v1/settings, attacker at its maximum');
      } finally {
        await running.stop();
      }
      const answered = [...running.answers].map(([status, count]) => `${count}× ${status}`).join(', ');
      const bound = 2 * quiet.p95Ms + 50;
      return {
        kind: 'reads',
        data: `attacker's documents answered ${answered}; p95 bound 2 × quiet + 50 ms = ${bound.toFixed(1)} ms, ${attacked.p95Ms <= bound ? 'held' : 'NOT held'}`,
        reads: [quiet, attacked],
        firstError: null,
        profile: null,
      };
    } finally {
      await bench.stopService(service);
    }
  },
};
