import { randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { finished } from 'node:stream/promises';
import archiver from 'archiver';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from './support/database.js';
import { REDIS_URL } from './support/server-url.js';
import { deleteRedisKeys } from './support/tern.js';
import {
  apiRequest,
  type ChildHandle,
  createAccountWithCli,
  freePort,
  killAll,
  logIn,
  NPM_START_HEAP_FLAGS,
  pollUntil,
  sleep,
  startTernProcess,
  transcripts,
} from './support/tern-processes.js';

// One tenant attacks a Tern process run as `npm start` runs it (one process, API and workers,
// with its heap limits) while another tenant goes on using it: the process must stay up, the
// other tenant's requests must succeed throughout, and the attack must end refused.

const JWT_SECRET = 'hostile-tenants-secret-of-at-least-32-bytes';
const MB = 1024 * 1024;

let database: TestDatabase;
let workDir: string;
let tern: ChildHandle;
let base: string;
let attacker: string;
let victim: string;
const redisPrefix = `tern_hostile_${randomBytes(4).toString('hex')}`;

beforeAll(async () => {
  database = await createTestDatabase();
  workDir = await mkdtemp(join(tmpdir(), 'tern-hostile-'));
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  const env = {
    DATABASE_URL: database.url,
    REDIS_URL,
    REDIS_PREFIX: redisPrefix,
    JWT_SECRET,
    DEMO_ACCOUNT: 'false',
    HOST: '127.0.0.1',
    PORT: String(port),
    IMPORT_DIR: join(workDir, 'imports'),
    SIMULATOR_DELAY_MS: '20',
  };
  tern = await startTernProcess('all', env, NPM_START_HEAP_FLAGS);
  [attacker, victim] = await Promise.all([
    logIn(base, await createAccountWithCli(env)),
    logIn(base, await createAccountWithCli(env)),
  ]);
}, 120_000);

afterAll(async () => {
  await killAll();
  await database?.drop();
  await deleteRedisKeys(redisPrefix);
  await rm(workDir, { recursive: true, force: true });
});

/**
 * The other tenant's traffic while `attack` runs: a read and a send, again and again. Every
 * answer must be a success; what they were is returned for the assertion's message.
 */
async function whileAttacked<T>(
  attack: () => Promise<T>,
): Promise<{ outcome: T; answers: { status: number; ms: number }[] }> {
  const answers: { status: number; ms: number }[] = [];
  let attacking = true;
  const traffic = (async () => {
    for (let i = 0; attacking || answers.length < 10; i += 1) {
      const started = Date.now();
      const answer =
        i % 2 === 0
          ? await apiRequest(base, 'GET', '/v1/settings', undefined, victim)
          : await apiRequest(
              base,
              'POST',
              '/v1/messages/send',
              { to: '5511999997001', message: `Still here ${i}` },
              victim,
            );
      answers.push({ status: answer.status, ms: Date.now() - started });
      await sleep(50);
    }
  })();
  try {
    const outcome = await attack();
    return { outcome, answers };
  } finally {
    attacking = false;
    await traffic;
  }
}

function expectServed(answers: { status: number; ms: number }[]) {
  const failed = answers.filter((answer) => answer.status >= 300);
  expect(
    failed,
    `${answers.length} requests of the other tenant, slowest ${Math.max(...answers.map((a) => a.ms))} ms\n${transcripts()}`,
  ).toEqual([]);
  expect(tern.child.exitCode, transcripts()).toBeNull();
}

async function createCampaign(name: string): Promise<string> {
  const created = await apiRequest(base, 'POST', '/v1/campaigns', { name }, attacker);
  expect(created.status).toBe(201);
  return created.body.campaign;
}

/** Uploads a file to a new campaign of the attacker and waits for its job to end. */
async function importAttack(name: string, content: Uint8Array<ArrayBuffer>): Promise<any> {
  const campaign = await createCampaign(name);
  const form = new FormData();
  form.append('phone_column', 'phone');
  form.append('file', new Blob([content]), name);
  const response = await fetch(`${base}/v1/campaigns/${campaign}/contacts/import`, {
    method: 'POST',
    headers: { authorization: `Bearer ${attacker}` },
    body: form,
  });
  const accepted = await response.json();
  expect(response.status, JSON.stringify(accepted)).toBe(202);
  return pollUntil(
    `the import of ${name} to end`,
    async () => {
      const job = await apiRequest(
        base,
        'GET',
        `/v1/campaigns/${campaign}/contacts/import/${accepted.job}`,
        undefined,
        attacker,
      );
      return job.body.status === 'processing' ? undefined : job.body;
    },
    { timeoutMs: 90_000, intervalMs: 250, describe: transcripts },
  );
}

/**
 * An XLSX of 0.6 MB whose only worksheet holds one cell of 600 MB: the worksheet is deflated as
 * it is generated, so the test never holds it either.
 */
async function xlsxBomb(): Promise<Uint8Array<ArrayBuffer>> {
  const path = join(workDir, 'bomb.xlsx');
  const archive = archiver('zip', { zlib: { level: 9 } });
  const output = createWriteStream(path);
  archive.pipe(output);
  archive.append(
    '<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/><Override PartName="/xl/worksheets/sheet1.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/></Types>',
    { name: '[Content_Types].xml' },
  );
  archive.append(
    '<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="xl/workbook.xml"/></Relationships>',
    { name: '_rels/.rels' },
  );
  archive.append(
    '<?xml version="1.0" encoding="UTF-8"?><workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"><sheets><sheet name="Bomb" sheetId="1" r:id="rId1"/></sheets></workbook>',
    { name: 'xl/workbook.xml' },
  );
  archive.append(
    '<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet" Target="worksheets/sheet1.xml"/></Relationships>',
    { name: 'xl/_rels/workbook.xml.rels' },
  );
  const block = Buffer.alloc(MB, 'A');
  async function* sheet() {
    yield Buffer.from(
      '<?xml version="1.0" encoding="UTF-8"?><worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData><row r="1"><c r="A1" t="inlineStr"><is><t>',
    );
    for (let i = 0; i < 600; i += 1) yield block;
    yield Buffer.from('</t></is></c></row></sheetData></worksheet>');
  }
  archive.append(Readable.from(sheet()), { name: 'xl/worksheets/sheet1.xml' });
  await archive.finalize();
  await finished(output);
  return new Uint8Array(await readFile(path));
}

describe('an import bomb', () => {
  it('of 0.6 MB of XLSX inflating to 600 MB fails unreadable_file; the process stays up and serves the other tenant', async () => {
    const bomb = await xlsxBomb();
    expect(bomb.length).toBeLessThan(MB);
    const { outcome: job, answers } = await whileAttacked(() => importAttack('bomb.xlsx', bomb));
    expect(job).toMatchObject({ status: 'failed', imported: 0, error: { code: 'unreadable_file' } });
    expectServed(answers);
    expect((await apiRequest(base, 'GET', '/health')).status).toBe(200);
  }, 180_000);

  it('of 10 MB of CSV with ten million columns on one line fails row_too_large; the process stays up and serves the other tenant', async () => {
    const bomb = new TextEncoder().encode(`phone\n${','.repeat(10_000_000)}\n`);
    expect(bomb.length).toBeLessThanOrEqual(10 * MB);
    const { outcome: job, answers } = await whileAttacked(() => importAttack('bomb.csv', bomb));
    expect(job).toMatchObject({
      status: 'failed',
      imported: 0,
      error: { code: 'row_too_large', message: expect.stringMatching(/^Row 2 /) },
    });
    expectServed(answers);
    expect((await apiRequest(base, 'GET', '/health')).status).toBe(200);
  }, 180_000);
});

describe('a GraphQL query of nested lists', () => {
  it('with 40,000 unknown fields in one input variable is answered 400 at once; the process keeps serving', async () => {
    // Every refused field once made the cost check inspect the whole value again: 40,000 fields
    // held a core for many minutes (4,000 took ten seconds).
    const input: Record<string, unknown> = { to: '5511999997002', message: 'x' };
    for (let i = 0; i < 40_000; i += 1) input[`f${i}`] = 1;
    const { outcome: refused, answers } = await whileAttacked(() =>
      fetch(`${base}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${attacker}` },
        body: JSON.stringify({
          query: 'mutation Send($input: SendMessageInput!) { sendMessage(input: $input) { __typename } }',
          variables: { input },
        }),
      }).then(async (response) => ({ status: response.status, body: await response.json() })),
    );
    expect(refused.status).toBe(400);
    expect(refused.body.errors[0].message).toContain('is not defined by type "SendMessageInput"');
    expectServed(answers);
  }, 60_000);

  it('over /v1, 40,000 unknown fields get a 422 naming the first 100 and saying there are more', async () => {
    const body: Record<string, unknown> = { to: '5511999997003', message: 'x' };
    for (let i = 0; i < 40_000; i += 1) body[`f${i}`] = 1;
    const { outcome: refused, answers } = await whileAttacked(() =>
      fetch(`${base}/v1/messages/send`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${attacker}` },
        body: JSON.stringify(body),
      }).then(async (response) => ({ status: response.status, text: await response.text() })),
    );
    expect(refused.status).toBe(422);
    // The whole list once came back: 2.5 MB of details, after a second of CPU.
    expect(refused.text.length).toBeLessThan(20_000);
    const { error } = JSON.parse(refused.text);
    expect(error.code).toBe('validation_error');
    expect(error.details).toHaveLength(100);
    expect(error.details[0]).toEqual({ field: 'f0', issue: 'unknown_field' });
    expect(error.message).toContain('only the first 100 bad fields are listed');
    expectServed(answers);
  }, 60_000);

  it('over a campaign of 50,000 contacts, 30 aliases of campaigns → contacts, is refused with 400 QUERY_TOO_LARGE; the process stays up', async () => {
    const campaign = await createCampaign('Fifty thousand');
    const db = new pg.Client({ connectionString: database.url });
    await db.connect();
    try {
      const { rows } = await db.query<{ account_id: string }>(
        'SELECT account_id FROM campaigns WHERE id = $1',
        [campaign],
      );
      await db.query(
        `INSERT INTO contacts (id, account_id, campaign_id, phone, created_at)
         SELECT 'cnt_bulk_' || g, $1, $2, (5511800000000 + g)::text, now() FROM generate_series(1, 50000) g`,
        [rows[0]!.account_id, campaign],
      );
    } finally {
      await db.end();
    }
    const aliases = Array.from(
      { length: 30 },
      (_, i) =>
        `c${i}: campaigns(perPage: 100) { ... on CampaignPage { nodes { contacts(perPage: 100) { id phone name } } } }`,
    );
    const { outcome: refused, answers } = await whileAttacked(() =>
      fetch(`${base}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${attacker}` },
        body: JSON.stringify({ query: `{ ${aliases.join(' ')} }` }),
      }).then(async (response) => ({ status: response.status, body: await response.json() })),
    );
    expect(refused.status).toBe(400);
    expect(refused.body.errors[0].extensions.code).toBe('QUERY_TOO_LARGE');
    expectServed(answers);
    // One alias is within the limit, and reads a page of the 50,000, not all of them.
    const one = await fetch(`${base}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${attacker}` },
      body: JSON.stringify({ query: `{ ${aliases[0]} }` }),
    }).then((response) => response.json());
    expect(one.errors).toBeUndefined();
    const big = one.data.c0.nodes.find((node: { contacts: unknown[] }) => node.contacts.length > 0);
    expect(big.contacts).toHaveLength(100);
    expect(tern.child.exitCode).toBeNull();
  }, 120_000);
});
