import { mkdtempSync, rmSync } from 'node:fs';
import { readdir, utimes, writeFile } from 'node:fs/promises';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import ExcelJS from 'exceljs';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../src/lib/ids.js';
import { IMPORT_MAX_FILE_BYTES } from '../src/modules/imports/import-options.js';
import { Uploads } from '../src/modules/imports/uploads.js';
import { throughPgBouncer } from './support/database.js';
import { type HttpResult, startTern, type TestAccount, type TestTern } from './support/tern.js';
import { waitFor } from './support/wait.js';

let t: TestTern;
let alice: TestAccount;
let bob: TestAccount;
// This file's Tern's own scratch directory, so that what is left on disk can be checked.
const importDir = mkdtempSync(join(tmpdir(), 'tern-imports-test-'));

beforeAll(async () => {
  t = await startTern({ env: { SIMULATOR_DELAY_MS: '20', IMPORT_DIR: importDir } });
  [alice, bob] = await Promise.all([t.createAccount(), t.createAccount()]);
});
afterAll(async () => {
  await t.stop();
  rmSync(importDir, { recursive: true, force: true });
});

interface UploadFile {
  name: string;
  content: string | Uint8Array<ArrayBuffer>;
}

async function createCampaign(account: TestAccount, fields: Record<string, unknown> = {}): Promise<string> {
  const response = await t.request('POST', '/v1/campaigns', {
    token: account.token,
    body: { name: 'Imported', ...fields },
  });
  expect(response.status, JSON.stringify(response.body)).toBe(201);
  return response.body.campaign;
}

// A form is a "simple" request a browser may send cross-site; /graphql wants this header on one.
const CSRF = { 'x-tern-csrf': '1' };

async function send(
  path: string,
  account: TestAccount,
  form: FormData,
  headers: Record<string, string> = {},
): Promise<HttpResult> {
  const response = await fetch(`${t.url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${account.token}`, ...headers },
    body: form,
  });
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: text ? JSON.parse(text) : null };
}

/** POST /v1/campaigns/{campaign}/contacts/import; the file part goes last unless `fileFirst`. */
function upload(
  account: TestAccount,
  campaign: string,
  file: UploadFile | null,
  fields: Record<string, string> = {},
  options: { fileFirst?: boolean } = {},
) {
  const form = new FormData();
  const addFile = () => file && form.append('file', new Blob([file.content]), file.name);
  if (options.fileFirst) addFile();
  for (const [name, value] of Object.entries(fields)) form.append(name, value);
  if (!options.fileFirst) addFile();
  return send(`/v1/campaigns/${campaign}/contacts/import`, account, form);
}

const IMPORT_MUTATION = `mutation ($campaign: ID!, $file: Upload!, $input: ImportContactsInput!) {
  importContacts(campaign: $campaign, file: $file, input: $input) {
    __typename
    ... on ImportJob { id status campaignId receivedFile }
    ... on Error { code message ... on ValidationError { details { field issue } } }
  }
}`;

/** The same upload through /graphql, as the GraphQL multipart request spec lays it out. */
function graphqlUpload(
  account: TestAccount,
  campaign: string,
  file: UploadFile,
  input: Record<string, unknown>,
) {
  const form = new FormData();
  form.append(
    'operations',
    JSON.stringify({ query: IMPORT_MUTATION, variables: { campaign, file: null, input } }),
  );
  form.append('map', JSON.stringify({ 0: ['variables.file'] }));
  form.append('0', new Blob([file.content]), file.name);
  return send('/graphql', account, form, CSRF);
}

function getJob(account: TestAccount, campaign: string, job: string) {
  return t.request('GET', `/v1/campaigns/${campaign}/contacts/import/${job}`, { token: account.token });
}

async function finished(account: TestAccount, campaign: string, job: string, timeoutMs = 60_000) {
  return waitFor(async () => {
    const response = await getJob(account, campaign, job);
    return response.body.status === 'processing' ? null : response.body;
  }, timeoutMs);
}

/** Uploads, expects the 202, and waits for the job to end. */
async function importFile(
  account: TestAccount,
  campaign: string,
  file: UploadFile,
  fields: Record<string, string> = {},
) {
  const response = await upload(account, campaign, file, fields);
  expect(response.status, JSON.stringify(response.body)).toBe(202);
  return finished(account, campaign, response.body.job);
}

function contactsOf(campaign: string) {
  return t.tern.deps.prisma.contact.findMany({
    where: { campaignId: campaign },
    orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
  });
}

async function xlsx(build: (workbook: ExcelJS.Workbook) => void): Promise<Uint8Array<ArrayBuffer>> {
  const workbook = new ExcelJS.Workbook();
  build(workbook);
  return new Uint8Array(await workbook.xlsx.writeBuffer());
}

// 100,000-row files take seconds alone, more on two cores shared with other test files.
const HEAVY_TEST_MS = 120_000;
/**
 * The files of 50,000 and 100,000 rows prove what size does (the row limit, exact counts, progress
 * over a long parse), which a pool in front of PostgreSQL does not change: they run in the main
 * pass only, and the PgBouncer pass runs every other import test of this file again.
 */
const mainPassOnly = it.skipIf(throughPgBouncer());

const csvOf = (rows: string[][], delimiter = ',') => rows.map((row) => row.join(delimiter)).join('\n');
const phoneOf = (i: number) => `55119${String(10_000_000 + i).padStart(8, '0')}`;

describe('POST /v1/campaigns/{campaign}/contacts/import', () => {
  it('answers 202 with the job object, and the job imports the rows by their header names', async () => {
    const campaign = await createCampaign(alice);
    const file = {
      name: 'contacts.csv',
      content: csvOf([
        ['Telefone', 'Nome', 'E-mail', 'CPF', 'Etiquetas'],
        ['+55 (11) 99999-0001', 'Ana', 'ana@example.com', '123', 'vip; sp|vip'],
        ['5511999990002', 'Bruno', '', '', ''],
      ]),
    };
    const response = await upload(alice, campaign, file, {
      phone_column: 'telefone',
      name_column: 'Nome',
      email_column: 'E-mail',
      document_column: 'CPF',
      tags_column: 'Etiquetas',
    });
    expect(response.status).toBe(202);
    expect(response.body).toEqual({
      job: expect.stringMatching(/^job_[0-9a-f]{32}$/),
      status: 'processing',
      campaign,
      received_file: 'contacts.csv',
      request: response.headers.get('x-request-id'),
    });
    const job = await finished(alice, campaign, response.body.job);
    expect(job).toEqual({
      job: response.body.job,
      campaign,
      status: 'completed',
      received_file: 'contacts.csv',
      processed: 2,
      total_rows: 2,
      imported: 2,
      duplicates: 0,
      invalid: 0,
      errors: [],
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      finished_at: expect.stringMatching(/Z$/),
      request: expect.stringMatching(/^req_/),
    });
    const contacts = await contactsOf(campaign);
    expect(
      contacts.map(({ phone, name, email, document, tags, importJobId }) => ({
        phone,
        name,
        email,
        document,
        tags,
        importJobId,
      })),
    ).toEqual([
      {
        phone: '5511999990001',
        name: 'Ana',
        email: 'ana@example.com',
        document: '123',
        tags: ['vip', 'sp'],
        importJobId: job.job,
      },
      { phone: '5511999990002', name: 'Bruno', email: null, document: null, tags: [], importJobId: job.job },
    ]);
  });
});

describe('the upload', () => {
  it('takes the form fields before or after the file', async () => {
    const campaign = await createCampaign(alice);
    const response = await upload(
      alice,
      campaign,
      { name: 'first.csv', content: 'phone\n5511999990011\n' },
      { phone_column: 'phone' },
      { fileFirst: true },
    );
    expect(response.status).toBe(202);
    expect(await finished(alice, campaign, response.body.job)).toMatchObject({
      status: 'completed',
      imported: 1,
    });
  });

  it('runs the same import through the GraphQL importContacts mutation and importJob query', async () => {
    const campaign = await createCampaign(alice);
    const response = await graphqlUpload(
      alice,
      campaign,
      { name: 'g.csv', content: 'Phone;Name\n5511999990021;Gil\n5511999990021;Again\nbad;Bad\n' },
      { phoneColumn: 'Phone', nameColumn: 'Name', delimiter: ';' },
    );
    expect(response.status).toBe(200);
    const accepted = response.body.data.importContacts;
    expect(accepted).toEqual({
      __typename: 'ImportJob',
      id: expect.stringMatching(/^job_/),
      status: 'processing',
      campaignId: campaign,
      receivedFile: 'g.csv',
    });
    await finished(alice, campaign, accepted.id);
    const read = await t.graphql(
      `query ($campaign: ID!, $id: ID!) { importJob(campaign: $campaign, id: $id) { __typename ... on ImportJob { status processed totalRows imported duplicates invalid errors { row field issue } error { code } } } }`,
      { campaign, id: accepted.id },
      alice.token,
    );
    expect(read.body.data.importJob).toEqual({
      __typename: 'ImportJob',
      status: 'completed',
      processed: 3,
      totalRows: 3,
      imported: 1,
      duplicates: 1,
      invalid: 1,
      errors: [{ row: 4, field: 'phone', issue: 'invalid_e164' }],
      error: null,
    });
    expect((await contactsOf(campaign)).map((c) => c.name)).toEqual(['Gil']);
  });

  it.each([
    [{}, 'phone_column', 'required'],
    [{ has_header: 'false', phone_column: 'phone' }, 'phone_column', 'invalid_value'],
    [{ phone_column: 'phone', delimiter: ':' }, 'delimiter', 'invalid_value'],
    [{ phone_column: 'phone', has_header: 'yes' }, 'has_header', 'invalid_value'],
    [{ phone_column: 'phone', file_format: 'xls' }, 'file_format', 'invalid_value'],
    [{ phone_column: 'phone', colour: 'blue' }, 'colour', 'unknown_field'],
    [{ phone_column: ['phone', 'mobile'] }, 'phone_column', 'invalid_value'],
  ])('refuses the form %j with 422 on %s (%s)', async (fields, field, issue) => {
    const campaign = await createCampaign(alice);
    const form = new FormData();
    for (const [name, value] of Object.entries(fields))
      for (const each of [value].flat()) form.append(name, each);
    form.append('file', new Blob(['phone\n5511999990031\n']), 'c.csv');
    const response = await send(`/v1/campaigns/${campaign}/contacts/import`, alice, form);
    expect(response.status).toBe(422);
    expect(response.body.error.code).toBe('validation_error');
    expect(response.body.error.details).toContainEqual({ field, issue });
  });

  it('refuses a form without its file, with another file, or whose format the name does not tell', async () => {
    const campaign = await createCampaign(alice);
    expect((await upload(alice, campaign, null, { phone_column: 'phone' })).body.error.details).toEqual([
      { field: 'file', issue: 'required' },
    ]);
    const unnamed = await upload(
      alice,
      campaign,
      { name: 'contacts.dat', content: 'phone\n5511999990041\n' },
      { phone_column: 'phone' },
    );
    expect(unnamed.status).toBe(422);
    expect(unnamed.body.error.details).toEqual([{ field: 'file_format', issue: 'required' }]);
    const form = new FormData();
    form.append('phone_column', 'phone');
    form.append('file', new Blob(['phone\n5511999990041\n']), 'a.csv');
    form.append('attachment', new Blob(['x']), 'b.csv');
    const extra = await send(`/v1/campaigns/${campaign}/contacts/import`, alice, form);
    expect(extra.status).toBe(422);
    expect(extra.body.error.details).toEqual([{ field: 'attachment', issue: 'unknown_field' }]);
    expect(await t.tern.deps.prisma.importJob.count({ where: { campaignId: campaign } })).toBe(0);
  });

  it('takes a GraphQL upload only with the CSRF header or a Bearer credential, as any form sent to /graphql', async () => {
    const campaign = await createCampaign(alice);
    const form = new FormData();
    form.append(
      'operations',
      JSON.stringify({
        query: IMPORT_MUTATION,
        variables: { campaign, file: null, input: { phoneColumn: 'phone' } },
      }),
    );
    form.append('map', JSON.stringify({ 0: ['variables.file'] }));
    form.append('0', new Blob(['phone\n5511999990141\n']), 'c.csv');
    // What a browser may attach to a form of another site by itself: refused before anything is read.
    const forged = await send('/graphql', alice, form, { authorization: 'Basic dXNlcjpwYXNzd29yZA==' });
    expect(forged.status).toBe(403);
    expect(await t.tern.deps.prisma.importJob.count({ where: { campaignId: campaign } })).toBe(0);

    const sent = await send('/graphql', alice, form);
    expect(sent.status).toBe(200);
    expect(sent.body.data.importContacts).toMatchObject({ __typename: 'ImportJob', campaignId: campaign });
    await finished(alice, campaign, sent.body.data.importContacts.id);
  });

  it('says which input field is wrong through GraphQL too', async () => {
    const campaign = await createCampaign(alice);
    const response = await graphqlUpload(
      alice,
      campaign,
      { name: 'g.csv', content: 'phone\n' },
      { delimiter: '::' },
    );
    expect(response.body.data.importContacts).toMatchObject({
      __typename: 'ValidationError',
      details: [
        { field: 'delimiter', issue: 'invalid_value' },
        { field: 'phoneColumn', issue: 'required' },
      ],
    });
  });

  it('answers bad_request through GraphQL when the file the map names never comes', async () => {
    const campaign = await createCampaign(alice);
    const form = new FormData();
    form.append(
      'operations',
      JSON.stringify({
        query: IMPORT_MUTATION,
        variables: { campaign, file: null, input: { phoneColumn: 'phone' } },
      }),
    );
    form.append('map', JSON.stringify({ 0: ['variables.file'] }));
    const response = await send('/graphql', alice, form, CSRF);
    expect(response.status).toBe(400);
    expect(response.body.errors[0].extensions.code).toBe('bad_request');
    expect(await t.tern.deps.prisma.importJob.count({ where: { campaignId: campaign } })).toBe(0);
  });

  it('answers 400 to a body that is not a multipart form', async () => {
    const campaign = await createCampaign(alice);
    const response = await t.request('POST', `/v1/campaigns/${campaign}/contacts/import`, {
      token: alice.token,
      body: { phone_column: 'phone' },
    });
    expect(response.status).toBe(400);
    expect(response.body.error.code).toBe('bad_request');
    // Other routes still refuse multipart bodies as before.
    const form = new FormData();
    form.append('name', 'x');
    expect((await send('/v1/campaigns', alice, form)).body.error.code).toBe('bad_request');
  });

  it('answers 401 without a valid token, before reading the file', async () => {
    const campaign = await createCampaign(alice);
    const form = new FormData();
    form.append('phone_column', 'phone');
    form.append('file', new Blob(['phone\n5511999990151\n']), 'c.csv');
    const response = await send(
      `/v1/campaigns/${campaign}/contacts/import`,
      { ...alice, token: 'not-a-token' },
      form,
    );
    expect(response.status).toBe(401);
    expect(response.body.error.code).toBe('unauthorized');
  });

  it("answers 404 for another account's campaign or job, and a campaign that does not exist", async () => {
    const campaign = await createCampaign(alice);
    const file = { name: 'c.csv', content: 'phone\n5511999990051\n' };
    expect((await upload(bob, campaign, file, { phone_column: 'phone' })).body.error).toMatchObject({
      code: 'not_found',
    });
    expect((await upload(alice, 'cmp_missing', file, { phone_column: 'phone' })).status).toBe(404);
    const response = await upload(alice, campaign, file, { phone_column: 'phone' });
    await finished(alice, campaign, response.body.job);
    const foreign = await getJob(bob, campaign, response.body.job);
    expect(foreign.status).toBe(404);
    expect(foreign.body.error.code).toBe('not_found');
    expect((await getJob(alice, await createCampaign(alice), response.body.job)).status).toBe(404);
    expect((await getJob(alice, campaign, 'job_missing')).status).toBe(404);
    const graphql = await t.graphql(
      `query ($c: ID!, $id: ID!) { importJob(campaign: $c, id: $id) { __typename } }`,
      { c: campaign, id: response.body.job },
      bob.token,
    );
    expect(graphql.body.data.importJob.__typename).toBe('NotFoundError');
  });
});

/**
 * Sends a multipart request whose file part is `fileBytes` long and never ends the request:
 * the answer has to come while the client is still sending.
 */
function sendWithoutEnding(
  path: string,
  account: TestAccount,
  parts: { fields: [string, string][]; fileField: string },
  fileBytes: number,
) {
  const boundary = 'tern-test-boundary-7c1f';
  return new Promise<{ status: number; body: any }>((resolve, reject) => {
    const request = http.request(`${t.url}${path}`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${account.token}`,
        'content-type': `multipart/form-data; boundary=${boundary}`,
        ...CSRF,
      },
    });
    request.on('response', (response) => {
      let text = '';
      response.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
      response.on('end', () => {
        resolve({ status: response.statusCode ?? 0, body: JSON.parse(text) });
        request.destroy();
      });
    });
    request.on('error', reject);
    for (const [name, value] of parts.fields)
      request.write(`--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`);
    request.write(
      `--${boundary}\r\nContent-Disposition: form-data; name="${parts.fileField}"; filename="big.csv"\r\nContent-Type: text/csv\r\n\r\n`,
    );
    request.write(Buffer.alloc(fileBytes, 'a'));
  });
}

/** The uploads stored in PostgreSQL right now. */
async function uploadIds(): Promise<string[]> {
  return (await t.tern.deps.prisma.upload.findMany({ select: { id: true } })).map((upload) => upload.id);
}
const newIn = (now: string[], before: string[]) => now.filter((id) => !before.includes(id));

describe('the 10 MB limit', () => {
  it('answers 413 as soon as the file passes 10 MB, and keeps nothing of it', async () => {
    const campaign = await createCampaign(alice);
    const spools = async () => (await readdir(tmpdir())).filter((name) => name.startsWith('tern-upload-'));
    const spoolsBefore = await spools();
    const uploadsBefore = await uploadIds();
    const response = await sendWithoutEnding(
      `/v1/campaigns/${campaign}/contacts/import`,
      alice,
      { fields: [['phone_column', 'phone']], fileField: 'file' },
      IMPORT_MAX_FILE_BYTES + 1,
    );
    expect(response.status).toBe(413);
    expect(response.body.error).toEqual({
      code: 'payload_too_large',
      message: 'The file is larger than 10 MB',
    });
    expect(await readdir(importDir)).toEqual([]);
    expect(await spools()).toEqual(spoolsBefore);
    expect(newIn(await uploadIds(), uploadsBefore)).toEqual([]);
    expect(await t.tern.deps.prisma.importJob.count({ where: { campaignId: campaign } })).toBe(0);
  });

  it('answers 413 through GraphQL too', async () => {
    const campaign = await createCampaign(alice);
    const uploadsBefore = await uploadIds();
    const operations = JSON.stringify({
      query: IMPORT_MUTATION,
      variables: { campaign, file: null, input: { phoneColumn: 'phone' } },
    });
    const response = await sendWithoutEnding(
      '/graphql',
      alice,
      {
        fields: [
          ['operations', operations],
          ['map', '{"0":["variables.file"]}'],
        ],
        fileField: '0',
      },
      IMPORT_MAX_FILE_BYTES + 1,
    );
    expect(response.status).toBe(413);
    expect(response.body.errors[0].extensions.code).toBe('payload_too_large');
    expect(await readdir(importDir)).toEqual([]);
    expect(newIn(await uploadIds(), uploadsBefore)).toEqual([]);
  });

  it(
    'takes a file of exactly 10 MB, also sent as a whole 10 MB + 1 byte body to the other layer',
    async () => {
      const campaign = await createCampaign(alice);
      // Rows of 60,000 bytes (a row may have up to 64 KiB), the last one taking what is left.
      const line = `${'9'.repeat(59_999)}\n`;
      const lines = Math.floor((IMPORT_MAX_FILE_BYTES - 6) / line.length);
      const content = `phone\n${line.repeat(lines)}${'9'.repeat(IMPORT_MAX_FILE_BYTES - 6 - lines * line.length)}`;
      expect(content.length).toBe(IMPORT_MAX_FILE_BYTES);
      const accepted = await upload(
        alice,
        campaign,
        { name: 'exact.csv', content },
        { phone_column: 'phone' },
      );
      expect(accepted.status).toBe(202);
      expect(await finished(alice, campaign, accepted.body.job)).toMatchObject({
        status: 'completed',
        total_rows: lines + 1,
        invalid: lines + 1,
      });
      const over = await graphqlUpload(
        alice,
        campaign,
        { name: 'over.csv', content: `${content}9` },
        { phoneColumn: 'phone' },
      );
      expect(over.status).toBe(413);
      const overRest = await upload(
        alice,
        campaign,
        { name: 'over.csv', content: `${content}9` },
        { phone_column: 'phone' },
      );
      expect(overRest.status).toBe(413);
      expect(overRest.body.error.code).toBe('payload_too_large');
    },
    HEAVY_TEST_MS,
  );
});

describe('rows', () => {
  const header = ['phone', 'name'];

  mainPassOnly(
    'imports exactly 100,000 data rows, counting 1,000 duplicates and 10 invalid phones exactly',
    async () => {
      const campaign = await createCampaign(alice);
      const rows = Array.from({ length: 100_000 }, (_, i) => [
        i < 10 ? `12345${i}` : phoneOf(i < 1_010 ? i + 1_000 : i),
        `Contact ${i}`,
      ]);
      const job = await importFile(
        alice,
        campaign,
        { name: 'big.csv', content: csvOf([header, ...rows]) },
        { phone_column: 'phone', name_column: 'name' },
      );
      expect(job).toMatchObject({
        status: 'completed',
        total_rows: 100_000,
        imported: 98_990,
        duplicates: 1_000,
        invalid: 10,
      });
      expect(job.errors).toHaveLength(10);
      expect(job.errors[0]).toEqual({ row: 2, field: 'phone', issue: 'invalid_e164' });
      // In the file's order, as contacts added one by one would be (and a campaign sends them).
      const stored = await t.tern.deps.prisma.contact.findMany({
        where: { campaignId: campaign },
        orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
        select: { phone: true },
      });
      expect(stored.map((contact) => contact.phone)).toEqual(
        Array.from({ length: 98_990 }, (_, i) => phoneOf(1_010 + i)),
      );
    },
    HEAVY_TEST_MS,
  );

  mainPassOnly(
    'refuses 100,001 data rows: the job fails with too_many_rows and imports none',
    async () => {
      const campaign = await createCampaign(alice);
      const rows = Array.from({ length: 100_001 }, (_, i) => [phoneOf(i), `Contact ${i}`]);
      const job = await importFile(
        alice,
        campaign,
        { name: 'too-big.csv', content: csvOf([header, ...rows]) },
        { phone_column: 'phone' },
      );
      expect(job).toMatchObject({
        status: 'failed',
        total_rows: 0,
        imported: 0,
        duplicates: 0,
        invalid: 0,
        errors: [],
        error: { code: 'too_many_rows', message: 'The file has more than 100,000 data rows' },
      });
      expect(await t.tern.deps.prisma.contact.count({ where: { campaignId: campaign } })).toBe(0);
    },
    HEAVY_TEST_MS,
  );

  it("counts duplicates within the file and against the campaign's contacts; the first row of a phone wins", async () => {
    const campaign = await createCampaign(alice);
    expect(
      (
        await t.request('POST', `/v1/campaigns/${campaign}/contacts`, {
          token: alice.token,
          body: { phone: '5511999990061', name: 'Existing' },
        })
      ).status,
    ).toBe(201);
    const job = await importFile(
      alice,
      campaign,
      {
        name: 'dups.csv',
        content: csvOf([
          header,
          ['5511999990061', 'Again'],
          ['5511999990062', 'First'],
          ['+55 11 99999-0062', 'Second'],
          ['5511999990063', 'Third'],
          ['5511999990062', 'Fourth'],
        ]),
      },
      { phone_column: 'phone', name_column: 'name' },
    );
    expect(job).toMatchObject({
      status: 'completed',
      total_rows: 5,
      imported: 2,
      duplicates: 3,
      invalid: 0,
      errors: [],
    });
    expect((await contactsOf(campaign)).map((c) => [c.phone, c.name])).toEqual([
      ['5511999990061', 'Existing'],
      ['5511999990062', 'First'],
      ['5511999990063', 'Third'],
    ]);
    // The same file again: every row is now a duplicate.
    expect(
      await importFile(
        alice,
        campaign,
        { name: 'dups.csv', content: csvOf([header, ['5511999990062', 'x'], ['5511999990063', 'y']]) },
        { phone_column: 'phone' },
      ),
    ).toMatchObject({
      imported: 0,
      duplicates: 2,
    });
  });

  it('skips invalid rows, counts them, and keeps the first 100 errors with their spreadsheet row', async () => {
    const campaign = await createCampaign(alice);
    const rows = [
      ['phone', 'email', 'name', 'tags'],
      ['5511999990071', 'ok@example.com', 'Fine', 'a|b'],
      ['', 'x@example.com', 'No phone', ''],
      ['5511999990072', 'not-an-email', 'Bad mail', ''],
      ['0511999990073', 'bad', 'Both bad', ''],
      ['5511999990074', '', 'x'.repeat(201), 't'.repeat(51)],
      ...Array.from({ length: 150 }, (_, i) => [`12${i}`, '', '', '']),
    ];
    const job = await importFile(
      alice,
      campaign,
      { name: 'invalid.csv', content: csvOf(rows) },
      { phone_column: 'phone', email_column: 'email', name_column: 'name', tags_column: 'tags' },
    );
    expect(job).toMatchObject({
      status: 'completed',
      total_rows: 155,
      imported: 1,
      duplicates: 0,
      invalid: 154,
    });
    expect(job.errors).toHaveLength(100);
    expect(job.errors.slice(0, 7)).toEqual([
      { row: 3, field: 'phone', issue: 'required' },
      { row: 4, field: 'email', issue: 'invalid_format' },
      { row: 5, field: 'phone', issue: 'invalid_e164' },
      { row: 5, field: 'email', issue: 'invalid_format' },
      { row: 6, field: 'name', issue: 'too_long' },
      { row: 6, field: 'tags.0', issue: 'too_long' },
      { row: 7, field: 'phone', issue: 'invalid_e164' },
    ]);
    expect((await contactsOf(campaign)).map((c) => [c.phone, c.tags])).toEqual([
      ['5511999990071', ['a', 'b']],
    ]);
  });

  it('maps a semicolon CSV without header by column numbers', async () => {
    const campaign = await createCampaign(alice);
    const content = csvOf(
      [
        ['Ana', '5511999990081', 'vip|sp', 'ana@example.com'],
        ['Bia', '5511999990082', '', ''],
        ['Caio', 'nope', '', ''],
      ],
      ';',
    );
    const job = await importFile(
      alice,
      campaign,
      { name: 'plain.csv', content },
      {
        has_header: 'false',
        delimiter: ';',
        name_column: '1',
        phone_column: '2',
        tags_column: '3',
        email_column: '4',
      },
    );
    expect(job).toMatchObject({
      status: 'completed',
      total_rows: 3,
      imported: 2,
      invalid: 1,
      errors: [{ row: 3, field: 'phone', issue: 'invalid_e164' }],
    });
    expect((await contactsOf(campaign)).map((c) => [c.name, c.phone, c.tags, c.email])).toEqual([
      ['Ana', '5511999990081', ['vip', 'sp'], 'ana@example.com'],
      ['Bia', '5511999990082', [], null],
    ]);
  });

  it('takes the phone from the first column without a header, tabs as delimiter', async () => {
    const campaign = await createCampaign(alice);
    const job = await importFile(
      alice,
      campaign,
      { name: 'tabs.txt', content: '5511999990091\tTab One\n5511999990092\tTab Two\n' },
      { has_header: 'false', delimiter: 'tab', name_column: '2' },
    );
    expect(job).toMatchObject({ status: 'completed', imported: 2 });
    expect((await contactsOf(campaign)).map((c) => c.name)).toEqual(['Tab One', 'Tab Two']);
  });

  it('reads UTF-8 with a BOM, CRLF line ends, quoted fields with delimiters and line breaks, and skips empty lines', async () => {
    const campaign = await createCampaign(alice);
    const content = [
      '\uFEFFphone,name,tags',
      '5511999990101,"Silva, Ana",vip',
      '5511999990102,"Two',
      'lines ""quoted""",a;b',
      '',
      'bad,José Ñandú,',
      '5511999990103,Zoë 😀,',
    ].join('\r\n');
    const job = await importFile(
      alice,
      campaign,
      { name: 'bom.csv', content: new TextEncoder().encode(content) },
      { phone_column: 'phone', name_column: 'name', tags_column: 'tags' },
    );
    // The quoted record spans two lines but is one spreadsheet row; the empty line is a row of its own.
    expect(job).toMatchObject({
      status: 'completed',
      total_rows: 4,
      imported: 3,
      invalid: 1,
      errors: [{ row: 5, field: 'phone', issue: 'invalid_e164' }],
    });
    expect((await contactsOf(campaign)).map((c) => [c.name, c.tags])).toEqual([
      ['Silva, Ana', ['vip']],
      ['Two\r\nlines "quoted"', ['a', 'b']],
      ['Zoë 😀', []],
    ]);
  });

  it('reads the first worksheet of an XLSX: numbers keep every digit, formulas their cached value, empty rows skipped', async () => {
    const campaign = await createCampaign(alice);
    const content = await xlsx((workbook) => {
      const sheet = workbook.addWorksheet('Contacts');
      sheet.addRow(['Phone', 'Name', 'Email']);
      sheet.addRow([5511999990111, 'Number', 'n@example.com']);
      sheet.getCell('A2').numFmt = '0.00E+00';
      sheet.addRow(['+55 11 99999-0112', { formula: 'CONCATENATE("For","mula")', result: 'Formula' }, '']);
      sheet.addRow([
        { formula: 'A2+2', result: 5511999990113 },
        { richText: [{ text: 'Rich ' }, { font: { bold: true }, text: 'Text' }] },
        null,
      ]);
      sheet.getRow(6).getCell(1).value = 'bad';
      sheet.getRow(7).getCell(1).value = 5511999990114;
      workbook.addWorksheet('Other').addRow(['5511999990199', 'Not imported']);
    });
    const job = await importFile(
      alice,
      campaign,
      { name: 'contacts.xlsx', content },
      { phone_column: 'phone', name_column: 'name', email_column: 'email' },
    );
    expect(job).toMatchObject({
      status: 'completed',
      total_rows: 5,
      imported: 4,
      invalid: 1,
      errors: [{ row: 6, field: 'phone', issue: 'invalid_e164' }],
    });
    expect((await contactsOf(campaign)).map((c) => [c.phone, c.name, c.email])).toEqual([
      ['5511999990111', 'Number', 'n@example.com'],
      ['5511999990112', 'Formula', null],
      ['5511999990113', 'Rich Text', null],
      ['5511999990114', null, null],
    ]);
  });

  mainPassOnly(
    'imports 100,000 XLSX rows with the same counts as the CSV',
    async () => {
      const campaign = await createCampaign(alice);
      const content = await xlsx((workbook) => {
        const sheet = workbook.addWorksheet('Contacts');
        sheet.addRow(['phone', 'name']);
        for (let i = 0; i < 100_000; i += 1)
          sheet.addRow([
            i < 10 ? Number(`12345${i}`) : Number(phoneOf(i < 1_010 ? i + 1_000 : i)),
            `Contact ${i}`,
          ]);
      });
      const job = await importFile(
        alice,
        campaign,
        { name: 'big.xlsx', content },
        { phone_column: 'phone', name_column: 'name' },
      );
      expect(job).toMatchObject({
        status: 'completed',
        total_rows: 100_000,
        imported: 98_990,
        duplicates: 1_000,
        invalid: 10,
      });
    },
    HEAVY_TEST_MS,
  );
});

describe('files refused as a whole', () => {
  it.each([
    [
      'a header without the named column',
      { name: 'h.csv', content: 'phone,name\n5511999990121,A\n' },
      { phone_column: 'phone', email_column: 'email' },
      'missing_column',
    ],
    [
      'an empty file that should have a header',
      { name: 'empty.csv', content: '' },
      { phone_column: 'phone' },
      'missing_column',
    ],
    [
      'a column number no row reaches',
      { name: 'n.csv', content: '5511999990122,A\n5511999990123,B,C\n' },
      { has_header: 'false', email_column: '4' },
      'missing_column',
    ],
    [
      'CSV text sent as XLSX',
      { name: 'c.xlsx', content: 'phone\n5511999990124\n' },
      { phone_column: 'phone' },
      'unreadable_file',
    ],
    [
      'a broken zip',
      { name: 'broken.xlsx', content: new Uint8Array([0x50, 0x4b, 0x03, 0x04, 1, 2, 3, 4, 5, 6, 7, 8, 9]) },
      { phone_column: 'phone' },
      'unreadable_file',
    ],
    [
      'binary sent as CSV',
      { name: 'bin.csv', content: new Uint8Array([0x70, 0x68, 0x6f, 0x6e, 0x65, 0x0a, 0x00, 0x01]) },
      { phone_column: 'phone' },
      'unreadable_file',
    ],
    [
      'a quote never closed',
      { name: 'q.csv', content: 'phone,name\n5511999990125,"Open\n5511999990126,B\n' },
      { phone_column: 'phone' },
      'unreadable_file',
    ],
    [
      'Latin-1 text, not UTF-8',
      {
        name: 'l.csv',
        content: new Uint8Array([
          ...Buffer.from('phone,name\n5511999990127,Jos'),
          0xe9,
          ...Buffer.from('\n'),
        ]),
      },
      { phone_column: 'phone', name_column: 'name' },
      'unreadable_file',
    ],
    [
      'a NUL after the first 4 KB',
      {
        name: 'z.csv',
        content: new Uint8Array([
          ...Buffer.from(`phone,name\n${'5511999990128,A\n'.repeat(400)}`),
          0x00,
          ...Buffer.from('\n'),
        ]),
      },
      { phone_column: 'phone', name_column: 'name' },
      'unreadable_file',
    ],
  ])('fails %s and imports nothing', async (_what, file, fields, code) => {
    const campaign = await createCampaign(alice);
    const job = await importFile(alice, campaign, file, fields);
    expect(job).toMatchObject({
      status: 'failed',
      imported: 0,
      error: { code, message: expect.any(String) },
    });
    expect(job.finished_at).toEqual(expect.stringMatching(/Z$/));
    expect(await t.tern.deps.prisma.contact.count({ where: { campaignId: campaign } })).toBe(0);
  });

  it('fails an XLSX whose named column is missing', async () => {
    const campaign = await createCampaign(alice);
    const content = await xlsx((workbook) => workbook.addWorksheet('S').addRow(['mobile']));
    expect(
      await importFile(alice, campaign, { name: 'm.xlsx', content }, { phone_column: 'phone' }),
    ).toMatchObject({ status: 'failed', error: { code: 'missing_column' } });
  });
});

describe('bounds on a row', () => {
  const KIB = 1024;
  /** Imports the file and expects it refused with row_too_large naming `row`, nothing imported. */
  async function expectRowTooLarge(file: UploadFile, fields: Record<string, string>, row: number) {
    const campaign = await createCampaign(alice);
    const job = await importFile(alice, campaign, file, fields);
    expect(job).toMatchObject({
      status: 'failed',
      imported: 0,
      total_rows: 0,
      error: { code: 'row_too_large' },
    });
    expect(job.error.message).toMatch(new RegExp(`^Row ${row.toLocaleString('en')} `));
    expect(await t.tern.deps.prisma.contact.count({ where: { campaignId: campaign } })).toBe(0);
  }

  it('takes a CSV row of exactly 64 KiB of values and delimiters, and refuses one byte more with its row number', async () => {
    const row = (bytes: number) => `5511999990131,${'a'.repeat(bytes - 14)}`;
    const campaign = await createCampaign(alice);
    const fits = await importFile(
      alice,
      campaign,
      { name: 'fits.csv', content: `phone,name\n5511999990130,Ana\n${row(64 * KIB)}\n` },
      { phone_column: 'phone', name_column: 'name' },
    );
    // Within the row bound, but a name longer than a contact's: an invalid row, not a refused file.
    expect(fits).toMatchObject({ status: 'completed', total_rows: 2, imported: 1, invalid: 1 });
    await expectRowTooLarge(
      {
        name: 'over.csv',
        content: `phone,name\n5511999990130,Ana\n\n${row(64 * KIB + 1)}\n5511999990132,Bo\n`,
      },
      { phone_column: 'phone' },
      4,
    );
  });

  it('counts UTF-8 bytes, not characters', async () => {
    // 21,846 euro signs are 65,538 bytes in 21,846 characters.
    await expectRowTooLarge(
      { name: 'euro.csv', content: `phone,name\n5511999990133,${'€'.repeat(21_846)}\n` },
      { phone_column: 'phone' },
      2,
    );
  });

  it('takes 100 columns and refuses 101, with the row number', async () => {
    const campaign = await createCampaign(alice);
    const columns = (n: number) =>
      ['5511999990134', ...Array.from({ length: n - 1 }, (_, i) => `c${i}`)].join(',');
    expect(
      await importFile(
        alice,
        campaign,
        { name: 'hundred.csv', content: `phone\n${columns(100)}\n` },
        { phone_column: 'phone' },
      ),
    ).toMatchObject({ status: 'completed', imported: 1 });
    await expectRowTooLarge(
      { name: 'wide.csv', content: `phone\n5511999990135\n${columns(101)}\n` },
      { phone_column: 'phone' },
      3,
    );
  });

  it('refuses a line of a million delimiters without reading it as a million columns', async () => {
    await expectRowTooLarge(
      { name: 'bomb.csv', content: `phone\n5511999990136\n${','.repeat(1_000_000)}\n5511999990137\n` },
      { phone_column: 'phone' },
      3,
    );
  });

  it('refuses a quoted value running over many short lines, counting rows as a spreadsheet shows them', async () => {
    // Row 2 spans two lines; row 3 is empty; row 4 is the long one, 70,000 lines of 1 character.
    const content = `phone,name\n5511999990138,"Two\nlines"\n\n5511999990139,"${'x\n'.repeat(70_000)}"\n`;
    await expectRowTooLarge({ name: 'lines.csv', content }, { phone_column: 'phone' }, 4);
  });

  it('refuses a line far longer than a row may be, quoted or not, with its row number', async () => {
    await expectRowTooLarge(
      {
        name: 'quoted.csv',
        content: `phone,name\n5511999990140,A\n5511999990141,"${'y'.repeat(400 * KIB)}"\n`,
      },
      { phone_column: 'phone' },
      3,
    );
    await expectRowTooLarge(
      { name: 'plain.csv', content: `phone,name\n5511999990142,${'y'.repeat(400 * KIB)}\n` },
      { phone_column: 'phone' },
      2,
    );
  });

  it('refuses an XLSX cell over 64 KiB, or a row of 101 columns, with the row number', async () => {
    const long = await xlsx((workbook) => {
      const sheet = workbook.addWorksheet('S');
      sheet.addRow(['phone', 'name']);
      sheet.addRow(['5511999990143', 'A']);
      sheet.addRow(['5511999990144', 'b'.repeat(64 * KIB + 1)]);
    });
    await expectRowTooLarge({ name: 'long.xlsx', content: long }, { phone_column: 'phone' }, 3);
    const wide = await xlsx((workbook) => {
      const sheet = workbook.addWorksheet('S');
      sheet.addRow(['phone']);
      sheet.addRow(['5511999990145', ...Array.from({ length: 100 }, (_, i) => `c${i}`)]);
    });
    await expectRowTooLarge({ name: 'wide.xlsx', content: wide }, { phone_column: 'phone' }, 2);
  });

  it(
    'refuses an XLSX whose parts inflate past IMPORT_MAX_INFLATED_MB, and takes it below',
    async () => {
      const small = await startTern({ env: { IMPORT_MAX_INFLATED_MB: '1', IMPORT_DIR: importDir } });
      try {
        const owner = await small.createAccount();
        const campaignOf = async (tern: TestTern, account: TestAccount) =>
          (await tern.request('POST', '/v1/campaigns', { token: account.token, body: { name: 'Inflated' } }))
            .body.campaign as string;
        // 30,000 rows inflate to some 2 MB of XML, compressed to a fraction of it.
        const content = await xlsx((workbook) => {
          const sheet = workbook.addWorksheet('S');
          sheet.addRow(['phone', 'name']);
          for (let i = 0; i < 30_000; i += 1) sheet.addRow([phoneOf(700_000 + i), `Name ${i}`]);
        });
        expect(content.length).toBeLessThan(1024 * KIB);
        const form = new FormData();
        form.append('phone_column', 'phone');
        form.append('file', new Blob([content]), 'inflated.xlsx');
        const campaign = await campaignOf(small, owner);
        const accepted = await fetch(`${small.url}/v1/campaigns/${campaign}/contacts/import`, {
          method: 'POST',
          headers: { authorization: `Bearer ${owner.token}` },
          body: form,
        });
        const job = (await accepted.json()).job as string;
        const refused = await waitFor(async () => {
          const body = (
            await small.request('GET', `/v1/campaigns/${campaign}/contacts/import/${job}`, {
              token: owner.token,
            })
          ).body;
          return body.status === 'processing' ? null : body;
        }, 60_000);
        expect(refused).toMatchObject({
          status: 'failed',
          imported: 0,
          error: { code: 'unreadable_file', message: expect.stringContaining('inflate to more than 1 MB') },
        });
        // The default budget, 100 MB, takes it.
        const taken = await importFile(
          alice,
          await createCampaign(alice),
          { name: 'inflated.xlsx', content },
          { phone_column: 'phone' },
        );
        expect(taken).toMatchObject({ status: 'completed', imported: 30_000 });
      } finally {
        await small.stop();
      }
    },
    HEAVY_TEST_MS,
  );
});

describe('the job', () => {
  mainPassOnly(
    'shows rows processed while it runs, and commits the contacts all at once',
    async () => {
      const campaign = await createCampaign(alice);
      const rows = Array.from({ length: 50_000 }, (_, i) => [phoneOf(200_000 + i)]);
      const response = await upload(
        alice,
        campaign,
        { name: 'slow.csv', content: csvOf([['phone'], ...rows]) },
        { phone_column: 'phone' },
      );
      expect(response.status).toBe(202);
      // Holding the campaign row (reading 50,000 rows takes far longer than taking it) keeps the
      // job's final INSERT waiting on it, inside the job's transaction.
      const holder = new pg.Client({ connectionString: t.database.url });
      await holder.connect();
      try {
        await holder.query('BEGIN');
        await holder.query('SELECT 1 FROM campaigns WHERE id = $1 FOR UPDATE', [campaign]);
        const seen = new Set<number>();
        // A deadline, not a bound: parsing 50,000 rows takes far longer on a busy machine.
        const during = await waitFor(async () => {
          const job = (await getJob(alice, campaign, response.body.job)).body;
          seen.add(job.processed);
          return job.processed === 50_000 ? job : null;
        }, 60_000);
        expect(during).toMatchObject({ status: 'processing', imported: 0, finished_at: null });
        expect(during.error).toBeUndefined();
        expect([...seen].some((processed) => processed > 0 && processed < 50_000)).toBe(true);
        expect(await t.tern.deps.prisma.contact.count({ where: { campaignId: campaign } })).toBe(0);
        await holder.query('ROLLBACK');
        expect(await finished(alice, campaign, response.body.job)).toMatchObject({
          status: 'completed',
          processed: 50_000,
          imported: 50_000,
        });
      } finally {
        await holder.end();
      }
      // Its upload goes with the transaction that completes it; its copy on disk right after.
      expect(await t.tern.deps.prisma.upload.count({ where: { id: response.body.job } })).toBe(0);
      await waitFor(async () => ((await readdir(importDir)).length === 0 ? true : null));
    },
    HEAVY_TEST_MS,
  );

  it('gives the new contacts of a running campaign their messages', async () => {
    const template = (
      await t.request('POST', '/v1/templates', {
        token: alice.token,
        body: { name: 'Import hello', content: 'Hi {{name}}' },
      })
    ).body.template;
    const campaign = await createCampaign(alice, { template, batch_size: 5, delay: 0.5 });
    await t.tern.deps.prisma.contact.createMany({
      data: Array.from({ length: 30 }, (_, i) => ({
        id: newId('cnt'),
        accountId: alice.account,
        campaignId: campaign,
        phone: phoneOf(300_000 + i),
        createdAt: new Date(Date.now() + i),
      })),
    });
    expect((await t.request('POST', `/v1/campaigns/${campaign}/start`, { token: alice.token })).status).toBe(
      200,
    );
    await importFile(
      alice,
      campaign,
      {
        name: 'late.csv',
        content: csvOf([
          ['phone', 'name'],
          [phoneOf(300_100), 'Late'],
          [phoneOf(300_101), 'Later'],
        ]),
      },
      { phone_column: 'phone', name_column: 'name' },
    );
    await waitFor(
      async () =>
        (await t.request('GET', `/v1/campaigns/${campaign}`, { token: alice.token })).body.status ===
        'finished'
          ? true
          : null,
      20_000,
    );
    const texts = await t.tern.deps.prisma.message.findMany({
      where: { campaignId: campaign, to: { in: [phoneOf(300_100), phoneOf(300_101)] } },
      select: { text: true },
    });
    expect(texts.map((m) => m.text).sort()).toEqual(['Hi Late', 'Hi Later']);
  });

  it('is enqueued again by the recovery sweep when its BullMQ job is gone; abandoned uploads and old files are removed', async () => {
    const campaign = await createCampaign(alice);
    const uploads = new Uploads(t.tern.deps.pool, t.clock);
    const store = (id: string, content: string) =>
      uploads.store(id, Readable.from([Buffer.from(content)]), IMPORT_MAX_FILE_BYTES);
    const id = newId('job');
    await store(id, 'phone\n5511999990131\n');
    await t.tern.deps.prisma.importJob.create({
      data: {
        id,
        accountId: alice.account,
        campaignId: campaign,
        receivedFile: 'lost.csv',
        fileFormat: 'csv',
        options: { hasHeader: true, delimiter: ',', columns: { phone: 'phone' } },
        createdAt: t.clock.now(),
      },
    });
    // Stored two hours ago (by the service's clock) and never given a job: its request died.
    await store('job_left_by_a_dead_request', 'phone\n');
    await t.tern.deps.prisma.upload.update({
      where: { id: 'job_left_by_a_dead_request' },
      data: { createdAt: new Date(t.clock.now().getTime() - 2 * 3_600_000) },
    });
    await store('job_still_uploading', 'phone\n');
    const orphan = join(importDir, 'job_left_by_a_crash.csv');
    const recent = join(importDir, 'job_being_read.csv');
    await writeFile(orphan, 'x');
    await writeFile(recent, 'x');
    await utimes(orphan, new Date(Date.now() - 2 * 3_600_000), new Date(Date.now() - 2 * 3_600_000));

    expect(await t.tern.services.contactImports.recoverStalled(0)).toBe(1);
    expect(await finished(alice, campaign, id)).toMatchObject({ status: 'completed', imported: 1 });
    await waitFor(async () => ((await readdir(importDir)).length === 1 ? true : null));
    expect(await readdir(importDir)).toEqual(['job_being_read.csv']);
    const left = await uploadIds();
    expect(left).toContain('job_still_uploading');
    expect(left).not.toContain('job_left_by_a_dead_request');
    expect(left).not.toContain(id);
    await t.tern.services.contactImports.recoverStalled(0);
    expect(await readdir(importDir)).toEqual(['job_being_read.csv']);
    expect(await uploadIds()).toContain('job_still_uploading');
    await uploads.remove('job_still_uploading');
  });
});
