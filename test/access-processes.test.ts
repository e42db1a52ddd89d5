import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { type TOTP, URI } from 'otpauth';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { closeDependencies, createDependencies, type Dependencies } from '../src/deps.js';
import { createServices, type Services } from '../src/services.js';
import {
  createTestDatabase,
  sql,
  type TestDatabase,
  throughPgBouncer,
  withDirectDatabaseUrl,
} from './support/database.js';
import { REDIS_URL } from './support/server-url.js';
import { deleteRedisKeys } from './support/tern.js';
import {
  apiRequest,
  type CliRun,
  freePort,
  killAll,
  logIn,
  pollUntil,
  ROOT,
  runCliCommand,
  sleep,
  startTernProcess,
  TERN_CLI,
  withDeadline,
} from './support/tern-processes.js';

// The operator's CLI and the API as real processes: what one process changes, another refuses at once.

let database: TestDatabase;
let env: Record<string, string>;
let apiA: string;
let apiB: string;
/** For arranging accounts without a CLI run each; the CLI's own commands are tested below. */
let deps: Dependencies;
let services: Services;

beforeAll(async () => {
  database = await createTestDatabase();
  env = {
    DATABASE_URL: database.url,
    REDIS_URL,
    REDIS_PREFIX: `tern_access_${randomBytes(6).toString('hex')}`,
    JWT_SECRET: 'access-test-secret-of-at-least-32-bytes',
    DEMO_ACCOUNT: 'false',
    HOST: '127.0.0.1',
  };
  const [portA, portB] = await Promise.all([freePort(), freePort()]);
  await Promise.all([
    startTernProcess('api', { ...env, PORT: String(portA) }),
    startTernProcess('api', { ...env, PORT: String(portB) }),
  ]);
  apiA = `http://127.0.0.1:${portA}`;
  apiB = `http://127.0.0.1:${portB}`;
  deps = createDependencies(loadConfig({ ...env, LOG_LEVEL: 'silent' }));
  services = createServices(deps);
}, 120_000);

afterAll(async () => {
  if (deps) await closeDependencies(deps);
  await killAll();
  await database?.drop();
  if (env) await deleteRedisKeys(env.REDIS_PREFIX!);
});

const cli = (args: string[], stdin?: string) => runCliCommand(args, env, stdin);

/** The JSON lines of a run that succeeded. */
function linesOf(run: CliRun): any[] {
  expect(run.code, `exit ${run.code}\nstdout: ${run.stdout}\nstderr: ${run.stderr}`).toBe(0);
  return run.stdout
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line));
}

/** One `tern: …` line on stderr, nothing on stdout. */
function expectFailure(run: CliRun, code: number, message: RegExp) {
  expect(run.code, `stdout: ${run.stdout}\nstderr: ${run.stderr}`).toBe(code);
  expect(run.stdout).toBe('');
  expect(run.stderr).toMatch(/^tern: [^\n]+\n$/);
  expect(run.stderr).toMatch(message);
}

async function newAccount(
  password = 'a long test password',
): Promise<{ account: string; email: string; password: string }> {
  const email = `cli-${randomBytes(4).toString('hex')}@example.com`;
  const { account } = await services.accounts.create({ email, password });
  return { account, email, password };
}

const settingsWith = (base: string, credential: string) =>
  apiRequest(base, 'GET', '/v1/settings', undefined, credential);

// Every CLI run starts Node and loads the app, a second or two each, more on a busy machine.
/** Help and a command line refused before any connection: nothing a pool in front of PostgreSQL changes. */
const mainPassOnly = it.skipIf(throughPgBouncer());

describe('the CLI', { timeout: 120_000 }, () => {
  mainPassOnly('prints help at every level, on stdout, with exit code 0', async () => {
    const levels = [
      ['--help'],
      ['accounts', '--help'],
      ['api-keys', '-h'],
      ...['create', 'list', 'disable', 'enable', 'reset-password', 'two-factor-off'].map((command) => [
        'accounts',
        command,
        '--help',
      ]),
      ...['create', 'list', 'revoke'].map((command) => ['api-keys', command, '--help']),
    ];
    for (let i = 0; i < levels.length; i += 4) {
      const runs = await Promise.all(levels.slice(i, i + 4).map((args) => cli(args)));
      runs.forEach((run, n) => {
        const args = levels[i + n]!;
        expect(run.code, args.join(' ')).toBe(0);
        expect(run.stderr, args.join(' ')).toBe('');
        expect(run.stdout, args.join(' ')).toMatch(/^usage: npm run cli -- /);
        if (args.length === 3) expect(run.stdout, args.join(' ')).toContain(`${args[0]} ${args[1]}`);
      });
    }
  });

  mainPassOnly(
    'refuses a command line it cannot understand with exit code 1, naming the help to read',
    async () => {
      const [none, group, command, option, missing] = await Promise.all([
        cli([]),
        cli(['users', 'create']),
        cli(['accounts', 'delete', '--email', 'a@example.com']),
        cli(['accounts', 'list', '--verbose']),
        cli(['api-keys', 'create', '--name', 'CI']),
      ]);
      expectFailure(none, 1, /a group and a command are needed \(npm run cli -- --help lists them\)/);
      expectFailure(group, 1, /unknown group "users"/);
      expectFailure(
        command,
        1,
        /unknown command "accounts delete" \(npm run cli -- accounts --help lists them\)/,
      );
      expectFailure(option, 1, /Unknown option '--verbose'/);
      expectFailure(missing, 1, /missing --email \(npm run cli -- api-keys create --help tells more\)/);
    },
  );

  it('creates an account with the password from stdin, and login takes it', async () => {
    const email = `stdin-${randomBytes(4).toString('hex')}@example.com`;
    const [created] = linesOf(await cli(['accounts', 'create', '--email', email], 'a password from stdin\n'));
    expect(created).toEqual({ account: expect.stringMatching(/^acc_/), email });
    expect(await logIn(apiA, { email, password: 'a password from stdin' })).toEqual(expect.any(String));

    const [short, duplicate] = await Promise.all([
      cli(['accounts', 'create', '--email', `short-${email}`], 'short\n'),
      cli(['accounts', 'create', '--email', email, '--password', 'another long one']),
    ]);
    expectFailure(short, 1, /invalid password \(too short: from \d+ to \d+ characters\)/);
    expectFailure(duplicate, 1, /already exists/);
  });

  it('asks for the password on a terminal, twice, without echoing it', async () => {
    const email = `tty-${randomBytes(4).toString('hex')}@example.com`;
    const password = 'typed at a terminal';
    // util-linux's script(1) gives the CLI a pseudo-terminal; each answer is typed once its prompt shows.
    const command = `${process.execPath} ${TERN_CLI} accounts create --email ${email}`;
    const child = spawn('script', ['-qec', command, '/dev/null'], {
      cwd: ROOT,
      env: { ...process.env, ...withDirectDatabaseUrl(env), NODE_ENV: 'test' },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let output = '';
    const seen = (pattern: RegExp) =>
      withDeadline(
        new Promise<void>((resolve) => {
          const check = () => {
            if (pattern.test(output)) {
              child.stdout.off('data', check);
              resolve();
            }
          };
          child.stdout.on('data', check);
          check();
        }),
        60_000,
        `${pattern} in: ${output}`,
      );
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    const closed = new Promise<number | null>((resolve) => child.once('close', resolve));
    try {
      await seen(/Password: /);
      child.stdin.write(`${password}\r`);
      await seen(/Password again: /);
      child.stdin.write(`${password}\r`);
      expect(await withDeadline(closed, 60_000, 'the CLI to exit')).toBe(0);
    } finally {
      child.kill('SIGKILL');
    }
    expect(output).toContain(`"email":"${email}"`);
    expect(output).not.toContain(password);
    expect(await logIn(apiA, { email, password })).toEqual(expect.any(String));
  });

  it('lists every account, one JSON line each', async () => {
    const [first, second] = await Promise.all([newAccount(), newAccount()]);
    await services.accounts.setDisabled(second.account, true);
    const listed = linesOf(await cli(['accounts', 'list']));
    expect(listed).toEqual(
      expect.arrayContaining([
        {
          account: first.account,
          email: first.email,
          disabled: false,
          two_factor_enabled: false,
          created_at: expect.any(String),
        },
        {
          account: second.account,
          email: second.email,
          disabled: true,
          two_factor_enabled: false,
          created_at: expect.any(String),
        },
      ]),
    );
    const { rows } = await sql(database.url, 'SELECT count(*)::int AS n FROM accounts');
    expect(listed).toHaveLength(rows[0].n);
  });

  it('disables an account: its token and key are refused at once by the API processes, until enabled', async () => {
    const owner = await newAccount();
    const token = await logIn(apiA, owner);
    const [key] = linesOf(
      await cli(['api-keys', 'create', '--email', owner.email, '--name', 'Nightly export']),
    );
    expect((await settingsWith(apiB, key.key)).status).toBe(200);

    expect(linesOf(await cli(['accounts', 'disable', '--email', owner.email]))).toEqual([
      { account: owner.account, email: owner.email, disabled: true },
    ]);
    for (const [base, credential] of [
      [apiA, token],
      [apiB, token],
      [apiA, key.key],
      [apiB, key.key],
    ] as const) {
      const refused = await settingsWith(base, credential);
      expect(refused.status).toBe(401);
      expect(refused.body.error.code).toBe('unauthorized');
    }
    expect(
      (await apiRequest(apiB, 'POST', '/v1/auth/login', { email: owner.email, password: owner.password }))
        .status,
    ).toBe(401);

    expect(linesOf(await cli(['accounts', 'enable', '--email', owner.email]))).toEqual([
      { account: owner.account, email: owner.email, disabled: false },
    ]);
    expect((await settingsWith(apiB, token)).status).toBe(200);
    expect((await settingsWith(apiA, key.key)).status).toBe(200);
  });

  it('resets a password from stdin: tokens issued before stop working', async () => {
    const owner = await newAccount();
    const before = await logIn(apiA, owner);
    const run = await cli(
      ['accounts', 'reset-password', '--email', owner.email.toUpperCase()],
      'the new long password\n',
    );
    expect(linesOf(run)).toEqual([
      { account: owner.account, email: owner.email.toUpperCase(), password_reset: true },
    ]);
    expect((await settingsWith(apiB, before)).status).toBe(401);
    expect(
      (await apiRequest(apiA, 'POST', '/v1/auth/login', { email: owner.email, password: owner.password }))
        .status,
    ).toBe(401);
    expect(
      (await settingsWith(apiB, await logIn(apiA, { email: owner.email, password: 'the new long password' })))
        .status,
    ).toBe(200);
  });

  it('turns two-factor login off for an account that lost its phone', async () => {
    const owner = await newAccount();
    const token = await logIn(apiA, owner);
    const setUp = await apiRequest(apiA, 'POST', '/v1/settings/two-factor', undefined, token);
    const totp = URI.parse(setUp.body.otpauth_url) as TOTP;
    expect(
      (await apiRequest(apiA, 'POST', '/v1/settings/two-factor/confirm', { code: totp.generate() }, token))
        .status,
    ).toBe(200);
    expect(
      (await apiRequest(apiB, 'POST', '/v1/auth/login', { email: owner.email, password: owner.password }))
        .body.error.code,
    ).toBe('otp_required');

    expect(linesOf(await cli(['accounts', 'two-factor-off', '--email', owner.email]))).toEqual([
      { account: owner.account, email: owner.email, two_factor_enabled: false },
    ]);
    expect(
      (await apiRequest(apiB, 'POST', '/v1/auth/login', { email: owner.email, password: owner.password }))
        .status,
    ).toBe(200);
    expect((await settingsWith(apiA, token)).body.two_factor_enabled).toBe(false);
  });

  it('creates, lists and revokes API keys, printing the key once', async () => {
    const owner = await newAccount();
    const [created] = linesOf(
      await cli([
        'api-keys',
        'create',
        '--email',
        owner.email,
        '--name',
        'Billing',
        '--expires-at',
        '2099-01-01T00:00:00Z',
      ]),
    );
    expect(created).toEqual({
      api_key: expect.stringMatching(/^key_/),
      name: 'Billing',
      key: expect.stringMatching(/^tern_live_[0-9A-Za-z]{40}$/),
      prefix: created.key.slice(0, 16),
      created_at: expect.any(String),
      expires_at: '2099-01-01T00:00:00.000Z',
    });
    expect((await settingsWith(apiA, created.key)).body.account).toBe(owner.account);

    const listRun = await cli(['api-keys', 'list', '--email', owner.email]);
    expect(linesOf(listRun)).toEqual([
      {
        api_key: created.api_key,
        name: 'Billing',
        prefix: created.prefix,
        created_at: created.created_at,
        expires_at: created.expires_at,
        last_used_at: expect.any(String),
      },
    ]);
    expect(listRun.stdout).not.toContain(created.key);

    expect(
      linesOf(await cli(['api-keys', 'revoke', '--email', owner.email, '--id', created.api_key])),
    ).toEqual([{ api_key: created.api_key, deleted: true }]);
    expect((await settingsWith(apiB, created.key)).status).toBe(401);
    expectFailure(
      await cli(['api-keys', 'revoke', '--email', owner.email, '--id', created.api_key]),
      1,
      /API key not found/,
    );
    expectFailure(
      await cli([
        'api-keys',
        'create',
        '--email',
        owner.email,
        '--name',
        'Old',
        '--expires-at',
        '2001-01-01T00:00:00Z',
      ]),
      1,
      /invalid expires-at/,
    );
  });

  it('says which e-mail has no account, with exit code 1', async () => {
    const runs = await Promise.all([
      cli(['accounts', 'disable', '--email', 'nobody@example.com']),
      cli(['api-keys', 'list', '--email', 'nobody@example.com']),
    ]);
    for (const run of runs) expectFailure(run, 1, /no account has the e-mail nobody@example\.com/);
  });
});

describe('API keys across API processes', { timeout: 60_000 }, () => {
  it('work on every process, and a revocation on one is refused by the other at once', async () => {
    const owner = await newAccount();
    const token = await logIn(apiA, owner);
    const created = await apiRequest(apiA, 'POST', '/v1/api-keys', { name: 'Integration' }, token);
    expect(created.status).toBe(201);
    const { key, api_key: id } = created.body;
    for (const base of [apiA, apiB]) {
      expect((await settingsWith(base, key)).status).toBe(200);
      const graphql = await fetch(`${base}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
        body: JSON.stringify({ query: '{ settings { accountId } }' }),
      });
      expect((await graphql.json()).data.settings.accountId).toBe(owner.account);
      // A key cannot mint keys, on any process.
      expect((await apiRequest(base, 'POST', '/v1/api-keys', { name: 'Minted' }, key)).status).toBe(403);
    }

    // The other process is kept busy with the key while it is revoked: no request that starts
    // after the revocation's answer succeeds, and the refusal comes without waiting for anything.
    let revokedAt = Number.POSITIVE_INFINITY;
    const afterRevocation: number[] = [];
    const watching = (async () => {
      const deadline = Date.now() + 10_000;
      while (!afterRevocation.includes(401) && Date.now() < deadline) {
        const startedAt = Date.now();
        const { status } = await settingsWith(apiB, key);
        if (startedAt > revokedAt) afterRevocation.push(status);
        else expect([200, 401]).toContain(status);
      }
    })();
    await sleep(100);
    const revoked = await apiRequest(apiA, 'DELETE', `/v1/api-keys/${id}`, undefined, token);
    revokedAt = Date.now();
    expect(revoked.body).toEqual({ api_key: id, deleted: true, request: expect.any(String) });
    // The first request that starts after the answer is refused.
    const next = await settingsWith(apiB, key);
    expect(next.status).toBe(401);
    await watching;
    expect(afterRevocation.length).toBeGreaterThan(0);
    expect(afterRevocation.every((status) => status === 401)).toBe(true);
  });

  it('expire on every process', async () => {
    const owner = await newAccount();
    const token = await logIn(apiA, owner);
    const expiresAt = new Date(Date.now() + 2_000).toISOString();
    const { key } = (
      await apiRequest(apiA, 'POST', '/v1/api-keys', { name: 'Short-lived', expires_at: expiresAt }, token)
    ).body;
    // Accepted until its time, refused from then on: asked until the other process refuses it.
    const expired = await pollUntil(
      'the key refused',
      async () => {
        const startedAt = Date.now();
        const answer = await settingsWith(apiB, key);
        if (answer.status === 200) {
          expect(startedAt).toBeLessThan(Date.parse(expiresAt));
          return undefined;
        }
        return answer;
      },
      { timeoutMs: 10_000, intervalMs: 100 },
    );
    expect(expired.status).toBe(401);
    expect(expired.body.error.message).toBe('The API key has expired');
    expect(Date.now()).toBeGreaterThanOrEqual(Date.parse(expiresAt));
  });

  it("store only the key's hash", async () => {
    const owner = await newAccount();
    const token = await logIn(apiA, owner);
    const { key } = (await apiRequest(apiB, 'POST', '/v1/api-keys', { name: 'Hashed' }, token)).body;
    const dump = await sql(
      database.url,
      `SELECT to_jsonb(k)::text AS row FROM api_keys k WHERE account_id = $1`,
      [owner.account],
    );
    expect(dump.rows).toHaveLength(1);
    expect(dump.rows[0].row).not.toContain(key.slice(10));
  });
});
