import { execFile } from 'node:child_process';
import { lstat, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTern, type TestAccount, type TestTern } from './support/tern.js';

/**
 * The typed client as a user outside the repository has it: a new project made from the
 * package.json and tsconfig.json that docs/graphql.md shows, with @tern/client installed into it
 * by npm from the tarball `npm pack` makes of packages/client, as the page says, type-checked by the project's own TypeScript and run with node against
 * a live Tern.
 */

const run = promisify(execFile);
const REPO = fileURLToPath(new URL('..', import.meta.url));
const PACKAGE = join(REPO, 'packages', 'client');
const EXAMPLE = join(REPO, 'examples', 'typed-client');
const GUIDE = join(REPO, 'docs', 'graphql.md');

let t: TestTern;
let account: TestAccount;
let project: string;
let installLog: string;

/** The JSON blocks of docs/graphql.md's typed-client section: the new project's package.json and tsconfig.json. */
async function newProjectFiles(): Promise<{ packageJson: any; tsconfig: any }> {
  const page = await readFile(GUIDE, 'utf8');
  const start = page.indexOf('## The typed client');
  const section = page.slice(start, page.indexOf('\n## ', start + 1));
  const blocks = [...section.matchAll(/```json\n([\s\S]*?)```/g)].map((match) => JSON.parse(match[1]!));
  const packageJson = blocks.find((block) => block.dependencies);
  const tsconfig = blocks.find((block) => block.compilerOptions);
  if (!packageJson || !tsconfig) throw new Error('docs/graphql.md shows no package.json or tsconfig.json');
  return { packageJson, tsconfig };
}

/** npm as a user runs it: none of the variables an `npm test` around this file would pass on. */
function userEnvironment(): NodeJS.ProcessEnv {
  return Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !/^npm_/i.test(name) && name !== 'NODE_ENV'),
  );
}

async function compile(): Promise<{ code: number; output: string }> {
  const tsc = join(project, 'node_modules', 'typescript', 'bin', 'tsc');
  try {
    const { stdout } = await run(process.execPath, [tsc, '-p', join(project, 'tsconfig.json')], {
      cwd: project,
    });
    return { code: 0, output: stdout };
  } catch (error) {
    const failed = error as { code: number; stdout: string };
    return { code: failed.code, output: failed.stdout };
  }
}

beforeAll(async () => {
  project = await mkdtemp(join(tmpdir(), 'tern-client-user-'));
  const { packageJson, tsconfig } = await newProjectFiles();
  // The page's project sits beside the Tern checkout; this one is in the temp dir.
  expect(packageJson.dependencies['@tern/client']).toMatch(/^file:\.\.\/tern\/tern-client-[\d.]+\.tgz$/);
  await writeFile(join(project, 'tsconfig.json'), JSON.stringify(tsconfig, null, 2));
  await writeFile(join(project, 'send.ts'), await readFile(join(EXAMPLE, 'send.ts'), 'utf8'));
  [t] = await Promise.all([
    startTern({ role: 'api' }),
    // The package is what `npm run build:client` writes into packages/client/dist.
    run(
      process.execPath,
      [join(REPO, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.client.json'],
      {
        cwd: REPO,
      },
    ),
  ]);
  account = await t.createAccount();
  // The tarball `npm run pack:client` writes (after the build above), put where the project is.
  const packed = await run('npm', ['pack', PACKAGE, '--pack-destination', project, '--json'], {
    cwd: REPO,
    env: userEnvironment(),
  });
  const [{ filename }] = JSON.parse(packed.stdout) as [{ filename: string }];
  packageJson.dependencies['@tern/client'] = `file:./${filename}`;
  await writeFile(join(project, 'package.json'), JSON.stringify(packageJson, null, 2));
  // From npm's cache when it has the packages; the registry is asked only for what it lacks.
  const installed = await run(
    'npm',
    ['install', '--prefer-offline', '--no-audit', '--no-fund', '--foreground-scripts'],
    { cwd: project, env: userEnvironment() },
  );
  installLog = `${installed.stdout}${installed.stderr}`;
}, 180_000);
afterAll(async () => {
  await Promise.all([t?.stop(), project && rm(project, { recursive: true, force: true })]);
});

describe('@tern/client installed on its own into a new project', () => {
  it('installs from its tarball: the built package with its own dependencies, running nothing of Tern', async () => {
    const installedAt = join(project, 'node_modules', '@tern', 'client');
    expect((await lstat(installedAt)).isSymbolicLink()).toBe(false);
    const manifest = JSON.parse(await readFile(join(installedAt, 'package.json'), 'utf8'));
    expect(manifest.scripts).toBeUndefined();
    expect(manifest.type).toBe('module');
    expect((await readdir(installedAt)).sort()).toEqual(['README.md', 'dist', 'package.json']);
    // Its dependencies are the project's own, not borrowed from the Tern checkout.
    const modules = await readdir(join(project, 'node_modules'));
    expect(modules).toContain('graphql');
    expect(modules).toContain('@graphql-typed-document-node');
    // Nothing of Tern's install: no Prisma, no code generation.
    expect(modules).not.toContain('@prisma');
    expect(modules).not.toContain('.prisma');
    expect(installLog).not.toMatch(/prisma|graphql-codegen|postinstall/i);
  });

  it('type-checks the example with the project’s own TypeScript', { timeout: 60_000 }, async () => {
    const compiled = await compile();
    expect(compiled.output).toBe('');
    expect(compiled.code).toBe(0);
  });

  it('fails to compile a send without `to`, a misspelt field and a wrong status', {
    timeout: 60_000,
  }, async () => {
    const example = await readFile(join(EXAMPLE, 'send.ts'), 'utf8');
    const unexpected = example.replace(/^\s*\/\/ @ts-expect-error.*\n/gm, '');
    expect(unexpected).not.toContain('@ts-expect-error');
    await writeFile(join(project, 'send.ts'), unexpected);
    try {
      const compiled = await compile();
      expect(compiled.code).not.toBe(0);
      expect(compiled.output).toMatch(/Property 'to' is missing/);
      expect(compiled.output).toMatch(/'mesage' does not exist/);
      expect(compiled.output).toMatch(/"delivred"/);
      expect(compiled.output.match(/error TS/g)).toHaveLength(3);
    } finally {
      await writeFile(join(project, 'send.ts'), example);
    }
  });

  it('runs the example against a live Tern: login, send, list', { timeout: 60_000 }, async () => {
    expect((await compile()).code).toBe(0);
    const { stdout } = await run(process.execPath, [join(project, 'out', 'send.js')], {
      cwd: project,
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
