import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REDIS_URL } from './support/server-url.js';
import { startTern, type TestTern } from './support/tern.js';
import { waitFor } from './support/wait.js';

/**
 * README.md's "A five-minute tour", run as written: its shell blocks, in order, in bash from the
 * repository's folder, with curl and jq as a reader has them. Only addresses change: Tern is the
 * harness's, started with the settings the tour starts it with, and the receiver's port is a free
 * one. Every curl must get a 2xx and every captured id must be one.
 */

const REPO = fileURLToPath(new URL('..', import.meta.url));
const TOUR_URL = 'http://localhost:3000';
const TOUR_RECEIVER_PORT = '8080';

let t: TestTern;

beforeAll(async () => {
  t = await startTern({ env: { WEBHOOK_ALLOW_INSECURE: 'true', WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' } });
});
afterAll(() => t.stop());

async function tourBlocks(): Promise<string[]> {
  const readme = await readFile(new URL('../README.md', import.meta.url), 'utf8');
  const start = readme.indexOf('## A five-minute tour');
  const tour = readme.slice(start, readme.indexOf('\n## ', start + 1));
  return [...tour.matchAll(/```sh\n([\s\S]*?)```/g)].map((match) => match[1]!);
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

// Every curl of the tour must be answered with a 2xx: the tour's own `curl -s` would print an error
// body and carry on.
const PRELUDE = `set -euo pipefail
trap 'kill $(jobs -p) 2>/dev/null || true' EXIT
curl() {
  local out status
  out=$(command curl -w '\\n%{http_code}' "$@") || return
  status=\${out##*$'\\n'}
  printf '%s\\n' "\${out%$'\\n'*}"
  if [ "$status" -ge 300 ]; then echo "HTTP $status from curl $*" >&2; return 22; fi
}
`;

describe("README's five-minute tour", () => {
  it('works as written, from creating the account to registering a webhook', {
    timeout: 120_000,
  }, async () => {
    const blocks = await tourBlocks();
    const [start] = blocks[0]!.split('\n');
    // The harness's Tern stands for this line: the tour starts Tern with these settings.
    expect(start).toMatch(/^WEBHOOK_ALLOW_INSECURE=true WEBHOOK_ALLOW_PRIVATE_NETWORKS=true npm start/);
    const port = String(await freePort());
    const commands = blocks
      .join('\n')
      .split('\n')
      .filter((line) => line !== start)
      // The receiver comes up late, as on a busy machine: the tour itself must wait until it answers.
      .map((line) => (line.endsWith('&') ? `(sleep 0.1; ${line.slice(0, -1).trim()}) &` : line))
      .join('\n')
      .replaceAll(TOUR_URL, t.url)
      .replaceAll(TOUR_RECEIVER_PORT, port);
    const script = `${PRELUDE}${commands}\necho "ids: $MSG $TPL $CMP $JOB"\n`;

    const child = execFile('bash', ['-c', script], {
      cwd: REPO,
      env: {
        ...process.env,
        DATABASE_URL: t.database.url,
        REDIS_URL,
        REDIS_PREFIX: t.redisPrefix,
        LOG_LEVEL: 'warn',
      },
      timeout: 100_000,
    });
    // The account's password, for `accounts create` to read as a terminal would be asked it.
    child.stdin?.end('a long password\n');
    let stdout = '';
    let stderr = '';
    child.stdout?.on('data', (chunk) => (stdout += chunk));
    child.stderr?.on('data', (chunk) => (stderr += chunk));
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect(code, `${stderr}\n${stdout}`).toBe(0);

    const ids = /^ids: (\S+) (\S+) (\S+) (\S+)$/m.exec(stdout);
    expect(ids, stdout).not.toBeNull();
    const [, message, template, campaign, job] = ids!;
    expect(message).toMatch(/^msg_/);
    expect(template).toMatch(/^tpl_/);
    expect(campaign).toMatch(/^cmp_/);
    expect(job).toMatch(/^job_/);
    // The receiver of the tour answered Tern's signed ping, and printed it.
    expect(stdout).toContain('"event":"webhook.ping"');

    // examples/contacts.csv imports as the tour says: three contacts, one refused row.
    const { token } = await t.login({
      account: '',
      email: 'ops@example.com',
      password: 'a long password',
      token: '',
    });
    const imported = await waitFor(async () => {
      const read = await t.request('GET', `/v1/campaigns/${campaign}/contacts/import/${job}`, { token });
      return read.body.status === 'processing' ? null : read.body;
    });
    expect(imported).toMatchObject({
      status: 'completed',
      total_rows: 4,
      imported: 3,
      invalid: 1,
      errors: [{ row: 5, field: 'phone', issue: 'invalid_e164' }],
    });
  });
});
