import type { Logger } from 'pino';
import type { PrismaClient } from '../../generated/prisma/client.js';
import type { Clock } from '../../lib/clock.js';
import type { Metrics } from '../../metrics/metrics.js';
import { STICKY_SENDER_MS } from '../senders/sender-choice.js';

const DAY_MS = 24 * 60 * 60 * 1000;

/** Rows one statement deletes at most: short transactions, short locks, small WAL bursts. */
export const RETENTION_BATCH = 1_000;

/** `cutoff` is RETENTION_DAYS ago; `now` for the rows that lapse by a rule of their own. */
type Delete = (cutoff: Date, batch: number, now: Date) => Promise<number>;

/**
 * What the retention sweep deletes once it is older than RETENTION_DAYS, in the order it goes:
 * the delivery log before the events (so that each table's count is its own rows, not a
 * cascade's), then the carriers' working rows. Messages and replies are never deleted.
 */
function retentionTables(prisma: PrismaClient): [table: string, remove: Delete][] {
  return [...deliveryLogTables(prisma), ...carrierWorkingTables(prisma), ...senderTables(prisma)];
}

function senderTables(prisma: PrismaClient): [table: string, remove: Delete][] {
  return [
    [
      // A recipient keeps its pool sender 30 days from its last use, whatever RETENTION_DAYS says.
      'recipient_senders',
      (_cutoff, batch, now) => prisma.$executeRaw`
        DELETE FROM recipient_senders WHERE (account_id, recipient) IN (
          SELECT account_id, recipient FROM recipient_senders
          WHERE last_used_at < ${new Date(now.getTime() - STICKY_SENDER_MS)} LIMIT ${batch} FOR UPDATE SKIP LOCKED)`,
    ],
  ];
}

function deliveryLogTables(prisma: PrismaClient): [table: string, remove: Delete][] {
  return [
    [
      'webhook_deliveries',
      (cutoff, batch) => prisma.$executeRaw`
        DELETE FROM webhook_deliveries WHERE id IN (
          SELECT id FROM webhook_deliveries WHERE created_at < ${cutoff} LIMIT ${batch} FOR UPDATE SKIP LOCKED)`,
    ],
    [
      // Only events the dispatcher has handled, with no delivery still pending and none logged
      // inside the window (a replay of one old event by its id): the log keeps every attempt of
      // the window, and a pending delivery never loses its event.
      'events',
      (cutoff, batch) => prisma.$executeRaw`
        DELETE FROM events WHERE id IN (
          SELECT e.id FROM events e
          WHERE e.dispatched_at < ${cutoff} AND e.created_at < ${cutoff}
            AND NOT EXISTS (SELECT 1 FROM pending_webhook_deliveries p WHERE p.event_id = e.id)
            AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = e.id AND d.created_at >= ${cutoff})
          LIMIT ${batch} FOR UPDATE SKIP LOCKED)`,
    ],
  ];
}

/** The carriers' working rows, and the keys that answer replays. */
function carrierWorkingTables(prisma: PrismaClient): [table: string, remove: Delete][] {
  return [
    [
      'smpp_parts',
      (cutoff, batch) => prisma.$executeRaw`
        DELETE FROM smpp_parts WHERE (reference, part) IN (
          SELECT reference, part FROM smpp_parts WHERE created_at < ${cutoff} LIMIT ${batch} FOR UPDATE SKIP LOCKED)`,
    ],
    [
      // A receipt applied before the cutoff, or never applied (its SMSC id matched no part) and
      // received before it: both ends of the (applied_at, received_at) index.
      'smpp_receipts',
      (cutoff, batch) => prisma.$executeRaw`
        DELETE FROM smpp_receipts WHERE (carrier, smsc_message_id) IN (
          SELECT carrier, smsc_message_id FROM smpp_receipts
          WHERE applied_at < ${cutoff} OR (applied_at IS NULL AND received_at < ${cutoff})
          LIMIT ${batch} FOR UPDATE SKIP LOCKED)`,
    ],
    [
      // An HTTP provider's report or reply applied before the cutoff, or never applied (it named
      // no message Tern knows) and received before it.
      'carrier_callback_events',
      (cutoff, batch) => prisma.$executeRaw`
        DELETE FROM carrier_callback_events WHERE (carrier, kind, carrier_message_id) IN (
          SELECT carrier, kind, carrier_message_id FROM carrier_callback_events
          WHERE applied_at < ${cutoff} OR (applied_at IS NULL AND received_at < ${cutoff})
          LIMIT ${batch} FOR UPDATE SKIP LOCKED)`,
    ],
    [
      // Parts of replies whose other parts never came. The table only holds replies in transit.
      'smpp_inbound_parts',
      (cutoff, batch) => prisma.$executeRaw`
        DELETE FROM smpp_inbound_parts WHERE (source_addr, destination_addr, concat_ref, parts, part) IN (
          SELECT source_addr, destination_addr, concat_ref, parts, part FROM smpp_inbound_parts
          WHERE received_at < ${cutoff} LIMIT ${batch} FOR UPDATE SKIP LOCKED)`,
    ],
    [
      // The simulator's network: submissions it has reported on.
      'simulated_submissions',
      (cutoff, batch) => prisma.$executeRaw`
        DELETE FROM simulated_submissions WHERE reference IN (
          SELECT reference FROM simulated_submissions
          WHERE report_at < ${cutoff} AND reported_at IS NOT NULL LIMIT ${batch} FOR UPDATE SKIP LOCKED)`,
    ],
    [
      // A key answers replays for 24 hours; past the cutoff (at least 7 days) it answers nothing.
      'idempotency_keys',
      (cutoff, batch) => prisma.$executeRaw`
        DELETE FROM idempotency_keys WHERE (account_id, key) IN (
          SELECT account_id, key FROM idempotency_keys WHERE created_at < ${cutoff} LIMIT ${batch} FOR UPDATE SKIP LOCKED)`,
    ],
  ];
}

export type RetentionReport = Record<string, number>;

export interface RetentionSweepOptions {
  prisma: PrismaClient;
  clock: Clock;
  metrics: Metrics;
  logger: Logger;
  retentionDays: number;
}

/**
 * Deletes what has outlived RETENTION_DAYS, table by table, RETENTION_BATCH rows per statement,
 * until a statement finds fewer. Rows another transaction holds are skipped (the next sweep gets
 * them), so a sweep never waits on the traffic it cleans up after.
 */
export class RetentionSweep {
  private readonly prisma: PrismaClient;
  private readonly clock: Clock;
  private readonly metrics: Metrics;
  private readonly logger: Logger;
  private readonly retentionDays: number;

  constructor(options: RetentionSweepOptions) {
    ({
      prisma: this.prisma,
      clock: this.clock,
      metrics: this.metrics,
      logger: this.logger,
      retentionDays: this.retentionDays,
    } = options);
  }

  get enabled(): boolean {
    return this.retentionDays > 0;
  }

  /** One sweep; `cancelled` is asked between statements, so that a shutdown does not wait for a long one. */
  async sweep(cancelled: () => boolean = () => false, batch = RETENTION_BATCH): Promise<RetentionReport> {
    const report: RetentionReport = {};
    if (!this.enabled) return report;
    const now = this.clock.now();
    const cutoff = new Date(now.getTime() - this.retentionDays * DAY_MS);
    for (const [table, remove] of retentionTables(this.prisma)) {
      report[table] = 0;
      for (;;) {
        if (cancelled()) return report;
        const deleted = await remove(cutoff, batch, now);
        report[table] += deleted;
        this.metrics.retentionDeleted.inc({ table }, deleted);
        if (deleted < batch) break;
      }
    }
    const total = Object.values(report).reduce((sum, count) => sum + count, 0);
    if (total > 0) this.logger.info({ cutoff, deleted: report }, 'retention sweep deleted old rows');
    return report;
  }
}
