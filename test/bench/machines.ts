// What each role of the several-machines layout costs (docs/operations.md, "Running on several
// machines"): one `api` and one `worker` process, compiled as `npm start` runs them, on a Redis of
// this run's own and a fresh database; 20,000 messages sent over REST at 64 connections and
// delivered. Reports the CPU per message of each process, of the PostgreSQL backends serving
// them and of Redis, and the connections each process holds to PostgreSQL and Redis, counted by
// socket. Usage: npm run bench:machines [-- --messages N] [-- --webhook]
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import pg from 'pg';
import { withDatabase } from '../../src/db/schema-engine.js';
import {
  type ChildHandle,
  freePort,
  killAll,
  logIn,
  NPM_START_HEAP_FLAGS,
  pollUntil,
  ROOT,
  runCli,
  spawnChild,
  startRedisServer,
} from '../support/tern-processes.js';
import { WebhookReceiver } from '../support/webhook-receiver.js';
import { busyPercent, cpuMilliseconds, machineCpu } from './machine.js';
import { TEXT } from './scenarios/send-rest.js';

const { values: args } = parseArgs({
  options: { messages: { type: 'string', default: '20000' }, webhook: { type: 'boolean', default: false } },
});
const MESSAGES = Number(args.messages);
const WARM_UP = 1_000;
const CONNECTIONS = 64;
const SERVER_URL = process.env.BENCH_DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';
const PG_PORT = new URL(SERVER_URL).port || '5432';

/** Sockets each process holds to `port`, from `ss` (its owner's pid). */
function socketsTo(port: string | number): Map<number, number> {
  const output = execFileSync('ss', ['-Htnp', 'state', 'established', `( dport = :${port} )`], {
    encoding: 'utf8',
  });
  const counts = new Map<number, number>();
  for (const match of output.matchAll(/pid=(\d+)/g))
    counts.set(Number(match[1]), (counts.get(Number(match[1])) ?? 0) + 1);
  return counts;
}

/** PostgreSQL backends serving the run's database, for their CPU. */
async function backends(admin: pg.Pool, database: string): Promise<number[]> {
  const { rows } = await admin.query<{ pid: number }>(
    'SELECT pid FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()',
    [database],
  );
  return rows.map((row) => row.pid);
}

async function send(base: string, token: string, amount: number, numbers: { next: number }): Promise<number> {
  let accepted = 0;
  const instance = autocannon({
    url: `${base}/v1/messages/send`,
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    connections: CONNECTIONS,
    amount,
    requests: [
      {
        setupRequest: (request) => {
          numbers.next += 1;
          // Never ending 0001 or 0002, which the simulator fails or answers.
          const to = `55119${String(10_000_000 + numbers.next * 10 + 7)}`;
          return { ...request, body: JSON.stringify({ to, message: TEXT }) };
        },
        onResponse: (status) => {
          if (status === 202) accepted += 1;
        },
      },
    ],
  });
  await instance;
  return accepted;
}

async function main() {
  execFileSync(
    process.execPath,
    [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json'],
    {
      cwd: ROOT,
      stdio: 'inherit',
    },
  );
  const run = randomBytes(4).toString('hex');
  const databaseName = `tern_machines_${run}`;
  const databaseUrl = withDatabase(SERVER_URL, databaseName);
  const redis = await startRedisServer(await freePort());
  const admin = new pg.Pool({ connectionString: SERVER_URL, max: 2 });
  const receiver = args.webhook ? await WebhookReceiver.start() : null;
  const env: Record<string, string> = {
    NODE_ENV: 'production',
    HOST: '127.0.0.1',
    DATABASE_URL: databaseUrl,
    REDIS_URL: redis.url,
    REDIS_PREFIX: `tern_machines_${run}`,
    JWT_SECRET: randomBytes(32).toString('hex'),
    WEBHOOK_SECRET_KEY: randomBytes(32).toString('hex'),
    LOG_LEVEL: 'warn',
    METRICS_PORT: '0',
    SIMULATOR_DELAY_MS: '0',
    DEMO_ACCOUNT: 'false',
    RATE_LIMIT_MAX: '1000000000',
    RATE_LIMIT_SEND_MESSAGE_MAX: '0',
    // One account sends to few number ranges, as a pumping bot would: the fraud guard is off here.
    FRAUD_FLOOD_IDENTICAL: '0',
    FRAUD_FLOOD_MAX: '0',
    FRAUD_VELOCITY_MAX: '0',
    WEBHOOK_ALLOW_INSECURE: 'true',
    WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
    PATH: process.env.PATH ?? '',
  };
  const processes: Record<'api' | 'worker', ChildHandle | null> = { api: null, worker: null };
  try {
    const email = `machines-${run}@tern.local`;
    const password = randomBytes(12).toString('hex');
    await runCli(['accounts', 'create', '--email', email, '--password', password], env);
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const startRole = (role: 'api' | 'worker', extra: Record<string, string> = {}) =>
      spawnChild(`tern ${role}`, process.execPath, [...NPM_START_HEAP_FLAGS, 'dist/main.js', role], {
        ...env,
        ...extra,
      });
    processes.api = startRole('api', { PORT: String(port) });
    // LOG_LEVEL=warn keeps `tern started` out of the output: the API is up once it answers.
    await pollUntil(
      'the API to answer',
      async () => ((await fetch(`${base}/health/live`).catch(() => null))?.ok ? true : undefined),
      { timeoutMs: 60_000 },
    );
    processes.worker = startRole('worker');
    const token = await logIn(base, { email, password });
    if (receiver) {
      const registered = await fetch(`${base}/v1/webhooks`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
        body: JSON.stringify({ url: `${receiver.url}/bench`, events: ['message.delivered'] }),
      });
      if (registered.status !== 201) throw new Error(`webhook registration answered ${registered.status}`);
    }
    const db = new pg.Pool({ connectionString: databaseUrl, max: 1 });
    const deliveredCount = async () =>
      Number((await db.query("SELECT count(*) AS n FROM messages WHERE status = 'delivered'")).rows[0].n);
    const numbers = { next: 0 };
    const settle = async (expected: number) =>
      pollUntil(
        `${expected} messages delivered`,
        async () => ((await deliveredCount()) >= expected ? true : undefined),
        {
          timeoutMs: 300_000,
          intervalMs: 200,
        },
      );
    await pollUntil(
      'the worker to run',
      async () => (socketsTo(redis.port).has(processes.worker!.child.pid!) ? true : undefined),
      {
        timeoutMs: 60_000,
      },
    );

    await send(base, token, WARM_UP, numbers);
    await settle(WARM_UP);

    const pids = {
      api: processes.api.child.pid!,
      worker: processes.worker.child.pid!,
      redis: redis.handle.child.pid!,
    };
    const backendCpu = new Map<number, { first: number; last: number }>();
    const sampleBackends = async () => {
      for (const pid of await backends(admin, databaseName)) {
        const cpu = cpuMilliseconds([pid]);
        const seen = backendCpu.get(pid);
        backendCpu.set(pid, { first: seen?.first ?? cpu, last: cpu });
      }
    };
    await sampleBackends();
    const peak = { apiPg: 0, workerPg: 0, apiRedis: 0, workerRedis: 0 };
    const sampleSockets = () => {
      const toPg = socketsTo(PG_PORT);
      const toRedis = socketsTo(redis.port);
      peak.apiPg = Math.max(peak.apiPg, toPg.get(pids.api) ?? 0);
      peak.workerPg = Math.max(peak.workerPg, toPg.get(pids.worker) ?? 0);
      peak.apiRedis = Math.max(peak.apiRedis, toRedis.get(pids.api) ?? 0);
      peak.workerRedis = Math.max(peak.workerRedis, toRedis.get(pids.worker) ?? 0);
    };
    const sampler = setInterval(() => {
      sampleSockets();
      void sampleBackends();
    }, 250);
    const before = {
      api: cpuMilliseconds([pids.api]),
      worker: cpuMilliseconds([pids.worker]),
      redis: cpuMilliseconds([pids.redis]),
      machine: machineCpu(),
      at: Date.now(),
    };
    const accepted = await send(base, token, MESSAGES, numbers);
    await settle(WARM_UP + accepted);
    if (receiver)
      await pollUntil(
        'every callback',
        async () => (receiver.at('/bench').length >= WARM_UP + accepted ? true : undefined),
        {
          timeoutMs: 300_000,
        },
      );
    clearInterval(sampler);
    await sampleBackends();
    const seconds = (Date.now() - before.at) / 1000;
    const per = (ms: number) => ms / accepted;
    const cost = {
      api: per(cpuMilliseconds([pids.api]) - before.api),
      worker: per(cpuMilliseconds([pids.worker]) - before.worker),
      postgres: per([...backendCpu.values()].reduce((sum, { first, last }) => sum + last - first, 0)),
      redis: per(cpuMilliseconds([pids.redis]) - before.redis),
    };
    const cores = (msPerMessage: number, rate: number) => ((msPerMessage * rate) / 1000).toFixed(1);
    const idle = { pg: socketsTo(PG_PORT), redis: socketsTo(redis.port) };
    const lines = [
      `${accepted.toLocaleString('en')} messages accepted and delivered in ${seconds.toFixed(1)} s (${Math.round(accepted / seconds)} messages/s)${receiver ? ', each with a message.delivered callback' : ''}; machine ${busyPercent(before.machine, machineCpu()).toFixed(0)} % busy`,
      '',
      '| Process | CPU per message | cores at 1,000/s | cores at 10,000/s | PostgreSQL connections (peak, now) | Redis connections (peak, now) |',
      '|---|---|---|---|---|---|',
      `| api | ${cost.api.toFixed(3)} ms | ${cores(cost.api, 1_000)} | ${cores(cost.api, 10_000)} | ${peak.apiPg}, ${idle.pg.get(pids.api) ?? 0} | ${peak.apiRedis}, ${idle.redis.get(pids.api) ?? 0} |`,
      `| worker | ${cost.worker.toFixed(3)} ms | ${cores(cost.worker, 1_000)} | ${cores(cost.worker, 10_000)} | ${peak.workerPg}, ${idle.pg.get(pids.worker) ?? 0} | ${peak.workerRedis}, ${idle.redis.get(pids.worker) ?? 0} |`,
      `| PostgreSQL backends | ${cost.postgres.toFixed(3)} ms | ${cores(cost.postgres, 1_000)} | ${cores(cost.postgres, 10_000)} | | |`,
      `| Redis | ${cost.redis.toFixed(3)} ms | ${cores(cost.redis, 1_000)} | ${cores(cost.redis, 10_000)} | | |`,
    ];
    process.stdout.write(`${lines.join('\n')}\n`);
    await db.end();
  } finally {
    await killAll();
    await receiver?.close();
    await admin
      .query(`DROP DATABASE IF EXISTS ${pg.escapeIdentifier(databaseName)} WITH (FORCE)`)
      .catch(() => undefined);
    await admin.end();
  }
}

await main();
