import { randomBytes } from 'node:crypto';
import { afterEach, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from './support/database.js';
import {
  apiRequest,
  createAccountWithCli,
  freePort,
  killAll,
  logIn,
  pollUntil,
  type RedisServer,
  startRedisServer,
  startTernProcess,
  transcripts,
} from './support/tern-processes.js';

// A Redis that hangs rather than refuses: the test's own redis-server, stopped with SIGSTOP,
// keeps its connections open and answers nothing. The machine's shared Redis is never touched.

const JWT_SECRET = 'redis-hang-test-secret-of-at-least-32-bytes';

let database: TestDatabase | null = null;
let redis: RedisServer | null = null;

afterEach(async () => {
  // A stopped process cannot die of SIGTERM or SIGKILL's clean-up until it runs again.
  redis?.handle.child.kill('SIGCONT');
  await killAll();
  await database?.drop();
  database = null;
  redis = null;
});

/** The lines of a transcript that match. */
const lines = (transcript: string, pattern: RegExp) =>
  transcript.split('\n').filter((line) => pattern.test(line));

it('serves uncounted, still stores a send and reports redis down while Redis hangs', async () => {
  database = await createTestDatabase();
  redis = await startRedisServer(await freePort());
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const env = {
    DATABASE_URL: database.url,
    REDIS_URL: redis.url,
    REDIS_PREFIX: `tern_hang_${randomBytes(4).toString('hex')}`,
    JWT_SECRET,
    DEMO_ACCOUNT: 'false',
    HOST: '127.0.0.1',
    PORT: String(port),
    RATE_LIMIT_MAX: '600',
    RATE_LIMIT_SEND_MESSAGE_MAX: '300',
  };
  const tern = await startTernProcess('all', env);
  const token = await logIn(base, await createAccountWithCli(env));
  const counted = await fetch(`${base}/v1/settings`, { headers: { authorization: `Bearer ${token}` } });
  expect(counted.headers.get('x-ratelimit-remaining')).toBe('599');

  expect(redis.handle.child.kill('SIGSTOP')).toBe(true);

  // Answered, not left hanging with Redis: the probe of a Redis that does not answer gives up by
  // itself, and only then can it say "down".
  const health = await apiRequest(base, 'GET', '/health');
  expect(health.status).toBe(503);
  expect(health.body).toMatchObject({ status: 'unavailable', postgres: 'up', redis: 'down' });

  const settings = await fetch(`${base}/v1/settings`, {
    headers: { authorization: `Bearer ${token}` },
    signal: AbortSignal.timeout(10_000),
  });
  expect(settings.status).toBe(200);
  expect(settings.headers.get('x-ratelimit-remaining')).toBeNull();

  const sent = await apiRequest(
    base,
    'POST',
    '/v1/messages/send',
    { to: '5511999990777', message: 'While Redis hangs' },
    token,
  );
  expect(sent.status, JSON.stringify(sent.body)).toBe(202);
  const stored = await apiRequest(base, 'GET', `/v1/messages/${sent.body.message}`, undefined, token);
  expect(stored.body).toMatchObject({ message: sent.body.message, status: 'queued', to: '5511999990777' });

  expect(tern.transcript()).toContain('rate limit not counted');
  expect(tern.transcript()).toContain('field rate limit not counted');

  // Redis back: the request path's connection is made again within about a second, and
  // counting starts again.
  redis.handle.child.kill('SIGCONT');
  await pollUntil(
    '/health to answer 200',
    async () => ((await apiRequest(base, 'GET', '/health')).status === 200 ? true : undefined),
    { timeoutMs: 10_000, intervalMs: 200, describe: () => transcripts() },
  );
}, 90_000);

it('after one command gives up, answers at once until Redis answers again: one wait per outage, not per command', async () => {
  database = await createTestDatabase();
  redis = await startRedisServer(await freePort());
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  // A long timeout, so that "at once" and "a full timeout" stay far apart on a busy machine.
  const timeoutMs = 3_000;
  const env = {
    DATABASE_URL: database.url,
    REDIS_URL: redis.url,
    REDIS_PREFIX: `tern_hang_${randomBytes(4).toString('hex')}`,
    JWT_SECRET,
    DEMO_ACCOUNT: 'false',
    HOST: '127.0.0.1',
    PORT: String(port),
    REDIS_COMMAND_TIMEOUT_MS: String(timeoutMs),
    RATE_LIMIT_MAX: '600',
    RATE_LIMIT_SEND_MESSAGE_MAX: '300',
    RATE_LIMIT_LOGIN_MAX: '30',
  };
  const tern = await startTernProcess('api', env);
  const { email, password } = await createAccountWithCli(env);
  const token = await logIn(base, { email, password });
  const settings = () =>
    fetch(`${base}/v1/settings`, {
      headers: { authorization: `Bearer ${token}` },
      signal: AbortSignal.timeout(30_000),
    });

  expect(redis.handle.child.kill('SIGSTOP')).toBe(true);
  // The first command on the request path waits its full timeout: Redis might only be slow.
  const first = await settings();
  expect(first.status).toBe(200);
  expect(first.headers.get('x-ratelimit-remaining')).toBeNull();

  // Every user of the request path's Redis after it answers without waiting: the budget, the
  // field limits and the queue (a send), the login lock and the login field limit (a login).
  const after = await (async () => {
    const answers: number[] = [];
    for (let i = 0; i < 3; i += 1) {
      const sent = await apiRequest(
        base,
        'POST',
        '/v1/messages/send',
        { to: `551199999070${i}`, message: 'Hung' },
        token,
      );
      answers.push(sent.status);
    }
    answers.push((await apiRequest(base, 'POST', '/v1/auth/login', { email, password })).status);
    answers.push(
      (await apiRequest(base, 'POST', '/v1/auth/login', { email, password: 'not it at all' })).status,
    );
    answers.push((await settings()).status);
    return answers;
  })();
  expect(after).toEqual([202, 202, 202, 200, 401, 200]);
  const health = await apiRequest(base, 'GET', '/health');
  expect(health.body).toMatchObject({ redis: 'down' });
  // One wait per outage, not per command, as the log tells it: every user of the request path's
  // Redis after the first command was told at once that the connection was down ("Stream isn't
  // writeable"), none waited out a timeout of its own. Without the circuit, a send would wait
  // three timeouts and a login five. The lines are counted once the last request's is in.
  await pollUntil(
    'the last request of the outage in the log',
    async () =>
      lines(tern.transcript(), /"route":"\/v1\/settings".*"msg":"request"/).length >= 2 ? true : undefined,
    { timeoutMs: 10_000, intervalMs: 50, describe: () => transcripts() },
  );
  const notCounted = lines(tern.transcript(), /not counted: Redis unavailable/);
  const waited = notCounted.filter((line) => /timed out|Socket timeout/i.test(line));
  const atOnce = notCounted.filter((line) => line.includes("Stream isn't writeable"));
  expect(waited, notCounted.join('\n')).toHaveLength(1);
  expect(atOnce).toHaveLength(notCounted.length - 1);
  // At least one for each request after the first: three sends, two logins, one read.
  expect(atOnce.length).toBeGreaterThanOrEqual(6);

  // Redis back: counting resumes by itself, with no restart.
  redis.handle.child.kill('SIGCONT');
  await pollUntil(
    'requests to be counted again',
    async () => ((await settings()).headers.get('x-ratelimit-remaining') !== null ? true : undefined),
    { timeoutMs: 20_000, intervalMs: 250, describe: () => transcripts() },
  );
}, 120_000);
