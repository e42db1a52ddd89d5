import { expect, it } from 'vitest';
import { sql } from './support/database.js';
import { processEnvironment } from './support/process-environment.js';
import {
  apiRequest,
  createAccountWithCli,
  freePort,
  logIn,
  startTernProcess,
} from './support/tern-processes.js';

// The limits of one-time codes hold across API processes: they are decided under a lock per
// number in PostgreSQL, and a check locks its verification's row.

const environment = processEnvironment('verify');

it('starts a number once at a time and 5 times an hour, and counts its checks exactly, over two API processes', async () => {
  const { database, env } = await environment({
    RATE_LIMIT_MAX: '1000000',
  });
  const credentials = await createAccountWithCli(env);
  const [portA, portB] = [await freePort(), await freePort()];
  const apis = [`http://127.0.0.1:${portA}`, `http://127.0.0.1:${portB}`];
  await Promise.all([
    startTernProcess('api', { ...env, PORT: String(portA) }),
    startTernProcess('api', { ...env, PORT: String(portB) }),
  ]);
  const token = await logIn(apis[0]!, credentials);
  const to = '5511987650001';
  const startEverywhere = () =>
    Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        apiRequest(apis[i % 2]!, 'POST', '/v1/verifications', { to }, token),
      ),
    );

  for (let round = 1; round <= 5; round++) {
    // One start; the others find it pending and are resends inside the cool-down.
    const starts = await startEverywhere();
    const started = starts.filter((answer) => answer.status === 201);
    expect(started, JSON.stringify(starts.map((answer) => answer.body))).toHaveLength(1);
    expect(starts.filter((answer) => answer.body?.error?.code === 'rate_limited')).toHaveLength(9);
    const id = started[0]!.body.verification as string;
    const checks = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        apiRequest(apis[i % 2]!, 'POST', `/v1/verifications/${id}/check`, { code: '0000' }, token),
      ),
    );
    const statuses = checks.map((answer) => answer.body.status);
    expect(statuses.filter((status) => status === 'denied')).toHaveLength(5);
    expect(statuses.filter((status) => status === 'max_attempts_reached')).toHaveLength(5);
    const read = await apiRequest(apis[round % 2]!, 'GET', `/v1/verifications/${id}`, undefined, token);
    expect(read.body).toMatchObject({ status: 'max_attempts_reached', attempts: 5, sends: 1 });
  }
  const sixth = await startEverywhere();
  expect(sixth.map((answer) => answer.body?.error?.code)).toEqual(Array(10).fill('rate_limited'));
  const { rows } = await sql(database.directUrl, 'SELECT count(*)::int AS n FROM verifications');
  expect(rows[0].n).toBe(5);
}, 180_000);
