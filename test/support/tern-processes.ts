import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Role } from '../../src/config.js';
import { withDirectDatabaseUrl } from './database.js';

// Tern and Redis as real child processes, for tests about what survives a process dying.

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));
/**
 * The compiled entry points, as `npm start` and `npm run cli` run them: the global setup builds
 * dist/ when a source is newer (scripts/build-if-stale.mjs), so a process starts without compiling.
 */
export const TERN_MAIN = join(ROOT, 'dist', 'main.js');
export const TERN_CLI = join(ROOT, 'dist', 'cli.js');
// Generous: the machines have two cores, often busy with other test files' processes.
const START_TIMEOUT_MS = 60_000;
const EXIT_TIMEOUT_MS = 10_000;

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface ChildHandle {
  readonly child: ChildProcess;
  readonly name: string;
  /** Settles on 'close' rather than 'exit': by then every byte the child wrote has been read. */
  readonly closed: Promise<Exit>;
  /** The command and everything it printed, for failure messages. */
  transcript(): string;
  waitForOutput(pattern: RegExp, timeoutMs?: number): Promise<void>;
  /** Sends the signal and waits for the process to be gone. */
  stop(signal?: NodeJS.Signals): Promise<Exit>;
}

export function withDeadline<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms waiting for ${what}`)), ms);
  });
  return Promise.race([promise, deadline]).finally(() => clearTimeout(timer));
}

/**
 * Recovery tuned for tests: small enough that a dead worker's work is taken over within the
 * test, large enough that a live worker's claim is never taken over while it is still working.
 */
export const FAST_RECOVERY_ENV = {
  CLAIM_LEASE_MS: '3000',
  RECOVERY_INTERVAL_MS: '300',
  RECOVERY_AFTER_MS: '1000',
};

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Calls `probe` every `intervalMs` until it returns something other than undefined, and
 * returns that; past the deadline it throws with `describe()`'s account of the last state.
 */
export async function pollUntil<T>(
  what: string,
  probe: () => Promise<T | undefined>,
  options: { timeoutMs: number; intervalMs?: number; describe?: () => Promise<string> | string },
): Promise<T> {
  const deadline = Date.now() + options.timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() >= deadline) {
      const state = options.describe ? `; last state: ${await options.describe()}` : '';
      throw new Error(`timed out after ${options.timeoutMs} ms waiting for ${what}${state}`);
    }
    await sleep(options.intervalMs ?? 150);
  }
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** Children still running; `killAll` is the clean-up that works whatever a test got to. */
const running = new Set<ChildHandle>();
/** Every child since the last `killAll`, so a failure can show what each one printed. */
const spawned: ChildHandle[] = [];

export async function killAll(): Promise<void> {
  await Promise.all([...running].map((handle) => handle.stop('SIGKILL').catch(() => undefined)));
  spawned.length = 0;
}

/** The end of what each child printed, and whether it is still running. */
export function transcripts(maxChars = 3_000): string {
  return spawned
    .map((handle) => {
      const exit = handle.child.exitCode ?? handle.child.signalCode;
      return `--- ${handle.name} (${exit === null ? 'running' : `exited: ${exit}`})\n${handle.transcript().slice(-maxChars)}`;
    })
    .join('\n');
}

/**
 * `group`: the child leads a process group of its own, as a service manager starts a service;
 * its signals (and the clean-up's SIGKILL) then go to the whole group.
 */
export function spawnChild(
  name: string,
  command: string,
  args: string[],
  env: Record<string, string>,
  options: { group?: boolean; cwd?: string } = {},
): ChildHandle {
  const child = spawn(command, args, {
    cwd: options.cwd ?? ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: options.group ?? false,
  });
  let output = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  let isClosed = false;
  const closed = new Promise<Exit>((resolve) => {
    // A command that cannot be started emits 'error' and, with stdio piped, still 'close'.
    child.once('error', (error) => (output += `\n[spawn error] ${error.message}\n`));
    child.once('close', (code, signal) => {
      isClosed = true;
      running.delete(handle);
      resolve({ code, signal });
    });
  });
  const transcript = () => `${name}: ${command} ${args.join(' ')}\n${output}`;

  const handle: ChildHandle = {
    child,
    name,
    closed,
    transcript,
    waitForOutput(pattern, timeoutMs = START_TIMEOUT_MS) {
      return new Promise((resolve, reject) => {
        const settle = (outcome: () => void) => {
          clearTimeout(timer);
          child.stdout!.off('data', check);
          child.stderr!.off('data', check);
          child.off('close', check);
          outcome();
        };
        // Registered after the listeners that append to `output`, so it is current here.
        const check = () => {
          if (pattern.test(output)) settle(resolve);
          else if (isClosed)
            settle(() => reject(new Error(`exited before printing ${pattern}:\n${transcript()}`)));
        };
        const timer = setTimeout(
          () => settle(() => reject(new Error(`no ${pattern} within ${timeoutMs} ms:\n${transcript()}`))),
          timeoutMs,
        );
        child.stdout!.on('data', check);
        child.stderr!.on('data', check);
        child.once('close', check);
        check();
      });
    },
    async stop(signal = 'SIGTERM') {
      if (options.group) {
        try {
          process.kill(-child.pid!, signal);
        } catch {
          // The group is gone already.
        }
      } else if (!isClosed) child.kill(signal);
      return withDeadline(closed, EXIT_TIMEOUT_MS, `${name} to exit after ${signal}`);
    },
  };
  running.add(handle);
  spawned.push(handle);
  return handle;
}

/** Only what the child needs: nothing of vitest's own environment leaks into Tern. */
function baseEnv(): Record<string, string> {
  // Tests poll the API as fast as they like; the rate limit has tests of its own.
  // Metrics on any free port: several test files start Tern processes at once.
  const env: Record<string, string> = {
    NODE_ENV: 'test',
    RATE_LIMIT_MAX: '1000000',
    RATE_LIMIT_SEND_MESSAGE_MAX: '0',
    RATE_LIMIT_LOGIN_MAX: '0',
    // Sends as fast and as alike as a test likes; the fraud guard has tests of its own.
    FRAUD_FLOOD_IDENTICAL: '0',
    FRAUD_FLOOD_MAX: '0',
    FRAUD_VELOCITY_MAX: '0',
    METRICS_PORT: '0',
  };
  for (const name of ['PATH', 'HOME', 'TMPDIR', 'LANG']) {
    const value = process.env[name];
    if (value !== undefined) env[name] = value;
  }
  return env;
}

/** The V8 heap limits `npm start` runs Tern with (package.json), for tests about memory. */
export const NPM_START_HEAP_FLAGS = ['--max-old-space-size=160', '--max-semi-space-size=8'];

/** One Tern process of the given role, resolved once it has logged that it started. */
export async function startTernProcess(
  role: Role,
  env: Record<string, string>,
  nodeFlags: string[] = [],
): Promise<ChildHandle> {
  // Node itself, not npm: one process to signal, and no npm start-up cost.
  const handle = spawnChild(`tern ${role}`, process.execPath, [...nodeFlags, TERN_MAIN, role], {
    ...baseEnv(),
    LOG_LEVEL: 'info',
    ...withDirectDatabaseUrl(env),
  });
  await handle.waitForOutput(/"msg":"tern started"/);
  return handle;
}

/** The CLI with the given arguments; its JSON line on success. */
export async function runCli(args: string[], env: Record<string, string>): Promise<any> {
  const handle = spawnChild('tern cli', process.execPath, [TERN_CLI, ...args], {
    ...baseEnv(),
    ...withDirectDatabaseUrl(env),
  });
  const exit = await withDeadline(handle.closed, START_TIMEOUT_MS, `the CLI: ${handle.transcript()}`);
  if (exit.code !== 0)
    throw new Error(`the CLI exited with ${exit.code ?? exit.signal}:\n${handle.transcript()}`);
  const line = handle
    .transcript()
    .split('\n')
    .find((text) => text.startsWith('{"account"'));
  if (!line) throw new Error(`the CLI printed no account:\n${handle.transcript()}`);
  return JSON.parse(line);
}

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * The CLI as an operator runs it: its exit code and what it wrote to each stream. `stdin`
 * is written to its input, which is then closed (at once when there is none: not a terminal).
 */
export async function runCliCommand(
  args: string[],
  env: Record<string, string>,
  stdin?: string,
): Promise<CliRun> {
  const child = spawn(process.execPath, [TERN_CLI, ...args], {
    cwd: ROOT,
    env: { ...baseEnv(), ...withDirectDatabaseUrl(env) },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  child.stdin.on('error', () => undefined);
  child.stdin.end(stdin ?? '');
  const closed = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
  try {
    const code = await withDeadline(closed, START_TIMEOUT_MS, `the CLI (${args.join(' ')})`);
    return { code, stdout, stderr };
  } catch (error) {
    child.kill('SIGKILL');
    throw new Error(
      `${error instanceof Error ? error.message : String(error)}\nstdout: ${stdout}\nstderr: ${stderr}`,
    );
  }
}

/**
 * The CLI against a test instance's database and Redis prefix (as the operator of that deployment
 * runs it), with each line it printed read as JSON.
 */
export async function runCliOn(
  instance: { database: { url: string; directUrl: string }; redisPrefix: string },
  args: string[],
): Promise<CliRun & { lines: any[] }> {
  const run = await runCliCommand(args, {
    DATABASE_URL: instance.database.url,
    DIRECT_DATABASE_URL: instance.database.directUrl,
    REDIS_PREFIX: instance.redisPrefix,
    LOG_LEVEL: 'warn',
  });
  const lines = run.stdout
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line));
  return { ...run, lines };
}

export interface RedisServer {
  port: number;
  url: string;
  handle: ChildHandle;
}

/**
 * A Redis of the test's own, which it may kill and restart, unlike the machine's shared one.
 * No persistence and an empty directory of its own, so a restart starts with nothing.
 */
export async function startRedisServer(port: number, extraArgs: string[] = []): Promise<RedisServer> {
  const dir = await mkdtemp(join(tmpdir(), 'tern-redis-'));
  const handle = spawnChild(
    `redis-server :${port}`,
    'redis-server',
    [
      '--port',
      String(port),
      '--bind',
      '127.0.0.1',
      '--save',
      '',
      '--appendonly',
      'no',
      '--dir',
      dir,
      ...extraArgs,
    ],
    baseEnv(),
  );
  void handle.closed.then(() => rm(dir, { recursive: true, force: true }));
  await handle.waitForOutput(/Ready to accept connections/, 10_000);
  return { port, url: `redis://127.0.0.1:${port}`, handle };
}

export interface ApiResult {
  status: number;
  body: any;
}

/** One /v1 call to a Tern process; a connection failure shows what the children printed. */
export async function apiRequest(
  baseUrl: string,
  method: string,
  path: string,
  body?: unknown,
  token?: string,
): Promise<ApiResult> {
  let response: Response;
  try {
    response = await fetch(`${baseUrl}${path}`, {
      method,
      headers: {
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...(token ? { authorization: `Bearer ${token}` } : {}),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      signal: AbortSignal.timeout(10_000),
    });
  } catch (error) {
    const cause = error instanceof Error ? `${error.message} (${String(error.cause)})` : String(error);
    throw new Error(`${method} ${path}: ${cause}\n${transcripts()}`);
  }
  const text = await response.text();
  let parsed: any = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // Not JSON: the raw text is what the assertion shows.
  }
  return { status: response.status, body: parsed };
}

/** An operator-created account, through the CLI as docs/authentication.md says; needs no API process. */
export async function createAccountWithCli(
  env: Record<string, string>,
): Promise<{ account: string; email: string; password: string }> {
  const email = `processes-${randomBytes(4).toString('hex')}@example.com`;
  const password = 'a long test password';
  const created = await runCli(['accounts', 'create', '--email', email, '--password', password], env);
  return { account: created.account as string, email, password };
}

/** A bearer token from /v1/auth/login. */
export async function logIn(
  baseUrl: string,
  credentials: { email: string; password: string },
): Promise<string> {
  const login = await apiRequest(baseUrl, 'POST', '/v1/auth/login', {
    email: credentials.email,
    password: credentials.password,
  });
  if (login.status !== 200) throw new Error(`login answered ${login.status}: ${JSON.stringify(login.body)}`);
  return login.body.token as string;
}

/** What a Tern process logged at warn level or above, or printed outside its JSON log. */
export function warnings(handle: ChildHandle, maxLines = 40): string {
  const lines = handle
    .transcript()
    .split('\n')
    .filter((line) => {
      if (!line.startsWith('{')) return line.trim() !== '';
      try {
        return (JSON.parse(line) as { level: number }).level >= 40;
      } catch {
        return true;
      }
    });
  return lines.slice(-maxLines).join('\n');
}

/**
 * The simulator's table keeps one row per reference whatever it is sent, so it cannot tell a
 * message handed over once from one handed over twice. This trigger records every submit the
 * simulator receives, including those its ON CONFLICT absorbs (BEFORE INSERT fires for both),
 * in `test_carrier_handovers`.
 */
export async function recordCarrierHandovers(db: { query(text: string): Promise<unknown> }): Promise<void> {
  await db.query(`
    CREATE TABLE test_carrier_handovers (reference text NOT NULL, at timestamptz NOT NULL DEFAULT clock_timestamp());
    CREATE FUNCTION test_record_handover() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN INSERT INTO test_carrier_handovers (reference) VALUES (NEW.reference); RETURN NEW; END $$;
    CREATE TRIGGER test_record_handover BEFORE INSERT ON simulated_submissions
      FOR EACH ROW EXECUTE FUNCTION test_record_handover();`);
}
