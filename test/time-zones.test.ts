import { randomBytes } from 'node:crypto';
import { cp, mkdtemp, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_DATABASE_URL, DEFAULT_MIGRATIONS_DIR, migrateDatabase } from '../src/db/migrations.js';
import { withDatabase } from '../src/db/schema-engine.js';
import { ValidationError } from '../src/errors.js';
import { startTern, type TestAccount, type TestTern } from './support/tern.js';
import { waitFor } from './support/wait.js';

// A time zone is valid only when both the runtime and PostgreSQL know it: US/Pacific-New is a
// name the runtime (ICU) still knows and PostgreSQL's tzdata dropped, so a stored one failed
// every statement that read it.

const RUNTIME_ONLY = 'US/Pacific-New';
const REFUSED = [{ field: 'timezone', issue: 'invalid_value' }];

let t: TestTern;
let alice: TestAccount;

beforeAll(async () => {
  t = await startTern();
  alice = await t.createAccount();
});
afterAll(() => t.stop());

const api = (method: string, path: string, body?: unknown) =>
  t.request(method, path, { token: alice.token, ...(body === undefined ? {} : { body }) });

async function campaign(): Promise<string> {
  const created = await api('POST', '/v1/campaigns', { name: 'Zones' });
  expect(created.status).toBe(201);
  return created.body.campaign;
}

describe('a zone the runtime knows and PostgreSQL does not', () => {
  it('is known to the runtime here, so that the checks below test PostgreSQL’s side', () => {
    expect(() => new Intl.DateTimeFormat('en-US', { timeZone: RUNTIME_ONLY })).not.toThrow();
  });

  it('is refused by PATCH /v1/settings with the usual 422, and a zone both know is taken', async () => {
    const refused = await api('PATCH', '/v1/settings', { timezone: RUNTIME_ONLY });
    expect(refused.status).toBe(422);
    expect(refused.body.error.details).toEqual(REFUSED);
    expect((await api('GET', '/v1/settings')).body.timezone).toBe('UTC');
    const taken = await api('PATCH', '/v1/settings', { timezone: 'America/Los_Angeles' });
    expect(taken.status).toBe(200);
    expect(taken.body.timezone).toBe('America/Los_Angeles');
    expect((await api('POST', '/v1/messages/send', { to: '5511987000001', message: 'Hi' })).status).toBe(202);
  });

  it('is refused for a contact, and for the zone of an account’s limits', async () => {
    const refused = await api('POST', `/v1/campaigns/${await campaign()}/contacts`, {
      phone: '5511987000002',
      timezone: RUNTIME_ONLY,
    });
    expect(refused.status).toBe(422);
    expect(refused.body.error.details).toEqual(REFUSED);
    const limits = t.tern.services.accountQuotas.setLimits(alice.account, { timezone: RUNTIME_ONLY });
    await expect(limits).rejects.toBeInstanceOf(ValidationError);
    await expect(limits).rejects.toMatchObject({ details: REFUSED });
  });

  it('makes an imported row invalid, and the other rows are imported', async () => {
    const id = await campaign();
    const form = new FormData();
    form.append('phone_column', 'phone');
    form.append('timezone_column', 'zone');
    const csv = ['phone,zone', `5511987000003,${RUNTIME_ONLY}`, '5511987000004,America/Sao_Paulo'].join('\n');
    form.append('file', new Blob([csv]), 'zones.csv');
    const uploaded = await fetch(`${t.url}/v1/campaigns/${id}/contacts/import`, {
      method: 'POST',
      headers: { authorization: `Bearer ${alice.token}` },
      body: form,
    });
    const accepted = (await uploaded.json()) as { job: string };
    expect(uploaded.status, JSON.stringify(accepted)).toBe(202);
    const job = accepted.job;
    const finished = await waitFor(async () => {
      const read = await api('GET', `/v1/campaigns/${id}/contacts/import/${job}`);
      return read.body.status === 'processing' ? null : read.body;
    }, 60_000);
    expect(finished).toMatchObject({ status: 'completed', imported: 1, invalid: 1 });
    expect(finished.errors).toEqual([{ row: 2, field: 'timezone', issue: 'invalid_value' }]);
    const contacts = await t.tern.deps.prisma.contact.findMany({ where: { campaignId: id } });
    expect(contacts.map((contact) => contact.timezone)).toEqual(['America/Sao_Paulo']);
  });
});

describe('the repair of stored zones (migration time_zone_repair)', () => {
  const server = process.env.DATABASE_URL || DEFAULT_DATABASE_URL;
  const name = `tern_test_${randomBytes(6).toString('hex')}`;
  const url = withDatabase(server, name);
  let folder = '';

  afterAll(async () => {
    const admin = new pg.Client({ connectionString: withDatabase(server, 'postgres') });
    await admin.connect();
    await admin.query(`DROP DATABASE IF EXISTS ${pg.escapeIdentifier(name)} WITH (FORCE)`);
    await admin.end();
    if (folder) await rm(folder, { recursive: true, force: true });
  });

  it('maps a name PostgreSQL does not know to the zone it stood for, and one it cannot map to UTC', async () => {
    // The migrations before the repair, then rows as the runtime's check let them in.
    folder = await mkdtemp(path.join(os.tmpdir(), 'tern-zones-'));
    await cp(DEFAULT_MIGRATIONS_DIR, folder, { recursive: true });
    const repair = (await readdir(folder)).find((entry) => entry.endsWith('_time_zone_repair'));
    expect(repair).toBeDefined();
    await rm(path.join(folder, repair!), { recursive: true });
    await migrateDatabase(url, { migrationsDir: folder });
    const db = new pg.Client({ connectionString: url });
    await db.connect();
    try {
      await db.query(`INSERT INTO accounts (id, email, password_hash, updated_at)
        VALUES ('acc_a', 'a@example.com', 'x', now()), ('acc_b', 'b@example.com', 'x', now())`);
      await db.query(`INSERT INTO account_settings (account_id, timezone, updated_at)
        VALUES ('acc_a', 'US/Pacific-New', now()), ('acc_b', 'SystemV/Unknown9', now())`);
      await db.query(`INSERT INTO account_quotas (account_id, daily_segments, timezone)
        VALUES ('acc_a', 10, 'us/pacific-new')`);
      await db.query(
        `INSERT INTO campaigns (id, account_id, name, updated_at) VALUES ('cmp_a', 'acc_a', 'c', now())`,
      );
      await db.query(`INSERT INTO contacts (id, account_id, campaign_id, phone, timezone)
        VALUES ('cnt_a', 'acc_a', 'cmp_a', '5511987000005', 'Canada/East-Saskatchewan'),
          ('cnt_b', 'acc_a', 'cmp_a', '5511987000006', 'Europe/Lisbon')`);

      await migrateDatabase(url);
      const zones = await db.query(`
        SELECT 'settings ' || account_id AS row, timezone FROM account_settings
        UNION ALL SELECT 'quota ' || account_id, timezone FROM account_quotas
        UNION ALL SELECT 'contact ' || id, timezone FROM contacts ORDER BY row`);
      expect(zones.rows).toEqual([
        { row: 'contact cnt_a', timezone: 'America/Regina' },
        { row: 'contact cnt_b', timezone: 'Europe/Lisbon' },
        { row: 'quota acc_a', timezone: 'America/Los_Angeles' },
        { row: 'settings acc_a', timezone: 'America/Los_Angeles' },
        { row: 'settings acc_b', timezone: 'UTC' },
      ]);
      // Every one of them is now one PostgreSQL reads.
      await db.query(`SELECT now() AT TIME ZONE timezone FROM account_settings`);
    } finally {
      await db.end();
    }
  }, 120_000);
});
