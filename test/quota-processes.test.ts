import { expect, it } from 'vitest';
import { processEnvironment } from './support/process-environment.js';
import {
  apiRequest,
  createAccountWithCli,
  freePort,
  logIn,
  runCli,
  runCliCommand,
  startTernProcess,
} from './support/tern-processes.js';

// One quota shared by two API processes, set by the operator's CLI as the documentation says.

const environment = processEnvironment('quota');

it('admits exactly the daily quota the CLI set, over two API processes sending at once', async () => {
  const { env } = await environment();
  const credentials = await createAccountWithCli(env);
  const limits = ['accounts', 'limits', '--email', credentials.email];
  expect(await runCli([...limits, '--daily-segments', '10', '--countries', 'br,pt'], env)).toEqual({
    account: credentials.account,
    email: credentials.email,
    daily_segments: 10,
    monthly_segments: null,
    allowed_countries: ['BR', 'PT'],
    timezone: 'UTC',
  });
  const refused = await runCliCommand([...limits, '--monthly-segments', 'lots'], env);
  expect(refused.code).not.toBe(0);
  expect(refused.stderr).toMatch(/--monthly-segments takes a whole number of segments or none/);
  const unknownCountry = await runCliCommand([...limits, '--countries', 'GB,XX'], env);
  expect(unknownCountry.code).not.toBe(0);

  const [portA, portB] = [await freePort(), await freePort()];
  const apis = [`http://127.0.0.1:${portA}`, `http://127.0.0.1:${portB}`];
  await Promise.all([
    startTernProcess('api', { ...env, PORT: String(portA) }),
    startTernProcess('api', { ...env, PORT: String(portB) }),
  ]);
  const token = await logIn(apis[0]!, credentials);
  const answers = await Promise.all(
    Array.from({ length: 30 }, (_, i) =>
      apiRequest(
        apis[i % 2]!,
        'POST',
        '/v1/messages/send',
        { to: `5511987${String(i).padStart(6, '0')}`, message: 'Your code is 1234' },
        token,
      ),
    ),
  );
  expect(answers.filter((answer) => answer.status === 202)).toHaveLength(10);
  expect(answers.filter((answer) => answer.body?.error?.code === 'quota_exceeded')).toHaveLength(20);
  const settings = await apiRequest(apis[1]!, 'GET', '/v1/settings', undefined, token);
  expect(settings.body.usage).toEqual({ today_segments: 10, month_segments: 10 });
  expect(settings.body.limits).toEqual({
    daily_segments: 10,
    monthly_segments: null,
    allowed_countries: ['BR', 'PT'],
    timezone: 'UTC',
  });
  // Two processes and four CLI runs, each loading the whole app, on two busy cores.
}, 180_000);
