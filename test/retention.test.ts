import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { retentionQueue } from '../src/jobs/retention.job.js';
import { statsSettleQueue } from '../src/jobs/stats-settle.job.js';
import { sql, type TestDatabase } from './support/database.js';
import { REDIS_URL } from './support/server-url.js';
import { startTern, type TestTern } from './support/tern.js';
import { pollUntil } from './support/tern-processes.js';

// RETENTION_DAYS is 30 (the default): rows of 31 days ago are past it, rows of 29 days ago within it.
const OLD = "now() - interval '31 days'";
const RECENT = "now() - interval '29 days'";

const started: TestTern[] = [];
afterEach(async () => {
  // The one that owns the database and Redis prefix goes last.
  for (const tern of started.splice(0).reverse()) await tern.stop();
});

async function start(options: Parameters<typeof startTern>[0] = {}): Promise<TestTern> {
  const tern = await startTern(options);
  started.push(tern);
  return tern;
}

/** Rows of every table the sweep looks at, arranged around the cutoff; what must stay is named `kept…`. */
async function seed(database: TestDatabase, accountId: string): Promise<void> {
  database.leaveOutOfLedger(accountId, 'its messages are inserted by hand, dated before the cutoff');
  const databaseUrl = database.url;
  await sql(
    databaseUrl,
    `INSERT INTO messages (id, account_id, "to", text, status, encoding, segments, created_at)
     VALUES ('msg_old', $1, '5511999990001', 'old message', 'delivered', 'GSM-7', 1, ${OLD})`,
    [accountId],
  );
  const event = (id: string, createdAt: string, dispatchedAt: string | null) =>
    `('${id}', $1, 'message.delivered', '{}', 'msg_old', ${createdAt}, ${dispatchedAt ?? 'NULL'})`;
  await sql(
    databaseUrl,
    `INSERT INTO events (id, account_id, type, payload, message_id, created_at, dispatched_at) VALUES
       ${event('evt_old', OLD, OLD)},
       ${event('evt_old_2', OLD, OLD)},
       ${event('kept_evt_recent', RECENT, RECENT)},
       ${event('kept_evt_undispatched', OLD, null)},
       ${event('kept_evt_pending', OLD, OLD)},
       ${event('kept_evt_replayed', OLD, OLD)}`,
    [accountId],
  );
  const delivery = (id: string, eventId: string, createdAt: string) =>
    `('${id}', $1, '${eventId}', 'https://example.com/hook', 1, 200, 5, ${createdAt})`;
  await sql(
    databaseUrl,
    `INSERT INTO webhook_deliveries (id, account_id, event_id, url, attempt, status_code, duration_ms, created_at) VALUES
       ${delivery('whd_old', 'evt_old', OLD)},
       ${delivery('whd_old_replayed', 'kept_evt_replayed', OLD)},
       ${delivery('kept_whd_replay', 'kept_evt_replayed', RECENT)},
       ${delivery('kept_whd_recent', 'kept_evt_recent', RECENT)}`,
    [accountId],
  );
  await sql(
    databaseUrl,
    `INSERT INTO pending_webhook_deliveries (id, account_id, event_id, attempts, next_attempt_at, created_at)
     VALUES ('kept_pending', $1, 'kept_evt_pending', 1, now(), ${OLD})`,
    [accountId],
  );
  await sql(
    databaseUrl,
    `INSERT INTO smpp_parts (reference, part, parts, concat_ref, carrier, state, created_at) VALUES
       ('msg_old', 1, 2, 7, 'default', 'delivered', ${OLD}), ('msg_old', 2, 2, 7, 'default', 'delivered', ${OLD}),
       ('kept_msg_recent', 1, 1, 8, 'default', 'pending', ${RECENT})`,
  );
  await sql(
    databaseUrl,
    `INSERT INTO smpp_receipts (carrier, smsc_message_id, delivered, received_at, applied_at) VALUES
       ('default', 'applied_old', true, ${OLD}, ${OLD}),
       ('default', 'unmatched_old', true, ${OLD}, NULL),
       ('default', 'kept_unmatched_recent', true, ${RECENT}, NULL),
       ('default', 'kept_applied_recent', true, ${OLD}, ${RECENT})`,
  );
  await sql(
    databaseUrl,
    `INSERT INTO carrier_callback_events (carrier, kind, carrier_message_id, event, received_at, applied_at) VALUES
       ('tw', 'delivered', 'applied_old', '{}', ${OLD}, ${OLD}),
       ('tw', 'delivered', 'unmatched_old', '{}', ${OLD}, NULL),
       ('tw', 'reply', 'kept_unmatched_recent', '{}', ${RECENT}, NULL),
       ('tw', 'failed', 'kept_applied_recent', '{}', ${OLD}, ${RECENT})`,
  );
  await sql(
    databaseUrl,
    `INSERT INTO smpp_inbound_parts (source_addr, destination_addr, concat_ref, parts, part, text, received_at) VALUES
       ('5511999990001', 'Tern', 3, 2, 1, 'half of an old reply', ${OLD}),
       ('kept', 'Tern', 4, 2, 1, 'half of a recent reply', ${RECENT})`,
  );
  await sql(
    databaseUrl,
    `INSERT INTO simulated_submissions (reference, carrier, carrier_message_id, "to", text, submitted_at, report_at, reported_at) VALUES
       ('reported_old', 'default', 'sim_1', '5511999990001', 'x', ${OLD}, ${OLD}, ${OLD}),
       ('kept_unreported_old', 'default', 'sim_2', '5511999990001', 'x', ${OLD}, ${OLD}, NULL),
       ('kept_reported_recent', 'default', 'sim_3', '5511999990001', 'x', ${RECENT}, ${RECENT}, ${RECENT})`,
  );
  await sql(
    databaseUrl,
    `INSERT INTO idempotency_keys (account_id, key, request_hash, message_id, created_at) VALUES
       ($1, 'order-old', 'h', 'msg_old', ${OLD}), ($1, 'order-old-2', 'h', 'msg_old', ${OLD}),
       ($1, 'kept_order_recent', 'h', 'msg_old', ${RECENT})`,
    [accountId],
  );
  // A pool sender mapping lapses 30 days after its last use, whatever RETENTION_DAYS is.
  await sql(
    databaseUrl,
    `INSERT INTO recipient_senders (account_id, recipient, sender, last_used_at) VALUES
       ($1, 'lapsed', 'ACME', now() - interval '31 days'), ($1, 'kept_29_days', 'ACME', now() - interval '29 days')`,
    [accountId],
  );
}

async function remaining(databaseUrl: string): Promise<Record<string, string[]>> {
  const keys: Record<string, string> = {
    messages: 'id',
    events: 'id',
    webhook_deliveries: 'id',
    pending_webhook_deliveries: 'id',
    smpp_parts: "reference || '#' || part",
    smpp_receipts: 'smsc_message_id',
    carrier_callback_events: 'carrier_message_id',
    smpp_inbound_parts: 'source_addr',
    simulated_submissions: 'reference',
    idempotency_keys: 'key',
    recipient_senders: 'recipient',
  };
  const result: Record<string, string[]> = {};
  for (const [table, key] of Object.entries(keys)) {
    const { rows } = await sql(databaseUrl, `SELECT ${key} AS key FROM ${table} ORDER BY 1`);
    result[table] = rows.map((row: { key: string }) => row.key);
  }
  return result;
}

const AFTER_SWEEP = {
  messages: ['msg_old'],
  events: ['kept_evt_pending', 'kept_evt_recent', 'kept_evt_replayed', 'kept_evt_undispatched'],
  webhook_deliveries: ['kept_whd_recent', 'kept_whd_replay'],
  pending_webhook_deliveries: ['kept_pending'],
  smpp_parts: ['kept_msg_recent#1'],
  smpp_receipts: ['kept_applied_recent', 'kept_unmatched_recent'],
  carrier_callback_events: ['kept_applied_recent', 'kept_unmatched_recent'],
  smpp_inbound_parts: ['kept'],
  simulated_submissions: ['kept_reported_recent', 'kept_unreported_old'],
  idempotency_keys: ['kept_order_recent'],
  recipient_senders: ['kept_29_days'],
};

describe('retention', () => {
  it('deletes exactly the rows older than RETENTION_DAYS, in batches, and counts them per table', async () => {
    // The API role runs no workers, so no scheduled sweep runs beside this one.
    const tern = await start({ role: 'api' });
    const account = await tern.createAccount();
    await seed(tern.database, account.account);

    // Batches of 1 row: every table needs several statements, and the loop must go on until one finds nothing.
    const report = await tern.tern.services.retentionSweep.sweep(() => false, 1);
    expect(report).toEqual({
      webhook_deliveries: 2,
      events: 2,
      smpp_parts: 2,
      smpp_receipts: 2,
      carrier_callback_events: 2,
      smpp_inbound_parts: 1,
      simulated_submissions: 1,
      idempotency_keys: 2,
      recipient_senders: 1,
    });
    expect(await remaining(tern.database.url)).toEqual(AFTER_SWEEP);

    const deleted = await tern.tern.deps.metrics.retentionDeleted.get();
    expect(Object.fromEntries(deleted.values.map((value) => [value.labels.table, value.value]))).toEqual(
      report,
    );

    // A second sweep finds nothing more.
    expect(Object.values(await tern.tern.services.retentionSweep.sweep()).every((count) => count === 0)).toBe(
      true,
    );
    expect(await remaining(tern.database.url)).toEqual(AFTER_SWEEP);
  });

  it('keeps everything with RETENTION_DAYS=0', async () => {
    const tern = await start({ role: 'api', env: { RETENTION_DAYS: '0' } });
    const account = await tern.createAccount();
    await seed(tern.database, account.account);
    const before = await remaining(tern.database.url);
    expect(await tern.tern.services.retentionSweep.sweep()).toEqual({});
    expect(await remaining(tern.database.url)).toEqual(before);
  });

  it('runs in the background: a worker process schedules the sweep (and the statistics settle) once, and it runs as the worker starts', async () => {
    const api = await start({ role: 'api' });
    const account = await api.createAccount();
    await seed(api.database, account.account);

    // Two worker processes on the same database and Redis prefix: one schedule between them.
    await start({ role: 'worker', sharing: api });
    await start({ role: 'worker', sharing: api });
    await pollUntil(
      'the scheduled sweep',
      async () => {
        const now = await remaining(api.database.url);
        return JSON.stringify(now) === JSON.stringify(AFTER_SWEEP) ? now : undefined;
      },
      { timeoutMs: 20_000, describe: async () => JSON.stringify(await remaining(api.database.url)) },
    );

    const connection = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
    const queues = [retentionQueue, statsSettleQueue].map(
      ({ name }) => new Queue(name, { connection, prefix: api.redisPrefix }),
    );
    try {
      const schedulers = await Promise.all(queues.map((queue) => queue.getJobSchedulers()));
      expect(schedulers.flat().map((scheduler) => [scheduler.key, scheduler.every])).toEqual([
        ['retention-sweep', 3_600_000],
        ['stats-settle', 900_000],
      ]);
    } finally {
      await Promise.all(queues.map((queue) => queue.close()));
      connection.disconnect();
    }
  });
});
