import { expect, it } from 'vitest';
import { sql } from './support/database.js';
import { processEnvironment } from './support/process-environment.js';
import {
  apiRequest,
  createAccountWithCli,
  freePort,
  logIn,
  runCli,
  startTernProcess,
} from './support/tern-processes.js';

// The fraud guard's limits hold exactly over four API processes sending at once, with the
// deployment's defaults and a country cap the operator set with the CLI.

const environment = processEnvironment('guard');

it('admits exactly each limit over four API processes, and blocks a country once', async () => {
  const { database, env } = await environment({
    // The defaults, which the harness turns off for every other file.
    FRAUD_FLOOD_IDENTICAL: '6',
    FRAUD_FLOOD_MAX: '20',
    FRAUD_VELOCITY_MAX: '50',
  });
  const credentials = await createAccountWithCli(env);
  const printed = await runCli(
    ['accounts', 'guard', '--email', credentials.email, '--country-cap', 'PT=10/'],
    env,
  );
  expect(printed).toMatchObject({
    flood_any: 20,
    velocity: 50,
    country_caps: { PT: { hourly: 10, daily: null } },
  });

  const ports = await Promise.all([freePort(), freePort(), freePort(), freePort()]);
  const apis = ports.map((port) => `http://127.0.0.1:${port}`);
  await Promise.all(ports.map((port) => startTernProcess('api', { ...env, PORT: String(port) })));
  const token = await logIn(apis[0]!, credentials);
  const send = (i: number, to: string, message: string) =>
    apiRequest(apis[i % 4]!, 'POST', '/v1/messages/send', { to, message }, token);
  const sends = [
    ...Array.from({ length: 60 }, (_, i) => () => send(i, '5511900010001', `Message ${i}`)),
    ...Array.from({ length: 120 }, (_, i) => () => send(i, `551198765${String(i).padStart(4, '0')}`, 'Hi')),
    ...Array.from({ length: 40 }, (_, i) => () => send(i, `35191${String(100 + i).padStart(7, '0')}`, 'Olá')),
  ];
  const answers = await Promise.all(sends.map((run) => run()));
  const accepted = (from: number, to: number) =>
    answers.slice(from, to).filter((answer) => answer.status === 202).length;
  expect(accepted(0, 60)).toBe(20);
  expect(accepted(60, 180)).toBe(50);
  expect(accepted(180, 220)).toBe(10);
  expect(
    answers.filter((answer) => answer.status !== 202).every((a) => a.body.error.code === 'fraud_blocked'),
  ).toBe(true);
  const {
    rows: [row],
  } = await sql(
    database.directUrl,
    `SELECT (SELECT count(*) FROM messages)::int AS messages,
       (SELECT count(*) FROM events WHERE type = 'account.country_blocked')::int AS blocks`,
  );
  expect(row).toEqual({ messages: 80, blocks: 1 });
  const shown = await runCli(['accounts', 'guard', '--email', credentials.email], env);
  expect(Object.keys(shown.blocked)).toEqual(['PT']);
}, 120_000);
