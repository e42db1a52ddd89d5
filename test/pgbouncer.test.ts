import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createTestDatabase, sql, type TestDatabase } from './support/database.js';
import { type PgBouncer, startPgBouncer } from './support/pgbouncer.js';
import { REDIS_URL } from './support/server-url.js';
import { startTern, type TestAccount, type TestTern } from './support/tern.js';
import { runCliCommand } from './support/tern-processes.js';
import { waitFor } from './support/wait.js';

// Tern with DATABASE_URL through PgBouncer in transaction pooling, with two server connections
// for all of it, so that consecutive statements of one process land on different ones.
// The PgBouncer pass (the `pgbouncer` project of vitest.config.ts) runs the sends, campaigns,
// imports, webhooks, retention and CLI tests the same way.

let bouncer: PgBouncer;
let database: TestDatabase;
let t: TestTern;
let alice: TestAccount;

beforeAll(async () => {
  bouncer = await startPgBouncer({ poolSize: 2 });
  database = await createTestDatabase({ through: bouncer });
  t = await startTern({ database, env: { SIMULATOR_DELAY_MS: '20' } });
  alice = await t.createAccount();
});

afterAll(async () => {
  await t?.stop();
  await bouncer?.stop();
});

it('accepts and delivers sends authenticated by API key and by login token, many at once', async () => {
  const key = await t.request('POST', '/v1/api-keys', {
    token: alice.token,
    body: { name: 'Through a pooler' },
  });
  expect(key.status).toBe(201);
  const send = (token: string, i: number) =>
    t.request('POST', '/v1/messages/send', {
      token,
      body: { to: `+55119${String(71_000_010 + i)}`, message: `pooled ${i}` },
    });
  const answers = await Promise.all([
    ...Array.from({ length: 30 }, (_, i) => send(key.body.key, i)),
    ...Array.from({ length: 30 }, (_, i) => send(alice.token, 30 + i)),
    ...Array.from({ length: 30 }, () => t.request('GET', '/v1/messages', { token: key.body.key })),
  ]);
  expect(answers.map((answer) => answer.status)).toEqual([
    ...Array<number>(60).fill(202),
    ...Array<number>(30).fill(200),
  ]);
  const delivered = await waitFor(async () => {
    const { rows } = await sql(
      database.directUrl,
      "SELECT count(*)::int AS n FROM messages WHERE status = 'delivered'",
    );
    return rows[0].n === 60 ? rows[0].n : null;
  }, 40_000);
  expect(delivered).toBe(60);
}, 60_000);

it('migrates through DIRECT_DATABASE_URL, leaving no session lock on the pooled connections', async () => {
  const env = {
    DATABASE_URL: database.url,
    DIRECT_DATABASE_URL: database.directUrl,
    REDIS_URL,
    REDIS_PREFIX: t.redisPrefix,
    JWT_SECRET: 'pgbouncer-test-secret-of-at-least-32-bytes',
  };
  // Each run of the CLI migrates first, as every Tern process does at start.
  for (const run of [1, 2]) {
    const created = await runCliCommand(
      [
        'accounts',
        'create',
        '--email',
        `pooled-${run}-${randomBytes(3).toString('hex')}@example.com`,
        '--password',
        'a long pooled password',
      ],
      env,
    );
    expect(created.code, created.stderr).toBe(0);
  }
  const { rows } = await sql(
    database.directUrl,
    `SELECT count(*)::int AS n FROM pg_locks l JOIN pg_database d ON d.oid = l.database
       WHERE l.locktype = 'advisory' AND d.datname = $1`,
    [database.name],
  );
  expect(rows[0].n).toBe(0);
}, 90_000);
