import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { Redis } from 'ioredis';
import pg from 'pg';
import { migrateDatabase } from '../../src/db/migrations.js';
import { withDatabase } from '../../src/db/schema-engine.js';
import {
  type ChildHandle,
  freePort,
  pollUntil,
  ROOT,
  runCli,
  runCliCommand,
  spawnChild,
} from '../support/tern-processes.js';
import { busyPercent, cpuMilliseconds, machineCpu, processTree } from './machine.js';
import {
  HARNESS_SQL,
  monotonicMicros,
  type ProfileSummary,
  redisCommandStats,
  redisDelta,
  resetStatements,
  sampleBackends,
  statementsAvailable,
  summarizeCpuProfiles,
  topStatements,
} from './profile.js';
import type { Costs, FlowResult, LoadResult } from './scenarios/scenario.js';

// The V8 flags `npm start` gives Tern (package.json), so that the bench measures the same process.
const PRODUCT_NODE_FLAGS = (
  (
    JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }
  ).scripts.start!.match(/node ((?:--\S+ )*)dist\/main\.js/)?.[1] ?? ''
)
  .split(' ')
  .filter(Boolean);

export const CONNECTIONS = 64;
export const LOAD_SECONDS = 20;
export const WARMUP_SECONDS = 2;
const READY_TIMEOUT_MS = 45_000;
const REQUEST_TIMEOUT_SECONDS = 10;
const HARNESS_APPLICATION = 'tern-bench';

export interface Layout {
  key: 'one' | 'all';
  label: string;
  apiProcesses: number;
  /** How the processes of each kind of scenario are laid out, for the report. */
  describe: { acceptance: string; flow: string; baseline: string };
}

const CORES = os.availableParallelism();

export const LAYOUTS: readonly Layout[] = [
  {
    key: 'one',
    label: 'one process',
    apiProcesses: 1,
    describe: {
      acceptance: '1 `api` process',
      flow: '1 `all` process (API and workers)',
      baseline: '1 process',
    },
  },
  {
    key: 'all',
    label: `all cores (${CORES})`,
    apiProcesses: CORES,
    describe: {
      acceptance: `\`api\` with WEB_CONCURRENCY=${CORES} (${CORES} processes, one port)`,
      flow: `\`all\` with WEB_CONCURRENCY=${CORES} (${CORES} API processes + 1 worker process)`,
      baseline: `${CORES} processes (node:cluster)`,
    },
  },
];

/** One request the load generator repeats, each time with a new destination number. */
export interface RequestSpec {
  path: string;
  headers: Record<string, string>;
  body(to: string): string;
  accepted(status: number, body: string): boolean;
}

/** Processes started for one scenario, with the Redis prefix and the measurements that are theirs. */
export interface Service {
  readonly name: string;
  readonly url: string;
  pids(): number[];
  /** Throws, with what the processes printed, when one of them has exited. */
  assertRunning(): void;
}

interface RunningService extends Service {
  handles: ChildHandle[];
  prefix: string;
  profileDir: string | null;
  transactionsAtStart: number;
}

/** Destination numbers never repeat within a run; 0001 and 0002 endings (failure, reply) are skipped. */
class NumberSequence {
  private next = 0;

  take(): string {
    do this.next += 1;
    while (this.next % 10_000 === 1 || this.next % 10_000 === 2);
    return `55119${String(this.next).padStart(8, '0')}`;
  }
}

interface Driven {
  accepted: number;
  rejected: number;
  /** The first answer that was not an acceptance, or connection error, to say what went wrong. */
  firstError: string | null;
  result: autocannon.Result;
}

export interface Window {
  fromMicros: number;
  toMicros: number;
  costs: Omit<Costs, 'pgTransactionsPerMessage'>;
  redis: ProfileSummary['redis'];
  pgActivity: ProfileSummary['pgActivity'] | null;
  pgStatements: ProfileSummary['pgStatements'];
}

export interface BenchOptions {
  /** Any database of the PostgreSQL server; the bench creates its own beside it. */
  serverUrl: string;
  redisUrl: string;
  /** Where `--profile` writes CPU profiles; null without `--profile`. */
  profileDir: string | null;
  /** Where each service's output is written when it stops. */
  logDir: string;
}

/**
 * One bench run: a fresh database with one account, and the processes each scenario starts
 * on it, every one with a Redis prefix of its own. `close()` drops and deletes all of it.
 */
export class Bench {
  private readonly numbers = new NumberSequence();
  private readonly prefixes: string[] = [];
  private readonly running = new Set<RunningService>();
  private token: string | null = null;
  private statements: boolean | null = null;
  /** Names the log files of the services started from now on: the scenario and layout running. */
  logLabel = 'bench';

  private constructor(
    readonly options: BenchOptions,
    readonly runId: string,
    readonly databaseName: string,
    readonly databaseUrl: string,
    readonly database: pg.Pool,
    readonly redis: Redis,
    readonly account: { id: string; email: string; password: string },
    /** Production refuses to start without them; every process of the run shares them. */
    private readonly secrets: { JWT_SECRET: string; WEBHOOK_SECRET_KEY: string },
  ) {}

  static async create(options: BenchOptions): Promise<Bench> {
    // Tern runs as `npm start` runs it: compiled to dist/ first.
    execFileSync(
      process.execPath,
      [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json'],
      { cwd: ROOT, stdio: 'inherit' },
    );
    const runId = randomBytes(4).toString('hex');
    const databaseName = `tern_bench_${runId}`;
    const databaseUrl = withDatabase(options.serverUrl, databaseName);
    const email = `bench-${runId}@tern.local`;
    const password = randomBytes(12).toString('hex');
    // Created and migrated as a starting Tern does (main.ts): the CLI only uses a database that exists.
    await migrateDatabase(databaseUrl);
    const created = (await runCli(['accounts', 'create', '--email', email, '--password', password], {
      DATABASE_URL: databaseUrl,
      REDIS_URL: options.redisUrl,
      LOG_LEVEL: 'warn',
    })) as { account: string };
    const database = new pg.Pool({
      connectionString: databaseUrl,
      max: 2,
      application_name: HARNESS_APPLICATION,
    });
    const redis = new Redis(options.redisUrl);
    return new Bench(
      options,
      runId,
      databaseName,
      databaseUrl,
      database,
      redis,
      { id: created.account, email, password },
      {
        JWT_SECRET: randomBytes(32).toString('hex'),
        WEBHOOK_SECRET_KEY: randomBytes(32).toString('hex'),
      },
    );
  }

  /**
   * Gives the account segment quotas far above what a run sends and one allowed country (the
   * bench's numbers are Brazilian), as the operator's `accounts limits` would; `false` lifts them.
   */
  async setQuotas(on: boolean): Promise<void> {
    const [limit, countries] = on ? [2_000_000_000, ['BR']] : [null, []];
    await this.database.query(
      `INSERT INTO account_quotas (account_id, daily_segments, monthly_segments, allowed_countries)
       VALUES ($1, $2, $2, $3)
       ON CONFLICT (account_id) DO UPDATE SET daily_segments = $2, monthly_segments = $2, allowed_countries = $3`,
      [this.account.id, limit, countries],
    );
  }

  /** Empties what the previous scenario left, so every scenario starts from the same tables. */
  async resetMessages(): Promise<void> {
    await this.database.query(
      'TRUNCATE messages, simulated_submissions, message_stats, message_stat_totals, delivery_time_stats CASCADE',
    );
    // So that no scenario pays for the previous one's dirty pages.
    await this.database.query('CHECKPOINT');
  }

  /**
   * Tern on its own Redis prefix: API only, or API and workers, as the layout says; `env` adds to
   * the settings, and `publicUrl` sets PUBLIC_URL to the gateway's own address, where an HTTP
   * carrier's fake provider calls back.
   */
  async startGateway(
    layout: Layout,
    options: { workers: boolean; env?: Record<string, string>; publicUrl?: boolean },
  ): Promise<Service> {
    const transactionsAtStart = await this.transactions();
    const prefix = this.newPrefix();
    const port = await freePort();
    const env = {
      ...this.environment(prefix, port),
      ...(options.publicUrl ? { PUBLIC_URL: `http://127.0.0.1:${port}` } : {}),
      ...options.env,
    };
    const profileDir = this.newProfileDir(`gateway-${layout.key}-${prefix}`);
    const handles: ChildHandle[] = [];
    // Several API processes are the product's own WEB_CONCURRENCY; with workers, the `all` role adds one worker process.
    const role = options.workers ? 'all' : 'api';
    const name =
      layout.apiProcesses === 1 ? `tern ${role}` : `tern ${role}, WEB_CONCURRENCY=${layout.apiProcesses}`;
    handles.push(
      this.spawn(
        name,
        ['dist/main.js', role],
        { ...env, WEB_CONCURRENCY: String(layout.apiProcesses) },
        profileDir,
      ),
    );
    return this.started(
      `gateway (${options.workers ? layout.describe.flow : layout.describe.acceptance})`,
      layout,
      port,
      handles,
      prefix,
      profileDir,
      transactionsAtStart,
    );
  }

  /** The baseline server, laid out as the gateway's API is; `batching` makes it batch its sends as Tern's acceptance does. */
  async startBaseline(layout: Layout, { batching = false } = {}): Promise<Service> {
    return this.startHarnessServer(layout, 'baseline', 'test/bench/baseline-server.ts', {
      BASELINE_ACCOUNT: this.account.id,
      BASELINE_BATCHING: String(batching),
    });
  }

  /** The server that answers a send with no work, over Fastify alone and through a bare Yoga. */
  async startGraphqlFloor(layout: Layout): Promise<Service> {
    return this.startHarnessServer(layout, 'graphql-floor', 'test/bench/graphql-floor-server.ts', {});
  }

  /** One of the harness's own servers, laid out as the gateway's API is. */
  private async startHarnessServer(
    layout: Layout,
    name: string,
    script: string,
    extraEnv: Record<string, string>,
  ): Promise<Service> {
    const transactionsAtStart = await this.transactions();
    const prefix = this.newPrefix();
    const port = await freePort();
    const env = { ...this.environment(prefix, port), ...extraEnv };
    const profileDir = this.newProfileDir(`${name}-${layout.key}-${prefix}`);
    const args =
      layout.apiProcesses === 1 ? [script] : ['test/bench/cluster.ts', String(layout.apiProcesses), script];
    const handles = [this.spawn(`${name} ×${layout.apiProcesses}`, args, env, profileDir)];
    return this.started(
      `${name} (${layout.describe.baseline})`,
      layout,
      port,
      handles,
      prefix,
      profileDir,
      transactionsAtStart,
    );
  }

  /**
   * Runs Tern's CLI on the bench database with the run's secrets, so that what it seals the
   * gateways open; throws with what it printed when it fails. PUBLIC_URL is set for `carriers
   * add` of an HTTP carrier, which refuses without one; each gateway is given its own.
   */
  async cli(args: string[]): Promise<void> {
    const run = await runCliCommand(args, {
      DATABASE_URL: this.databaseUrl,
      REDIS_URL: this.options.redisUrl,
      LOG_LEVEL: 'warn',
      PUBLIC_URL: 'http://127.0.0.1',
      ...this.secrets,
    });
    if (run.code !== 0)
      throw new Error(`the CLI (${args[0]} ${args[1]}) exited with ${run.code}: ${run.stderr}`);
  }

  /** A destination number no other request of the run sends to. */
  takeNumber(): string {
    return this.numbers.take();
  }

  /** A bearer token, from logging in through the gateway once per run. */
  async bearer(service: Service): Promise<string> {
    if (this.token) return `Bearer ${this.token}`;
    const response = await fetch(`${service.url}/v1/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: this.account.email, password: this.account.password }),
    });
    const body = (await response.json()) as { token?: string };
    if (!response.ok || !body.token)
      throw new Error(`login failed with ${response.status}: ${JSON.stringify(body)}`);
    this.token = body.token;
    return `Bearer ${this.token}`;
  }

  /** The header the gateway scenarios send, for a server that reads none; a stand-in of a token's length before any login. */
  bearerSoFar(): string {
    return `Bearer ${this.token ?? '0'.repeat(190)}`;
  }

  /**
   * Runs a scenario's work on a service, then stops it; the figures that only exist once the
   * processes have exited (transactions they committed, their CPU profiles) are added then.
   */
  async withService<T extends LoadResult | FlowResult>(
    service: Service,
    work: () => Promise<{ result: T; window: Window }>,
  ): Promise<T> {
    const running = service as RunningService;
    let outcome: { result: T; window: Window };
    try {
      outcome = await work();
    } finally {
      await this.stop(running);
    }
    const { result, window } = outcome;
    const { rows } = await this.database.query<{ count: string }>('SELECT count(*) FROM messages');
    const messages = Number(rows[0]?.count ?? 0);
    const transactions = (await this.transactions()) - running.transactionsAtStart;
    const perItems = result.kind === 'load' ? result.accepted + result.errors : result.items;
    const profile: ProfileSummary | null = running.profileDir
      ? {
          cpu: summarizeCpuProfiles(running.profileDir, window, perItems, ROOT),
          redis: window.redis,
          pgActivity: window.pgActivity ?? { averageBackends: 0, states: [] },
          pgStatements: window.pgStatements,
          notes: window.pgStatements
            ? []
            : [
                'pg_stat_statements is not loaded by this PostgreSQL server (shared_preload_libraries); no per-statement figures.',
              ],
        }
      : null;
    return {
      ...result,
      costs: { ...window.costs, pgTransactionsPerMessage: messages > 0 ? transactions / messages : null },
      profile,
    };
  }

  /** A warm-up, then LOAD_SECONDS at CONNECTIONS connections. */
  async load(service: Service, spec: RequestSpec): Promise<{ result: LoadResult; window: Window }> {
    await this.drive(service, spec, { seconds: WARMUP_SECONDS });
    const watch = await this.watch(service);
    const run = await this.drive(service, spec, { seconds: LOAD_SECONDS });
    const requests = run.accepted + run.rejected;
    const window = await watch.stop(requests);
    const seconds = run.result.duration;
    return {
      result: {
        kind: 'load',
        accepted: run.accepted,
        errors: run.rejected + run.result.errors,
        firstError: run.firstError,
        acceptedPerSecond: run.accepted / seconds,
        p50Ms: run.result.latency.p50,
        p99Ms: run.result.latency.p99,
        costs: { ...window.costs, pgTransactionsPerMessage: null },
        profile: null,
      },
      window,
    };
  }

  /**
   * Sends `items` messages at CONNECTIONS connections and waits until every one has reached
   * a final status (or `deadlineMs` has passed), after a small warm-up batch that has to be
   * delivered first, which is also how the workers are known to be running.
   */
  async flow(
    service: Service,
    spec: RequestSpec,
    items: number,
    deadlineMs: number,
  ): Promise<{ result: FlowResult; window: Window }> {
    const warmup = await this.drive(service, spec, { amount: 500 });
    const warm = await this.settled(service, new Date(0), warmup.accepted, 60_000);
    if (!warm.done)
      throw new Error(
        `only ${warm.final} of ${warmup.accepted} warm-up messages reached a final status within 60 s`,
      );
    const watch = await this.watch(service);
    const start = new Date();
    const sent = await this.drive(service, spec, { amount: items });
    const progress = await this.settled(
      service,
      start,
      sent.accepted,
      deadlineMs - (Date.now() - start.getTime()),
    );
    const window = await watch.stop(items);
    const { rows } = await this.database.query<{
      delivered: string;
      failed: string;
      last: Date | null;
      p50: number | null;
      p99: number | null;
    }>(
      `SELECT count(*) FILTER (WHERE status = 'delivered') AS delivered,
              count(*) FILTER (WHERE status = 'failed') AS failed,
              max(delivered_at) AS last,
              percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM delivered_at - created_at)) * 1000 AS p50,
              percentile_cont(0.99) WITHIN GROUP (ORDER BY extract(epoch FROM delivered_at - created_at)) * 1000 AS p99
       FROM messages WHERE created_at >= $1`,
      [start],
    );
    const row = rows[0]!;
    const completed = Number(row.delivered);
    const wallSeconds = ((row.last ?? new Date()).getTime() - start.getTime()) / 1000;
    return {
      result: {
        kind: 'flow',
        items,
        intakePerSecond: sent.accepted / sent.result.duration,
        accepted: sent.accepted,
        errors: sent.rejected + sent.result.errors,
        firstError: sent.firstError,
        completed,
        failed: Number(row.failed),
        wallSeconds,
        perSecond: completed / wallSeconds,
        p50Ms: row.p50 ?? 0,
        p99Ms: row.p99 ?? 0,
        incomplete: progress.done
          ? null
          : `${progress.final} of ${sent.accepted} reached a final status within ${Math.round(deadlineMs / 1000)} s`,
        costs: { ...window.costs, pgTransactionsPerMessage: null },
        profile: null,
      },
      window,
    };
  }

  /** Stops every process still running, drops the database and deletes every key of the run. */
  async close(): Promise<void> {
    await Promise.allSettled([...this.running].map((service) => this.stop(service)));
    // end() can resolve before its sockets close; the forced DROP below then ends one of them,
    // which without a listener would be an unhandled error.
    this.database.on('error', () => undefined);
    await this.database.end().catch(() => undefined);
    const admin = new pg.Client({ connectionString: withDatabase(this.options.serverUrl, 'postgres') });
    await admin.connect();
    try {
      await admin.query(`DROP DATABASE IF EXISTS ${pg.escapeIdentifier(this.databaseName)} WITH (FORCE)`);
    } finally {
      await admin.end();
    }
    for (const prefix of this.prefixes) await this.deleteKeys(prefix);
    this.redis.disconnect();
  }

  private async drive(
    service: Service,
    spec: RequestSpec,
    limit: { seconds: number } | { amount: number },
  ): Promise<Driven> {
    let accepted = 0;
    let rejected = 0;
    let firstError: string | null = null;
    const instance = autocannon({
      url: `${service.url}${spec.path}`,
      method: 'POST',
      headers: spec.headers,
      connections: CONNECTIONS,
      timeout: REQUEST_TIMEOUT_SECONDS,
      ...('seconds' in limit ? { duration: limit.seconds } : { amount: limit.amount }),
      requests: [
        {
          setupRequest: (request) => ({ ...request, body: spec.body(this.numbers.take()) }),
          onResponse: (status, body) => {
            if (spec.accepted(status, body)) {
              accepted += 1;
              return;
            }
            rejected += 1;
            firstError ??= `HTTP ${status}: ${body.slice(0, 300)}`;
          },
        },
      ],
    });
    instance.on('reqError', (error: Error) => {
      firstError ??= error.message;
    });
    // A fixed amount never completes against a dead server; nothing here may wait for ever.
    const guard = setTimeout(() => instance.stop(), 120_000);
    try {
      const result = await instance;
      service.assertRunning();
      return { accepted, rejected, firstError, result };
    } finally {
      clearTimeout(guard);
    }
  }

  /** Polls until `expected` messages created since `since` are delivered or failed. */
  private async settled(
    service: Service,
    since: Date,
    expected: number,
    timeoutMs: number,
  ): Promise<{ done: boolean; final: number }> {
    const count = async () => {
      const { rows } = await this.database.query<{ final: string }>(
        `${HARNESS_SQL} SELECT count(*) AS final FROM messages WHERE created_at >= $1 AND status IN ('delivered', 'failed')`,
        [since],
      );
      return Number(rows[0]?.final ?? 0);
    };
    try {
      await pollUntil(
        'messages to reach a final status',
        async () => {
          service.assertRunning();
          return (await count()) >= expected ? true : undefined;
        },
        { timeoutMs: Math.max(timeoutMs, 0), intervalMs: 100 },
      );
      return { done: true, final: expected };
    } catch (error) {
      if (!(error instanceof Error) || !error.message.startsWith('timed out')) throw error;
      return { done: false, final: await count() };
    }
  }

  /** Starts the measured window: CPU counters, and the profile probes under `--profile`. */
  async watch(service: Service) {
    const profiling = (service as RunningService).profileDir !== null;
    const pids = service.pids();
    const cpuBefore = cpuMilliseconds(pids);
    const machineBefore = machineCpu();
    const harnessBefore = process.cpuUsage();
    const redisBefore = profiling ? await redisCommandStats(this.redis) : null;
    if (profiling) {
      this.statements ??= await statementsAvailable(this.database);
      if (this.statements) await resetStatements(this.database);
    }
    const backends = profiling ? sampleBackends(this.database, this.databaseName) : null;
    const fromMicros = monotonicMicros();
    const started = Date.now();
    return {
      stop: async (items: number): Promise<Window> => {
        const toMicros = monotonicMicros();
        const seconds = (Date.now() - started) / 1000;
        const harness = process.cpuUsage(harnessBefore);
        const costs = {
          serviceCpuMsPer: (cpuMilliseconds(pids) - cpuBefore) / items,
          loadGeneratorCorePercent: (100 * (harness.user + harness.system)) / 1000 / (seconds * 1000),
          machineBusyPercent: busyPercent(machineBefore, machineCpu()),
        };
        return {
          fromMicros,
          toMicros,
          costs,
          redis: redisBefore ? redisDelta(redisBefore, await redisCommandStats(this.redis), items) : [],
          pgActivity: backends ? await backends.stop() : null,
          pgStatements: profiling && this.statements ? await topStatements(this.database, items) : null,
        };
      },
    };
  }

  private environment(prefix: string, port: number): Record<string, string> {
    const inherited = Object.fromEntries(
      ['PATH', 'HOME', 'TMPDIR', 'LANG'].flatMap((name) =>
        process.env[name] === undefined ? [] : [[name, process.env[name]!]],
      ),
    );
    return {
      ...inherited,
      NODE_ENV: 'production',
      HOST: '127.0.0.1',
      PORT: String(port),
      DATABASE_URL: this.databaseUrl,
      REDIS_URL: this.options.redisUrl,
      REDIS_PREFIX: prefix,
      ...this.secrets,
      LOG_LEVEL: 'warn',
      // Scraped by nobody here, but served as in production (its cost is in the figures), on any free port.
      METRICS_PORT: '0',
      SIMULATOR_DELAY_MS: '0',
      DEMO_ACCOUNT: 'false',
      // One account sends everything: its budget is lifted so that the bench measures throughput
      // (the limiter still counts every request, so its cost is in the figures), and the
      // sendMessage field limit, which would refuse the bench's sends after 300, is off.
      RATE_LIMIT_MAX: '1000000000',
      RATE_LIMIT_SEND_MESSAGE_MAX: '0',
      // One account sends to few number ranges, as a pumping bot would: the guard is off here, and
      // its cost is measured on its own (`--only fraud-guard`).
      FRAUD_FLOOD_IDENTICAL: '0',
      FRAUD_FLOOD_MAX: '0',
      FRAUD_VELOCITY_MAX: '0',
    };
  }

  private spawn(
    name: string,
    args: string[],
    env: Record<string, string>,
    profileDir: string | null,
  ): ChildHandle {
    const profile = profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [];
    // Node itself, as `npm start` runs it minus npm: one process to measure and signal. The
    // harness's own TypeScript (the baseline, cluster.ts) goes through the tsx loader.
    const loader = args[0]!.endsWith('.ts') ? ['--import', 'tsx'] : PRODUCT_NODE_FLAGS;
    return spawnChild(name, process.execPath, [...loader, ...profile, ...args], env);
  }

  private async started(
    name: string,
    layout: Layout,
    port: number,
    handles: ChildHandle[],
    prefix: string,
    profileDir: string | null,
    transactionsAtStart: number,
  ): Promise<Service> {
    const url = `http://127.0.0.1:${port}`;
    const service: RunningService = {
      name,
      url,
      handles,
      prefix,
      profileDir,
      transactionsAtStart,
      pids: () => handles.flatMap((handle) => (handle.child.pid ? processTree(handle.child.pid) : [])),
      assertRunning: () => {
        const gone = handles.find(
          (handle) => handle.child.exitCode !== null || handle.child.signalCode !== null,
        );
        if (gone) throw new Error(`${gone.name} exited during the scenario:\n${gone.transcript()}`);
      },
    };
    this.running.add(service);
    if (layout.apiProcesses > 1)
      await handles[0]!.waitForOutput(
        /(cluster: \d+ processes|tern: \d+ API processes) listening/,
        READY_TIMEOUT_MS,
      );
    await pollUntil(
      `${name} to answer /health`,
      async () => {
        service.assertRunning();
        const response = await fetch(`${url}/health`).catch(() => null);
        return response?.ok ? true : undefined;
      },
      {
        timeoutMs: READY_TIMEOUT_MS,
        intervalMs: 100,
        describe: () => handles.map((handle) => handle.transcript()).join('\n'),
      },
    );
    return service;
  }

  /** For a scenario that measures without withService: stops the service and its processes. */
  async stopService(service: Service): Promise<void> {
    await this.stop(service as RunningService);
  }

  private async stop(service: RunningService): Promise<void> {
    if (!this.running.delete(service)) return;
    await Promise.all(
      service.handles.map((handle) => handle.stop('SIGTERM').catch(() => handle.stop('SIGKILL'))),
    );
    for (const handle of service.handles) {
      const name = `${this.logLabel}-${service.prefix}-${handle.name.replace(/[^a-z0-9]+/gi, '-')}.log`;
      writeFileSync(join(this.options.logDir, name), handle.transcript());
    }
    await this.deleteKeys(service.prefix);
    // A backend counts its transactions in pg_stat_database as it exits, a moment after its client has gone.
    // Should one linger, the figure is a little short, which is no reason to fail the run.
    await pollUntil(
      'the PostgreSQL connections of the service to close',
      async () => {
        const { rows } = await this.database.query<{ count: string }>(
          `SELECT count(*) FROM pg_stat_activity
           WHERE datname = current_database() AND backend_type = 'client backend' AND application_name <> $1`,
          [HARNESS_APPLICATION],
        );
        return Number(rows[0]?.count) === 0 ? true : undefined;
      },
      { timeoutMs: 5_000, intervalMs: 50 },
    ).catch(() => undefined);
  }

  private async transactions(): Promise<number> {
    const { rows } = await this.database.query<{ count: string }>(
      'SELECT xact_commit + xact_rollback AS count FROM pg_stat_database WHERE datname = current_database()',
    );
    return Number(rows[0]?.count ?? 0);
  }

  private newPrefix(): string {
    const prefix = `tern_bench_${this.runId}_${this.prefixes.length + 1}`;
    this.prefixes.push(prefix);
    return prefix;
  }

  private newProfileDir(name: string): string | null {
    if (!this.options.profileDir) return null;
    const directory = join(this.options.profileDir, name);
    mkdirSync(directory, { recursive: true });
    return directory;
  }

  private async deleteKeys(prefix: string): Promise<void> {
    let cursor = '0';
    do {
      const [next, keys] = await this.redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
      cursor = next;
      if (keys.length > 0) await this.redis.unlink(...keys);
    } while (cursor !== '0');
  }
}
