import { afterAll, beforeAll, expect, it } from 'vitest';
import { sql } from './support/database.js';
import { checkLedger } from './support/ledger.js';
import { startTern, type TestAccount, type TestTern } from './support/tern.js';
import { waitFor } from './support/wait.js';

// The ledger check (support/ledger.ts) runs when every test database is dropped; these hold it to
// finding a rollup or a quota count that no longer equals a count of the messages.

let t: TestTern;
let alice: TestAccount;

beforeAll(async () => {
  t = await startTern({ env: { SIMULATOR_DELAY_MS: '20' } });
  alice = await t.createAccount();
});
afterAll(() => t.stop());

const query = (text: string) => sql(t.database.directUrl, text);

it('passes on a database without messages', async () => {
  await expect(checkLedger(t.database.directUrl)).resolves.toBeUndefined();
});

it('passes on messages the statements kept, and throws at a rollup or quota count changed by hand', async () => {
  const sent = await Promise.all(
    ['447700010001', '351910010002', '351912345003'].map((to) =>
      t.request('POST', '/v1/messages/send', { token: alice.token, body: { to, message: 'Counted' } }),
    ),
  );
  expect(sent.map((response) => response.status)).toEqual([202, 202, 202]);
  await waitFor(async () => {
    const { rows } = await query(
      `SELECT count(*)::int AS n FROM messages WHERE status IN ('queued', 'sent')`,
    );
    return rows[0].n === 0 ? true : null;
  }, 30_000);
  await expect(checkLedger(t.database.directUrl)).resolves.toBeUndefined();

  const corruptions: [string, string, string][] = [
    [
      'message_stats',
      `UPDATE message_stats SET queued = queued + 1`,
      `UPDATE message_stats SET queued = queued - 1`,
    ],
    [
      'message_stat_totals',
      `UPDATE message_stat_totals SET segments = segments + 2`,
      `UPDATE message_stat_totals SET segments = segments - 2`,
    ],
    [
      'settled_message_stat_splits \\(country\\)',
      `INSERT INTO settled_message_stat_splits (account_id, dimension, bucket, value, messages)
        SELECT id, 'country', '2026-01-01T00:00:00Z', 'ZZ', 1 FROM accounts LIMIT 1`,
      `DELETE FROM settled_message_stat_splits WHERE value = 'ZZ'`,
    ],
    [
      'delivery_time_stats',
      `UPDATE delivery_time_stats SET messages = messages + 1`,
      `UPDATE delivery_time_stats SET messages = messages - 1`,
    ],
    [
      'account_quotas',
      `UPDATE account_quotas SET day_segments = day_segments + 1`,
      `UPDATE account_quotas SET day_segments = day_segments - 1`,
    ],
  ];
  for (const [ledger, corrupt, restore] of corruptions) {
    await query(corrupt);
    await expect(checkLedger(t.database.directUrl)).rejects.toThrow(
      new RegExp(`^The ledger does not balance[^]*${ledger}`),
    );
    await query(restore);
  }
  await expect(checkLedger(t.database.directUrl)).resolves.toBeUndefined();
}, 60_000);
