import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { cp, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { withDatabase } from '../src/db/schema-engine.js';
import { sql } from './support/database.js';
import { REDIS_URL, SERVER_URL } from './support/server-url.js';
import { deleteRedisKeys } from './support/tern.js';
import {
  apiRequest,
  type ChildHandle,
  createAccountWithCli,
  freePort,
  killAll,
  logIn,
  pollUntil,
  ROOT,
  spawnChild,
  startTernProcess,
  TERN_MAIN,
  transcripts,
  withDeadline,
} from './support/tern-processes.js';
import { WebhookReceiver } from './support/webhook-receiver.js';

// Tern run as an operator runs it: metrics scraped from a real process, probes during a real
// shutdown, `npm start` signalled as systemd or a container runtime signals it, a `.env` file.

const START_TIMEOUT_MS = 60_000;

interface Sandbox {
  databaseUrl: string;
  redisPrefix: string;
  env: Record<string, string>;
}

const cleanUps: (() => Promise<void>)[] = [];
afterEach(async (context) => {
  // Shown when a test fails: what every child printed.
  if (context.task.result?.state === 'fail') console.error(transcripts());
  await killAll();
  for (const cleanUp of cleanUps.splice(0).reverse()) await cleanUp();
});

/** A database nobody has created yet (Tern creates it) and a Redis prefix, dropped after the test. */
function sandbox(overrides: Record<string, string> = {}): Sandbox {
  const name = `tern_ops_${randomBytes(6).toString('hex')}`;
  const redisPrefix = `tern_ops_${randomBytes(6).toString('hex')}`;
  const databaseUrl = withDatabase(SERVER_URL, name);
  cleanUps.push(async () => {
    await sql(
      withDatabase(SERVER_URL, 'postgres'),
      `DROP DATABASE IF EXISTS ${pg.escapeIdentifier(name)} WITH (FORCE)`,
    );
    await deleteRedisKeys(redisPrefix);
  });
  return {
    databaseUrl,
    redisPrefix,
    env: {
      HOST: '127.0.0.1',
      PORT: '0',
      DATABASE_URL: databaseUrl,
      REDIS_URL,
      REDIS_PREFIX: redisPrefix,
      JWT_SECRET: 'operations-test-secret-of-at-least-32-bytes',
      DEMO_ACCOUNT: 'false',
      ...overrides,
    },
  };
}

/** A field of the first JSON log line with this message. */
function logged(handle: ChildHandle, message: string): Record<string, any> | undefined {
  for (const line of handle.transcript().split('\n')) {
    if (!line.startsWith('{')) continue;
    const entry = JSON.parse(line) as Record<string, any>;
    if (entry.msg === message) return entry;
  }
  return undefined;
}

/** One sample of a Prometheus text exposition, by metric name and exactly these labels; 0 when absent. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number {
  const wanted = Object.entries(labels)
    .map(([key, value]) => `${key}="${value}"`)
    .sort()
    .join(',');
  for (const line of text.split('\n')) {
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const found = (match[2] ?? '')
      .split(/,(?=[a-z_]+=")/)
      .filter(Boolean)
      .sort()
      .join(',');
    if (found === wanted) return Number(match[3]);
  }
  return 0;
}

async function scrape(metricsUrl: string): Promise<string> {
  const response = await fetch(`${metricsUrl}/metrics`);
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toContain('text/plain');
  return response.text();
}

async function send(url: string, token: string, to: string): Promise<{ status: number; message?: string }> {
  const { status, body } = await apiRequest(
    url,
    'POST',
    '/v1/messages/send',
    { to, message: 'Operations test' },
    token,
  );
  return { status, message: body?.message };
}

async function statuses(databaseUrl: string, ids: string[]): Promise<Record<string, string>> {
  const { rows } = await sql(databaseUrl, 'SELECT id, status FROM messages WHERE id = ANY($1)', [ids]);
  return Object.fromEntries(rows.map((row: { id: string; status: string }) => [row.id, row.status]));
}

/** Processes whose process group is `group`, from /proc. */
async function processGroup(group: number): Promise<number[]> {
  const members: number[] = [];
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = await readFile(`/proc/${entry}/stat`, 'utf8').catch(() => '');
    // Fields after the parenthesised command name: state, ppid, pgrp.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (stat && fields[0] !== 'Z' && Number(fields[2]) === group) members.push(Number(entry));
  }
  return members;
}

function refusesConnections(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', () => resolve(true));
  });
}

/** `npm start` in a process group of its own, as a service manager runs it. */
function npmStart(env: Record<string, string>, cwd: string): ChildHandle {
  return spawnChild('npm start', 'npm', ['start'], env, { group: true, cwd });
}

/**
 * A checkout of its own, without dist/: what `npm start` compiles there leaves alone the dist/
 * that every other test file's processes are running from. The sources and build files are
 * copied; what is only read (dependencies, migrations, schema) is linked.
 */
async function checkoutWithoutBuild(): Promise<string> {
  const directory = await mkdtemp(join(tmpdir(), 'tern-checkout-'));
  for (const path of ['package.json', 'tsconfig.json', 'tsconfig.build.json', 'scripts', 'src'])
    await cp(join(ROOT, path), join(directory, path), { recursive: true });
  for (const path of ['node_modules', 'prisma', 'schema'])
    await symlink(join(ROOT, path), join(directory, path));
  return directory;
}

describe('operations', { timeout: 180_000 }, () => {
  it('serves metrics on their own port whose counts match the traffic sent', async () => {
    const receiver = await WebhookReceiver.start();
    cleanUps.push(() => receiver.close());
    const box = sandbox({
      METRICS_PORT: '0',
      RATE_LIMIT_LOGIN_MAX: '2',
      WEBHOOK_ALLOW_INSECURE: 'true',
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
      SIMULATOR_DELAY_MS: '50',
    });
    // Tern first: it creates and migrates the sandbox's database, which the CLI will not.
    const tern = await startTernProcess('all', box.env);
    const credentials = await createAccountWithCli(box.env);
    const { address: url, metrics: metricsUrl } = logged(tern, 'tern started')!;
    expect(metricsUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(metricsUrl).not.toBe(url);

    const token = await logIn(url, credentials);
    const login = { email: credentials.email, password: credentials.password };
    expect((await apiRequest(url, 'POST', '/v1/auth/login', login)).status).toBe(200);
    // The login field limit (2 per window and address) refuses the third.
    expect((await apiRequest(url, 'POST', '/v1/auth/login', login)).status).toBe(429);
    const hook = await apiRequest(
      url,
      'POST',
      '/v1/webhooks',
      { url: `${receiver.url}/hook`, events: ['message.delivered'] },
      token,
    );
    expect(hook.status).toBe(201);

    const sent = await Promise.all(
      Array.from({ length: 5 }, (_, index) => send(url, token, `5511988880${100 + index}`)),
    );
    expect(sent.map(({ status }) => status)).toEqual([202, 202, 202, 202, 202]);
    const graphql = async (operation: string) => {
      const response = await fetch(`${url}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
        body: JSON.stringify({
          query: `mutation ${operation}($input: SendMessageInput!) { sendMessage(input: $input) { ... on MessageAcceptance { id } } }`,
          variables: { input: { to: '5511988880200', message: 'Through GraphQL' } },
        }),
      });
      expect(response.status).toBe(200);
      return ((await response.json()) as { data: { sendMessage: { id: string } } }).data.sendMessage.id;
    };
    // A name of Tern's own operations is a label value; a dashboard's own name is "other".
    const ids = [
      ...sent.map(({ message }) => message!),
      await graphql('SendMessage'),
      await graphql('MyDashboardSendsOne'),
    ];
    expect((await apiRequest(url, 'GET', '/v1/no-such-route', undefined, token)).status).toBe(404);

    await pollUntil(
      'every message delivered and its webhook answered',
      async () => {
        const now = await statuses(box.databaseUrl, ids);
        const callbacks = receiver
          .at('/hook')
          .filter((callback) => callback.body.includes('"message.delivered"'));
        return Object.values(now).filter((status) => status === 'delivered').length === ids.length &&
          callbacks.length === ids.length
          ? now
          : undefined;
      },
      {
        timeoutMs: 30_000,
        describe: async () =>
          `${JSON.stringify(await statuses(box.databaseUrl, ids))}; webhook callbacks: ${receiver.at('/hook').length}`,
      },
    );
    // The attempt is counted once its outcome is logged, just after the receiver answered.
    const text = await pollUntil(
      'the webhook attempts counted',
      async () => {
        const scraped = await scrape(metricsUrl);
        return sample(scraped, 'tern_webhook_attempts_total', { outcome: 'delivered' }) === ids.length
          ? scraped
          : undefined;
      },
      { timeoutMs: 10_000 },
    );

    // Is it sending?
    expect(sample(text, 'tern_message_transitions_total', { status: 'sent' })).toBe(7);
    expect(sample(text, 'tern_message_transitions_total', { status: 'delivered' })).toBe(7);
    expect(sample(text, 'tern_message_transitions_total', { status: 'failed' })).toBe(0);
    expect(
      sample(text, 'tern_http_requests_total', {
        method: 'POST',
        route: '/v1/messages/send',
        status_class: '2xx',
      }),
    ).toBe(5);
    expect(
      sample(text, 'tern_http_request_duration_seconds_count', {
        method: 'POST',
        route: '/v1/messages/send',
        status_class: '2xx',
      }),
    ).toBe(5);
    expect(
      sample(text, 'tern_http_requests_total', { method: 'POST', route: '/graphql', status_class: '2xx' }),
    ).toBe(2);
    expect(
      sample(text, 'tern_http_requests_total', { method: 'GET', route: 'unmatched', status_class: '4xx' }),
    ).toBe(1);
    expect(
      sample(text, 'tern_graphql_operations_total', {
        transport: 'v1',
        type: 'mutation',
        operation: 'SendMessage',
        status_class: '2xx',
      }),
    ).toBe(5);
    expect(
      sample(text, 'tern_graphql_operations_total', {
        transport: 'graphql',
        type: 'mutation',
        operation: 'SendMessage',
        status_class: '2xx',
      }),
    ).toBe(1);
    expect(
      sample(text, 'tern_graphql_operations_total', {
        transport: 'graphql',
        type: 'mutation',
        operation: 'other',
        status_class: '2xx',
      }),
    ).toBe(1);
    expect(
      sample(text, 'tern_queue_jobs_processed_total', { queue: 'message-send', outcome: 'completed' }),
    ).toBeGreaterThan(0);
    // How far behind?
    expect(text).toMatch(/^tern_queue_jobs\{queue="message-send",state="wait"\} 0$/m);
    expect(text).toMatch(/^tern_messages_oldest_queued_age_seconds 0$/m);
    // Is the carrier healthy?
    expect(sample(text, 'tern_carrier_up', { carrier: 'default', state: 'ready' })).toBe(1);
    // Are webhooks failing?
    expect(sample(text, 'tern_webhook_attempts_total', { outcome: 'failed' })).toBe(0);
    // Who is being limited?
    expect(sample(text, 'tern_rate_limit_refusals_total', { limit: 'login', caller: 'address' })).toBe(1);
    expect(
      sample(text, 'tern_http_requests_total', {
        method: 'POST',
        route: '/v1/auth/login',
        status_class: '4xx',
      }),
    ).toBe(1);
    // No account, message or URL ever becomes a label value.
    expect(text).not.toContain(credentials.account);
    for (const id of ids) expect(text).not.toContain(id);
    expect(text).not.toContain('no-such-route');

    // The metrics port serves nothing else, and the API port no metrics.
    expect((await fetch(`${metricsUrl}/v1/messages`)).status).toBe(404);
    expect((await fetch(`${url}/metrics`)).status).toBe(404);
  });

  it('answers readiness 503 once a shutdown has begun, refuses new work with 503, and still completes an in-flight send', async () => {
    const box = sandbox({ METRICS_PORT: 'off', SHUTDOWN_TIMEOUT_MS: '10000' });
    // Tern first: it creates and migrates the sandbox's database, which the CLI will not.
    const tern = await startTernProcess('all', box.env);
    const credentials = await createAccountWithCli(box.env);
    const url = logged(tern, 'tern started')!.address as string;
    const token = await logIn(url, credentials);
    expect((await apiRequest(url, 'GET', '/health/ready')).body).toMatchObject({
      status: 'ok',
      shutting_down: false,
    });

    // One connection: a send whose body is not all there when the signal comes, then a readiness probe behind it.
    const port = Number(new URL(url).port);
    const socket = net.connect(port, '127.0.0.1');
    let answers = '';
    socket.setEncoding('utf8').on('data', (chunk: string) => (answers += chunk));
    await new Promise((resolve) => socket.once('connect', resolve));
    const body = JSON.stringify({ to: '5511977770001', message: 'In flight at SIGTERM' });
    // `Expect: 100-continue`, as curl sends with a large body: the server's "100 Continue" is
    // the sign that it has the request's head and has begun the request, so the signal comes
    // while the send is in flight however slow the host, not after a guessed pause.
    socket.write(
      `POST /v1/messages/send HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nExpect: 100-continue\r\n\r\n${body.slice(0, 10)}`,
    );
    await pollUntil(
      'the server to take the request in',
      async () => (answers.startsWith('HTTP/1.1 100 Continue\r\n\r\n') ? true : undefined),
      { timeoutMs: 10_000, intervalMs: 10, describe: () => answers },
    );
    tern.child.kill('SIGTERM');
    await tern.waitForOutput(/"msg":"draining in-flight requests and jobs"/, 10_000);

    // While the send is in flight the instance says it is leaving: not ready, and new work refused in Tern's format.
    const ready = await apiRequest(url, 'GET', '/health/ready');
    expect(ready).toMatchObject({
      status: 503,
      body: { status: 'unavailable', shutting_down: true, postgres: 'up', redis: 'up' },
    });
    expect((await apiRequest(url, 'GET', '/health/live')).status).toBe(200);
    const refused = await apiRequest(
      url,
      'POST',
      '/v1/messages/send',
      { to: '5511977770002', message: 'After SIGTERM' },
      token,
    );
    expect(refused).toMatchObject({ status: 503, body: { error: { code: 'service_unavailable' } } });

    socket.write(body.slice(10));
    await pollUntil(
      'the in-flight send answered',
      async () => (/\r\n\r\n\{.*\}$/.test(answers) ? true : undefined),
      { timeoutMs: 10_000, describe: () => answers },
    );
    expect(answers).toMatch(/^HTTP\/1\.1 100 Continue\r\n\r\nHTTP\/1\.1 202 /);
    expect(answers).toMatch(/\r\nconnection: close\r\n/i);
    socket.destroy();
    const accepted = /"message":"(msg_[0-9a-f]+)"/.exec(answers)?.[1];
    expect(accepted).toBeDefined();
    expect(await tern.closed).toEqual({ code: 0, signal: null });
    expect(Object.keys(await statuses(box.databaseUrl, [accepted!]))).toEqual([accepted]);
  });

  it('npm start: SIGTERM to its process group stops everything and loses no accepted send; it compiles only when the sources changed', async () => {
    const box = sandbox({ METRICS_PORT: '0', SHUTDOWN_TIMEOUT_MS: '10000', SIMULATOR_DELAY_MS: '0' });
    const env: Record<string, string> = {
      ...box.env,
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? tmpdir(),
      NODE_ENV: 'test',
      LOG_LEVEL: 'info',
    };
    // No build yet: this start must compile.
    const checkout = await checkoutWithoutBuild();
    cleanUps.push(() => rm(checkout, { recursive: true, force: true }));

    const first = npmStart(env, checkout);
    await first.waitForOutput(/"msg":"tern started"/, START_TIMEOUT_MS);
    expect(first.transcript()).toContain(
      'tern: the sources changed since the last build; compiling to dist/',
    );
    const url = logged(first, 'tern started')!.address as string;
    // After the start: Tern creates and migrates the sandbox's database, which the CLI will not.
    const credentials = await createAccountWithCli(env);
    const token = await logIn(url, credentials);

    // Sends keep arriving while the whole process group gets SIGTERM, as systemd's KillMode=control-group does.
    const sends = Array.from({ length: 40 }, (_, index) =>
      send(url, token, `5511966660${100 + index}`).catch(() => ({ status: 0, message: undefined })),
    );
    await Promise.race(sends);
    process.kill(-first.child.pid!, 'SIGTERM');
    const results = await Promise.all(sends);
    expect(await withDeadline(first.closed, 15_000, 'npm to exit')).toEqual({ code: 0, signal: null });
    expect(await processGroup(first.child.pid!)).toEqual([]);
    expect(await refusesConnections(Number(new URL(url).port))).toBe(true);

    const accepted = results.filter(({ status }) => status === 202).map(({ message }) => message!);
    expect(accepted.length).toBeGreaterThan(0);
    // Every refusal is a clean one: 503 from the closing server, or no connection at all.
    expect(
      results.every(({ status }) => [0, 202, 503].includes(status)),
      JSON.stringify(results),
    ).toBe(true);
    expect(Object.keys(await statuses(box.databaseUrl, accepted)).sort()).toEqual([...accepted].sort());

    // Started again with nothing changed: no compile, and every accepted send is delivered.
    const second = npmStart(env, checkout);
    await second.waitForOutput(/"msg":"tern started"/, START_TIMEOUT_MS);
    expect(second.transcript()).not.toContain('compiling');
    await pollUntil(
      'every accepted send delivered',
      async () => {
        const now = await statuses(box.databaseUrl, accepted);
        return Object.values(now).every((status) => status === 'delivered') ? now : undefined;
      },
      { timeoutMs: 30_000, describe: async () => JSON.stringify(await statuses(box.databaseUrl, accepted)) },
    );

    // Idle, SIGTERM to npm alone (what a runtime signals when npm is its main process): npm passes it
    // on, and the drain ends by itself, not by the shutdown deadline (which would exit 1).
    second.child.kill('SIGTERM');
    await second.waitForOutput(/"msg":"stopped"/, 15_000);
    expect(logged(second, 'draining in-flight requests and jobs')).toMatchObject({ signal: 'SIGTERM' });
    expect(second.transcript()).not.toContain('shutdown timed out');
    expect(await withDeadline(second.closed, 15_000, 'npm to exit')).toEqual({ code: 0, signal: null });
    expect(await processGroup(second.child.pid!)).toEqual([]);
  });

  it('reads a .env file in the working directory; the real environment wins over it', async () => {
    const box = sandbox();
    const directory = await mkdtemp(join(tmpdir(), 'tern-dotenv-'));
    cleanUps.push(() => rm(directory, { recursive: true, force: true }));
    const [filePort, realPort] = await Promise.all([freePort(), freePort()]);
    // Everything Tern needs comes from the file; PORT is also in the real environment.
    await writeFile(
      join(directory, '.env'),
      Object.entries({ ...box.env, PORT: String(filePort), METRICS_PORT: 'off', LOG_LEVEL: 'info' })
        .map(([name, value]) => `${name}=${value}`)
        .join('\n')
        .concat('\n# a comment\n'),
    );
    const child = spawn(process.execPath, [TERN_MAIN, 'all'], {
      cwd: directory,
      env: { PATH: process.env.PATH ?? '', PORT: String(realPort) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    const closed = new Promise<number | null>((resolve) => child.once('close', resolve));
    cleanUps.push(async () => {
      child.kill('SIGKILL');
      await closed;
    });
    await pollUntil('tern started', async () => (/"msg":"tern started"/.test(output) ? true : undefined), {
      timeoutMs: START_TIMEOUT_MS,
      describe: () => output,
    });

    const started = output.split('\n').find((line) => line.includes('"msg":"tern started"'))!;
    expect(JSON.parse(started)).toMatchObject({ address: `http://127.0.0.1:${realPort}` });
    // METRICS_PORT=off came from the file: no metrics listener.
    expect(JSON.parse(started).metrics).toBeUndefined();
    // The database of the file's DATABASE_URL was created and migrated.
    expect(
      (await sql(box.databaseUrl, 'SELECT count(*)::int AS n FROM _prisma_migrations')).rows[0].n,
    ).toBeGreaterThan(0);
    expect((await apiRequest(`http://127.0.0.1:${realPort}`, 'GET', '/health/ready')).status).toBe(200);
    child.kill('SIGTERM');
    expect(await closed).toBe(0);
  });
});
