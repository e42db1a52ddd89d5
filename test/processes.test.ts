import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import http from 'node:http';
import net from 'node:net';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { afterAll, describe, expect, it, type TestContext } from 'vitest';
import { DEFAULT_MIGRATIONS_DIR, migrateDatabase } from '../src/db/migrations.js';
import { withDatabase } from '../src/db/schema-engine.js';
import { sql } from './support/database.js';
import { REDIS_URL, SERVER_URL } from './support/server-url.js';
import { deleteRedisKeys } from './support/tern.js';
import { TERN_CLI, TERN_MAIN } from './support/tern-processes.js';

// Tern as an operator runs it: real processes, their output, exit codes and signals.

const ROOT = fileURLToPath(new URL('..', import.meta.url));
// Generous: the machines have two cores and this file starts several processes at once.
const START_TIMEOUT_MS = 45_000;
const EXIT_TIMEOUT_MS = 10_000;
const JWT_SECRET = 'process-test-secret-of-at-least-32-bytes';
const WEBHOOK_SECRET_KEY = '00'.repeat(32);
const DEMO_LINE = /^Demo account created \(shown once\): e-mail (\S+) {2}password (\S+)$/m;

interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

interface TernProcess {
  readonly child: ChildProcess;
  /** Settles on 'close' rather than 'exit': by then every byte the child wrote has been read. */
  readonly closed: Promise<Exit>;
  stdout(): string;
  stderr(): string;
  /** The command and everything it printed, for failure messages. */
  transcript(): string;
  /** The messages of the pino lines printed so far. */
  logs(): string[];
  waitForOutput(pattern: RegExp, timeoutMs?: number): Promise<RegExpExecArray>;
  waitForExit(timeoutMs?: number): Promise<Exit>;
  /** SIGTERM, then the exit. */
  terminate(): Promise<Exit>;
}

// The safety net for children a test's own clean-up could not end.
const running = new Set<TernProcess>();
afterAll(async () => {
  await Promise.all([...running].map((tern) => kill(tern)));
});

function hasExited(child: ChildProcess): boolean {
  return child.exitCode !== null || child.signalCode !== null;
}

async function kill(tern: TernProcess): Promise<void> {
  if (!hasExited(tern.child)) tern.child.kill('SIGKILL');
  await withDeadline(tern.closed, EXIT_TIMEOUT_MS, `process ${tern.child.pid} to die`).catch(() => undefined);
  running.delete(tern);
}

function withDeadline<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms waiting for ${what}`)), ms);
  });
  return Promise.race([promise, deadline]).finally(() => clearTimeout(timer));
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

function spawnNode(script: string, args: string[], env: Record<string, string>): TernProcess {
  // Node itself, not npm: one process to signal, and no npm start-up cost.
  const child = spawn(process.execPath, [script, ...args], {
    cwd: ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  let isClosed = false;
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const closed = new Promise<Exit>((resolve) =>
    child.once('close', (code, signal) => {
      isClosed = true;
      resolve({ code, signal });
    }),
  );
  const transcript = () => `${script} ${args.join(' ')}\n--- stdout\n${stdout}\n--- stderr\n${stderr}`;
  const waitForExit = (timeoutMs = EXIT_TIMEOUT_MS) =>
    withDeadline(closed, timeoutMs, `the exit of ${transcript()}`);

  const tern: TernProcess = {
    child,
    closed,
    stdout: () => stdout,
    stderr: () => stderr,
    transcript,
    logs: () =>
      stdout
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => (JSON.parse(line) as { msg: string }).msg),
    waitForOutput(pattern, timeoutMs = START_TIMEOUT_MS) {
      return new Promise((resolve, reject) => {
        const settle = (outcome: () => void) => {
          clearTimeout(timer);
          child.stdout!.off('data', check);
          child.off('close', check);
          outcome();
        };
        // Listeners registered after the ones above, so `stdout` and `isClosed` are current.
        const check = () => {
          const match = pattern.exec(stdout);
          if (match) settle(() => resolve(match));
          else if (isClosed)
            settle(() => reject(new Error(`exited before printing ${pattern}: ${transcript()}`)));
        };
        const timer = setTimeout(
          () => settle(() => reject(new Error(`no ${pattern} within ${timeoutMs} ms: ${transcript()}`))),
          timeoutMs,
        );
        child.stdout!.on('data', check);
        child.once('close', check);
        check();
      });
    },
    waitForExit,
    terminate() {
      child.kill('SIGTERM');
      return waitForExit();
    },
  };
  running.add(tern);
  return tern;
}

/** What one test starts, removed when it finishes, pass or fail. */
class Sandbox {
  private readonly processes: TernProcess[] = [];
  private readonly databases: string[] = [];
  // One per test, shared by its processes: an api and a worker must see the same queues.
  private readonly redisPrefix = `tern_proc_${randomBytes(6).toString('hex')}`;

  constructor(context: TestContext) {
    context.onTestFinished(() => this.cleanUp());
  }

  /** A database name nobody has created yet; Tern (or the CLI) is expected to create it. */
  database(): { name: string; url: string } {
    const name = `tern_proc_${randomBytes(6).toString('hex')}`;
    this.databases.push(name);
    return { name, url: withDatabase(SERVER_URL, name) };
  }

  /**
   * The whole environment of a child: nothing of the developer's shell (a DATABASE_URL there
   * must not redirect a test), and NODE_ENV unset as for `npm start`.
   */
  async env(databaseUrl: string, overrides: Record<string, string> = {}): Promise<Record<string, string>> {
    return {
      PATH: process.env.PATH ?? '',
      HOST: '127.0.0.1',
      PORT: String(await freePort()),
      DATABASE_URL: databaseUrl,
      REDIS_URL,
      REDIS_PREFIX: this.redisPrefix,
      LOG_LEVEL: 'info',
      // Any free port: several test files start Tern processes at once.
      METRICS_PORT: '0',
      ...overrides,
    };
  }

  start(role: string, env: Record<string, string>): TernProcess {
    const tern = spawnNode(TERN_MAIN, [role], env);
    this.processes.push(tern);
    return tern;
  }

  async cli(args: string[], env: Record<string, string>): Promise<Exit & { stdout: string; stderr: string }> {
    const cli = spawnNode(TERN_CLI, args, env);
    this.processes.push(cli);
    const exit = await cli.waitForExit(START_TIMEOUT_MS);
    return { ...exit, stdout: cli.stdout(), stderr: cli.stderr() };
  }

  private async cleanUp(): Promise<void> {
    await Promise.all(this.processes.map((tern) => kill(tern)));
    const admin = withDatabase(SERVER_URL, 'postgres');
    await Promise.all([
      ...this.databases.map((name) =>
        sql(admin, `DROP DATABASE IF EXISTS ${pg.escapeIdentifier(name)} WITH (FORCE)`),
      ),
      deleteRedisKeys(this.redisPrefix),
    ]);
  }
}

const urlOf = (env: Record<string, string>) => `http://127.0.0.1:${env.PORT}`;

/** Polls GET /health until it answers 200; fails early when the process exits instead. */
async function waitForHealth(tern: TernProcess, url: string): Promise<unknown> {
  const deadline = Date.now() + START_TIMEOUT_MS;
  for (;;) {
    if (hasExited(tern.child)) throw new Error(`exited before answering GET /health: ${tern.transcript()}`);
    try {
      const response = await fetch(`${url}/health`, { signal: AbortSignal.timeout(2_000) });
      if (response.status === 200) return await response.json();
    } catch {
      // Not listening yet.
    }
    if (Date.now() > deadline)
      throw new Error(`GET ${url}/health did not answer 200 within ${START_TIMEOUT_MS} ms`);
    await sleep(100);
  }
}

async function login(url: string, email: string, password: string): Promise<{ status: number; body: any }> {
  const response = await fetch(`${url}/v1/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email, password }),
    signal: AbortSignal.timeout(5_000),
  });
  return { status: response.status, body: await response.json() };
}

/** The pids of a process's children, from /proc. */
async function childrenOf(pid: number): Promise<number[]> {
  const children: number[] = [];
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = await readFile(`/proc/${entry}/stat`, 'utf8').catch(() => '');
    // Field 4 of /proc/PID/stat, after the parenthesised command name, is the parent's pid.
    const parent = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    if (parent === pid) children.push(Number(entry));
  }
  return children;
}

async function appliedMigrations(databaseUrl: string): Promise<string[]> {
  const { rows } = await sql(
    databaseUrl,
    'SELECT migration_name FROM _prisma_migrations WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL ORDER BY migration_name',
  );
  return rows.map((row: { migration_name: string }) => row.migration_name);
}

async function countAccounts(databaseUrl: string): Promise<number> {
  const { rows } = await sql(databaseUrl, 'SELECT count(*)::int AS n FROM accounts');
  return (rows[0] as { n: number }).n;
}

describe('tern as processes', { timeout: 120_000 }, () => {
  it('creates and migrates a missing database, serves, and prints a demo account on the first start only', async (context) => {
    const sandbox = new Sandbox(context);
    const database = sandbox.database();
    const env = await sandbox.env(database.url);
    const url = urlOf(env);

    const first = sandbox.start('all', env);
    const [, email, password] = await first.waitForOutput(DEMO_LINE);
    expect(email).toBe('demo@tern.local');
    expect(await waitForHealth(first, url)).toEqual({
      status: 'ok',
      postgres: 'up',
      redis: 'up',
      carriers: 'ok',
      request: expect.any(String),
    });
    // The detail is on the metrics listener, which only the machine reaches by default.
    const metricsUrl = (await first.waitForOutput(/"metrics":"(http:[^"]+)"/))[1];
    expect(await (await fetch(`${metricsUrl}/health`)).json()).toEqual({
      status: 'ok',
      postgres: 'up',
      redis: 'up',
      carriers_status: 'ok',
      carriers: [
        {
          carrier: 'default',
          state: 'ready',
          enabled: true,
          max_per_second: null,
          circuit: 'closed',
          worker: expect.any(String),
          updated_at: expect.any(String),
        },
      ],
    });
    expect(first.logs()).toContain(`created database ${database.name}`);

    const folders = (await readdir(DEFAULT_MIGRATIONS_DIR, { withFileTypes: true }))
      .filter((entry) => entry.isDirectory())
      .map((entry) => entry.name)
      .sort();
    expect(folders.length).toBeGreaterThan(0);
    expect(await appliedMigrations(database.url)).toEqual(folders);

    const demoLogin = await login(url, email!, password!);
    expect(demoLogin.status).toBe(200);
    expect(demoLogin.body.token).toEqual(expect.any(String));
    expect(await first.terminate()).toEqual({ code: 0, signal: null });

    const second = sandbox.start('all', env);
    await waitForHealth(second, url);
    // The demo password, shown once, keeps working; the login also outlasts the start-up's
    // check for an empty database, so the output below is complete.
    expect((await login(url, email!, password!)).status).toBe(200);
    expect(await second.terminate()).toEqual({ code: 0, signal: null });
    expect(second.stdout()).not.toContain('Demo account');
    expect(second.logs()).not.toContain('migrations applied');
    expect(await countAccounts(database.url)).toBe(1);
  });

  it.for([
    ['DEMO_ACCOUNT=false', { DEMO_ACCOUNT: 'false' }],
    ['NODE_ENV=production', { NODE_ENV: 'production', JWT_SECRET, WEBHOOK_SECRET_KEY }],
  ] as const)('creates no demo account with %s', async ([, overrides], context) => {
    const sandbox = new Sandbox(context);
    const database = sandbox.database();
    const env = await sandbox.env(database.url, overrides);

    const tern = sandbox.start('all', env);
    await waitForHealth(tern, urlOf(env));
    expect(await tern.terminate()).toEqual({ code: 0, signal: null });
    expect(tern.stdout()).not.toContain('Demo account');
    expect(await countAccounts(database.url)).toBe(0);
  });

  it.for([
    ['no JWT_SECRET', {}],
    ['a JWT_SECRET of 31 bytes', { JWT_SECRET: 'x'.repeat(31) }],
  ] as const)('refuses to start in production with %s', async ([, overrides], context) => {
    const sandbox = new Sandbox(context);
    const env = await sandbox.env(sandbox.database().url, { NODE_ENV: 'production', ...overrides });

    const tern = sandbox.start('all', env);
    expect(await tern.waitForExit(START_TIMEOUT_MS)).toEqual({ code: 1, signal: null });
    expect(tern.stderr()).toMatch(/^tern: invalid configuration[^\n]*JWT_SECRET[^\n]*\n$/);
  });

  it('reports an unreachable PostgreSQL in one line, without its password', async (context) => {
    const sandbox = new Sandbox(context);
    const env = await sandbox.env('postgresql://postgres:secret@127.0.0.1:1/tern');

    const tern = sandbox.start('all', env);
    expect(await tern.waitForExit(START_TIMEOUT_MS)).toEqual({ code: 1, signal: null });
    expect(tern.stderr()).toMatch(
      /^tern: cannot reach PostgreSQL at postgresql:\/\/postgres@127\.0\.0\.1:1\/tern: [^\n]+\n$/,
    );
    expect(tern.stderr()).not.toContain('secret');
  });

  it('reports an unreachable Redis in one line', async (context) => {
    const sandbox = new Sandbox(context);
    const env = await sandbox.env(sandbox.database().url, { REDIS_URL: 'redis://127.0.0.1:1' });

    const tern = sandbox.start('all', env);
    expect(await tern.waitForExit(START_TIMEOUT_MS)).toEqual({ code: 1, signal: null });
    expect(tern.stderr()).toMatch(
      /^tern: cannot reach Redis at redis:\/\/127\.0\.0\.1:1: connect ECONNREFUSED[^\n]*\n$/,
    );
  });

  it('answers an in-flight login after SIGTERM, then exits 0', async (context) => {
    const sandbox = new Sandbox(context);
    const env = await sandbox.env(sandbox.database().url, { SHUTDOWN_TIMEOUT_MS: '8000' });

    const tern = sandbox.start('all', env);
    // Printed once the server listens; the signal handlers were installed before it started.
    const [, email, password] = await tern.waitForOutput(DEMO_LINE);

    let answered = false;
    const request = http.request(`${urlOf(env)}/v1/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
    });
    const response = new Promise<{ status: number; body: any }>((resolve, reject) => {
      request.once('error', reject);
      request.once('response', (incoming) => {
        answered = true;
        let text = '';
        incoming.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
        incoming.once('end', () => resolve({ status: incoming.statusCode ?? 0, body: JSON.parse(text) }));
        incoming.once('error', reject);
      });
    });
    const sent = new Promise((resolve) => request.once('finish', resolve));
    request.end(JSON.stringify({ email, password }));
    await sent;
    await sleep(20);
    tern.child.kill('SIGTERM');
    // Verifying the scrypt hash takes ~100 ms, so the signal lands while the login is in flight.
    expect(answered).toBe(false);

    const answer = await withDeadline(response, EXIT_TIMEOUT_MS, 'the login answer');
    expect(answer.status).toBe(200);
    expect(answer.body.token).toEqual(expect.any(String));
    expect(await tern.waitForExit()).toEqual({ code: 0, signal: null });
    expect(tern.logs()).toEqual(expect.arrayContaining(['draining in-flight requests and jobs', 'stopped']));
  });

  it('creates accounts from the operator CLI', async (context) => {
    const sandbox = new Sandbox(context);
    const database = sandbox.database();
    const env = await sandbox.env(database.url);
    const password = 'operator-chosen-password';
    const create = (...args: string[]) => sandbox.cli(['accounts', 'create', ...args], env);

    // The CLI never creates or migrates a database: a wrong URL must not succeed into one the
    // service never reads. It names the URL, without its password.
    const withPassword = new URL(database.url);
    withPassword.password = 'pg-secret-password';
    const shown = new URL(database.url).toString();
    const missing = await sandbox.cli(['carriers', 'list'], {
      ...env,
      DATABASE_URL: withPassword.toString(),
    });
    expect(missing).toMatchObject({ code: 1, stdout: '' });
    expect(missing.stderr).toMatch(/^tern: [^\n]+\n$/);
    expect(missing.stderr).toContain(`${shown} does not exist`);
    expect(missing.stderr).not.toContain('pg-secret-password');
    expect(
      await sql(SERVER_URL, 'SELECT 1 FROM pg_database WHERE datname = $1', [database.name]),
    ).toMatchObject({
      rows: [],
    });
    await sql(withDatabase(SERVER_URL, 'postgres'), `CREATE DATABASE ${pg.escapeIdentifier(database.name)}`);
    const empty = await create('--email', 'carol@example.com', '--password', password);
    expect(empty).toMatchObject({ code: 1, stdout: '' });
    expect(empty.stderr).toContain(`${shown} holds no Tern schema`);
    expect(await sql(database.url, "SELECT to_regclass('_prisma_migrations') AS migrations")).toMatchObject({
      rows: [{ migrations: null }],
    });

    // Migrated (as `npm start` does), the CLI works on it.
    await migrateDatabase(database.url);
    const created = await create('--email', 'Carol@Example.COM', '--password', password);
    expect(created).toMatchObject({ code: 0, stderr: '' });
    expect(created.stdout).toMatch(/^\{[^\n]*\}\n$/);
    const account = JSON.parse(created.stdout) as { account: string; email: string };
    expect(account).toEqual({ account: expect.stringMatching(/^acc_/), email: 'carol@example.com' });

    const server = sandbox.start('all', env);
    const [duplicate, shortPassword, noEmail] = await Promise.all([
      create('--email', 'carol@example.com', '--password', 'another-password'),
      create('--email', 'dave@example.com', '--password', '7-chars'),
      create('--password', 'long-enough-password'),
    ]);
    for (const failed of [duplicate, shortPassword, noEmail]) {
      expect(failed).toMatchObject({ code: 1, signal: null, stdout: '' });
      expect(failed.stderr).toMatch(/^tern: [^\n]+\n$/);
    }
    expect(shortPassword.stderr).toContain('password');
    expect(noEmail.stderr).toContain('email');

    const { rows } = await sql(database.url, 'SELECT email, password_hash FROM accounts');
    expect(rows).toHaveLength(1);
    expect(rows[0].email).toBe('carol@example.com');
    expect(rows[0].password_hash).toMatch(/^scrypt\$/);
    expect(rows[0].password_hash).not.toContain(password);

    await waitForHealth(server, urlOf(env));
    const loggedIn = await login(urlOf(env), 'carol@example.com', password);
    expect(loggedIn.status).toBe(200);
    expect(loggedIn.body.account).toBe(account.account);
    expect(await server.terminate()).toEqual({ code: 0, signal: null });
    expect(server.stdout()).not.toContain('Demo account');
  });

  it('runs WEB_CONCURRENCY API processes on one port beside a worker process, and drains them all on SIGTERM', async (context) => {
    const sandbox = new Sandbox(context);
    const env = await sandbox.env(sandbox.database().url, { WEB_CONCURRENCY: '2' });
    const tern = sandbox.start('all', env);
    const [, email, password] = await tern.waitForOutput(DEMO_LINE);
    await tern.waitForOutput(/^tern: 2 API processes listening on port \d+$/m);
    const children = await childrenOf(tern.child.pid!);
    expect(children, tern.transcript()).toHaveLength(3);

    const token = (await login(urlOf(env), email!, password!)).body.token as string;
    const sent = await Promise.all(
      Array.from({ length: 6 }, (_, index) =>
        fetch(`${urlOf(env)}/v1/messages/send`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
          body: JSON.stringify({ to: `55119333300${10 + index}`, message: 'From a cluster' }),
        }).then(async (response) => ({
          code: response.status,
          ...((await response.json()) as { message: string }),
        })),
      ),
    );
    expect(sent.map(({ code }) => code)).toEqual(Array(6).fill(202));
    // The worker process delivers what any API process accepted.
    const deadline = Date.now() + START_TIMEOUT_MS;
    for (const { message } of sent) {
      for (let status = ''; status !== 'delivered'; await sleep(100)) {
        if (Date.now() > deadline)
          throw new Error(`message ${message} is ${status}, not delivered:\n${tern.transcript()}`);
        status = (
          (await (
            await fetch(`${urlOf(env)}/v1/messages/${message}`, {
              headers: { authorization: `Bearer ${token}` },
            })
          ).json()) as { status: string }
        ).status;
      }
    }

    // The supervisor serves every process's metrics, summed: the sends went to either API process.
    const metricsUrl = (await tern.waitForOutput(/"metrics":"(http:[^"]+)","msg":"metrics listening"/))[1];
    const metrics = await (await fetch(`${metricsUrl}/metrics`)).text();
    expect(metrics).toMatch(
      /^tern_http_requests_total\{method="POST",route="\/v1\/messages\/send",status_class="2xx"\} 6$/m,
    );
    expect(metrics).toMatch(/^tern_message_transitions_total\{status="delivered"\} 6$/m);
    // And the health in detail: the worker process's carriers, read from what it publishes.
    const health = await (await fetch(`${metricsUrl}/health`)).json();
    expect(health).toMatchObject({ status: 'ok', carriers: [{ carrier: 'default', state: 'ready' }] });

    expect(await tern.terminate()).toEqual({ code: 0, signal: null });
    expect(tern.logs().filter((line) => line === 'stopped')).toHaveLength(3);
    expect(children.filter((pid) => existsSync(`/proc/${pid}`))).toEqual([]);
  });

  it('runs the api and worker roles as separate processes on one database', async (context) => {
    const sandbox = new Sandbox(context);
    const database = sandbox.database();
    // Started together on a database that does not exist yet: both create and migrate it.
    const apiEnv = await sandbox.env(database.url);
    const workerEnv = await sandbox.env(database.url);
    const api = sandbox.start('api', apiEnv);
    const worker = sandbox.start('worker', workerEnv);

    await Promise.all([api.waitForOutput(DEMO_LINE), worker.waitForOutput(/"msg":"tern started"/)]);
    expect(await waitForHealth(api, urlOf(apiEnv))).toMatchObject({
      status: 'ok',
      postgres: 'up',
      redis: 'up',
    });
    expect(worker.logs()).toContain('workers started');
    expect(api.logs()).not.toContain('workers started');

    const refused = await new Promise<string | undefined>((resolve) => {
      const socket = net.connect(Number(workerEnv.PORT), '127.0.0.1');
      socket.once('connect', () => {
        socket.destroy();
        resolve(undefined);
      });
      socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code));
    });
    expect(refused).toBe('ECONNREFUSED');

    expect(await Promise.all([api.terminate(), worker.terminate()])).toEqual([
      { code: 0, signal: null },
      { code: 0, signal: null },
    ]);
    expect(api.logs()).toContain('stopped');
    expect(worker.logs()).toContain('stopped');
    expect(await countAccounts(database.url)).toBe(1);
  });
});
