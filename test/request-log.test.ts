import { Writable } from 'node:stream';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTern, type TestAccount, type TestTern } from './support/tern.js';
import { waitFor } from './support/wait.js';

interface LogLine {
  level: number;
  msg: string;
  [field: string]: unknown;
}

const INFO = 30;
const ERROR = 50;

let tern: TestTern;
let account: TestAccount;
const lines: LogLine[] = [];

beforeAll(async () => {
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const text of chunk.toString('utf8').split('\n'))
        if (text) lines.push(JSON.parse(text) as LogLine);
      done();
    },
  });
  tern = await startTern({ logger: pino({ level: 'debug' }, sink) });
  account = await tern.createAccount();
});

afterAll(async () => {
  await tern?.stop();
});

/** Waits for the line of the request that answered `response` (written once the answer is out). */
async function requestLine(response: { headers: Headers }): Promise<LogLine> {
  const id = response.headers.get('x-request-id');
  return waitFor(async () => lines.find((line) => line.request === id && line.msg === 'request'), 10_000, 10);
}

/**
 * Waits until everything logged before now is in: a later request's line (a 404, which is
 * logged) is written after every line of the requests answered before it.
 */
async function logSettled(): Promise<void> {
  await requestLine(await tern.request('GET', '/v1/messages/msg_marker', { token: account.token }));
}

/** The log lines of one request, found by the id it answered with, once they are all in. */
async function linesOf(response: { headers: Headers }): Promise<LogLine[]> {
  await requestLine(response);
  await logSettled();
  return lines.filter((line) => line.request === response.headers.get('x-request-id'));
}

describe('request logs', () => {
  it('writes one line per request, with the route template and the account', async () => {
    const response = await tern.request('GET', `/v1/messages/msg_nope`, { token: account.token });
    expect(response.status).toBe(404);
    const logged = await linesOf(response);
    expect(logged).toHaveLength(1);
    expect(logged[0]).toMatchObject({
      level: INFO,
      msg: 'request',
      method: 'GET',
      route: '/v1/messages/:message',
      path: '/v1/messages/msg_nope',
      status: 404,
      account: account.account,
    });
    expect(logged[0]!.ms).toEqual(expect.any(Number));
  });

  it('logs a 4xx at info, GraphQL validation and auth errors included, never at error', async () => {
    const before = lines.length;
    const invalid = await tern.graphql('{ nosuchField }', {}, account.token);
    const anonymous = await tern.graphql('query Settings { settings { accountId } }');
    const badBody = await tern.request('POST', '/v1/messages/send', {
      token: account.token,
      body: { to: 'x' },
    });
    expect([invalid.status, anonymous.status, badBody.status]).toEqual([200, 401, 422]);
    await requestLine(badBody);
    const written = lines.slice(before);
    expect(written.filter((line) => line.level >= ERROR)).toEqual([]);
    expect(written.filter((line) => line.msg === 'request').map((line) => [line.status, line.level])).toEqual(
      [
        [200, INFO],
        [401, INFO],
        [422, INFO],
      ],
    );
  });

  it('does not log health checks', async () => {
    const before = lines.length;
    for (const path of ['/health', '/health/live', '/health/ready'])
      expect((await tern.request('GET', path)).status).toBe(200);
    // Not "after a while": after a later request's line is in, which comes after theirs.
    await logSettled();
    expect(
      lines.slice(before).filter((line) => line.msg === 'request' && line.path !== '/v1/messages/msg_marker'),
    ).toEqual([]);
  });
});

describe('probes', () => {
  it('answers /health/live and /health/ready with what readiness checked', async () => {
    const live = await tern.request('GET', '/health/live');
    expect(live).toMatchObject({ status: 200, body: { status: 'ok' } });
    const ready = await tern.request('GET', '/health/ready');
    expect(ready).toMatchObject({
      status: 200,
      body: { status: 'ok', postgres: 'up', redis: 'up', migrations: 'applied', shutting_down: false },
    });
  });

  it('is not ready while a migration the build ships is missing from the database', async () => {
    const { sql } = await import('./support/database.js');
    const second = await startTern({ role: 'api' });
    try {
      await sql(
        second.database.url,
        `DELETE FROM _prisma_migrations WHERE migration_name = (SELECT max(migration_name) FROM _prisma_migrations)`,
      );
      const ready = await second.request('GET', '/health/ready');
      expect(ready).toMatchObject({
        status: 503,
        body: { status: 'unavailable', migrations: 'pending', postgres: 'up', redis: 'up' },
      });
      // Liveness does not depend on it: restarting the process would not help.
      expect((await second.request('GET', '/health/live')).status).toBe(200);
    } finally {
      await second.stop();
    }
  });
});
