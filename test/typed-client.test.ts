import { execFile } from 'node:child_process';
import { cp, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTern, type TestAccount, type TestTern } from './support/tern.js';

/**
 * The typed client as a user outside the repository has it: a project of its own whose
 * node_modules/tern is this repository (what `npm install /path/to/tern` makes), importing
 * `tern/client`, type-checked by tsc and run with node against a live Tern.
 */

const run = promisify(execFile);
const REPO = fileURLToPath(new URL('..', import.meta.url));
const EXAMPLE = join(REPO, 'examples', 'typed-client');
const TSC = join(REPO, 'node_modules', 'typescript', 'bin', 'tsc');

let t: TestTern;
let account: TestAccount;
const projects: string[] = [];

/** A project outside the repository with the example's files and `tern` installed from this repository. */
async function userProject(send: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'tern-client-user-'));
  projects.push(dir);
  await mkdir(join(dir, 'node_modules', '@types'), { recursive: true });
  await symlink(REPO, join(dir, 'node_modules', 'tern'), 'dir');
  await symlink(
    join(REPO, 'node_modules', '@types', 'node'),
    join(dir, 'node_modules', '@types', 'node'),
    'dir',
  );
  await cp(join(EXAMPLE, 'tsconfig.json'), join(dir, 'tsconfig.json'));
  await cp(join(EXAMPLE, 'package.json'), join(dir, 'package.json'));
  await writeFile(join(dir, 'send.ts'), send);
  return dir;
}

async function compile(dir: string): Promise<{ code: number; output: string }> {
  try {
    const { stdout } = await run(process.execPath, [TSC, '-p', join(dir, 'tsconfig.json')], { cwd: dir });
    return { code: 0, output: stdout };
  } catch (error) {
    const failed = error as { code: number; stdout: string };
    return { code: failed.code, output: failed.stdout };
  }
}

beforeAll(async () => {
  // The package export points at the built client: build it as `npm run build` does.
  [t] = await Promise.all([
    startTern({ role: 'api' }),
    run(process.execPath, [TSC, '-p', join(REPO, 'tsconfig.client.json')], { cwd: REPO }),
  ]);
  account = await t.createAccount();
}, 120_000);
afterAll(async () => {
  await Promise.all([t?.stop(), ...projects.map((dir) => rm(dir, { recursive: true, force: true }))]);
});

describe('the typed client imported as tern/client from another project', () => {
  it('type-checks the example, whose misuses tsc must refuse', { timeout: 60_000 }, async () => {
    const dir = await userProject(await readFile(join(EXAMPLE, 'send.ts'), 'utf8'));
    const compiled = await compile(dir);
    expect(compiled.output).toBe('');
    expect(compiled.code).toBe(0);
  });

  it('fails to compile a send without `to`, a misspelt field and a wrong status', {
    timeout: 60_000,
  }, async () => {
    const example = await readFile(join(EXAMPLE, 'send.ts'), 'utf8');
    const unexpected = example.replace(/^\s*\/\/ @ts-expect-error.*\n/gm, '');
    expect(unexpected).not.toContain('@ts-expect-error');
    const compiled = await compile(await userProject(unexpected));
    expect(compiled.code).not.toBe(0);
    expect(compiled.output).toMatch(/Property 'to' is missing/);
    expect(compiled.output).toMatch(/'mesage' does not exist/);
    expect(compiled.output).toMatch(/"delivred"/);
    expect(compiled.output.match(/error TS/g)).toHaveLength(3);
  });

  it('runs the example against a live Tern: login, send, list', { timeout: 60_000 }, async () => {
    const dir = await userProject(await readFile(join(EXAMPLE, 'send.ts'), 'utf8'));
    expect((await compile(dir)).code).toBe(0);
    const { stdout } = await run(process.execPath, [join(dir, 'out', 'send.js')], {
      cwd: dir,
      env: {
        ...process.env,
        TERN_URL: `${t.url}/graphql`,
        TERN_EMAIL: account.email,
        TERN_PASSWORD: account.password,
        TERN_TO: '5511999990555',
      },
    });
    const result = JSON.parse(stdout);
    expect(result.sent).toMatchObject({ status: 'queued', message: expect.stringMatching(/^msg_/) });
    expect(result.listed).toEqual([{ message: result.sent.message, status: 'queued' }]);
    expect(result.total).toBe(1);
  });
});
