import type { Logger } from 'pino';
import { Batcher } from '../../batcher.js';
import type { Clock } from '../../clock.js';
import type { Prisma, PrismaClient } from '../../generated/prisma/client.js';
import { newId } from '../../ids.js';
import type { WebhookDeliveryJob, WebhookDeliveryJobs } from '../../jobs/webhook-delivery.job.js';
import type { Metrics } from '../../metrics/metrics.js';
import type { WebhookSecrets } from './webhook-secrets.js';
import type { WebhookSender } from './webhook-sender.js';

/** A delivery gets five attempts in all, the first included. */
const MAX_ATTEMPTS = 5;

/** A delivery to plan: one event to one destination. */
export interface PlannedDelivery {
  /** Fixed for the event and destination, so that planning the same delivery twice plans it once. */
  id: string;
  accountId: string;
  eventId: string;
  webhookId?: string;
  campaignId?: string;
}

interface AttemptRow {
  id: string;
  attempts: number;
  account_id: string;
  event_id: string;
  webhook_id: string | null;
  body: string | null;
  url: string | null;
  secret_sealed: string | null;
}

/** One attempt for the log, and what it means for its pending delivery. */
interface AttemptRecord {
  id: string;
  delivery: string;
  accountId: string;
  eventId: string;
  webhookId: string | null;
  url: string;
  attempt: number;
  statusCode: number | null;
  durationMs: number;
  error: string | null;
  createdAt: Date;
  /** When the next attempt is due; null when the delivery is over. */
  nextAttemptAt: Date | null;
}

// Attempts run WEBHOOK_CONCURRENCY at once; their reads and writes go to PostgreSQL in groups.
const BATCHING = { maxBatch: 200, maxInFlight: 2 };

/**
 * Pending deliveries and their attempts. PostgreSQL holds each delivery's attempt count and
 * when the next attempt is due; BullMQ only carries one job per attempt (`<delivery>-a<n>`),
 * so a job lost with Redis is put back by the recovery sweep and a stale copy of a job does
 * nothing. Every attempt is written to the delivery log.
 */
export class WebhookDeliveries {
  private readonly rows = new Batcher((ids: string[]) => this.load(ids), BATCHING);
  private readonly records = new Batcher((records: AttemptRecord[]) => this.write(records), BATCHING);

  constructor(
    private readonly prisma: PrismaClient,
    private readonly clock: Clock,
    private readonly jobs: WebhookDeliveryJobs,
    private readonly secrets: WebhookSecrets,
    private readonly sender: WebhookSender,
    private readonly logger: Logger,
    private readonly retryBaseMs: number,
    private readonly metrics: Metrics,
  ) {}

  /** Stores the deliveries, inside the caller's transaction; enqueue the jobs it answers once it has committed. */
  async plan(tx: Prisma.TransactionClient, deliveries: PlannedDelivery[]): Promise<WebhookDeliveryJob[]> {
    if (deliveries.length === 0) return [];
    const now = this.clock.now();
    await tx.$executeRaw`
      INSERT INTO pending_webhook_deliveries (id, account_id, event_id, webhook_id, campaign_id, next_attempt_at, created_at)
      SELECT id, account_id, event_id, webhook_id, campaign_id, ${now}, ${now}
      FROM unnest(${deliveries.map((d) => d.id)}::text[], ${deliveries.map((d) => d.accountId)}::text[], ${deliveries.map((d) => d.eventId)}::text[],
        ${deliveries.map((d) => d.webhookId ?? null)}::text[], ${deliveries.map((d) => d.campaignId ?? null)}::text[])
        AS v(id, account_id, event_id, webhook_id, campaign_id)
      ON CONFLICT (id) DO NOTHING`;
    return deliveries.map((delivery) => ({ delivery: delivery.id, attempt: 1 }));
  }

  /**
   * Makes one attempt of a delivery: with the destination's current URL and the account's
   * current secret, a fresh timestamp and the event's stored body. A 2xx ends the delivery; so
   * does a refused destination or the last attempt; otherwise the next attempt is scheduled
   * `WEBHOOK_RETRY_BASE_MS × 2^(n-1)` after the n-th.
   */
  async attempt(job: WebhookDeliveryJob): Promise<void> {
    const row = await this.rows.add(job.delivery);
    // Finished already, or a copy of an attempt that has been made.
    if (!row || row.attempts !== job.attempt - 1) return;
    if (!row.url) {
      // The webhook was deleted, or the campaign lost its URL: nothing is owed to anyone.
      await this.prisma.pendingWebhookDelivery.deleteMany({ where: { id: job.delivery } });
      return;
    }
    if (row.body === null) throw new Error(`event ${row.event_id} has no stored body`);
    const secret = await this.secrets.open(row.account_id, row.secret_sealed);
    const startedAt = this.clock.now();
    const outcome = await this.sender.send(row.url, row.body, secret, startedAt);
    const final = outcome.ok || outcome.refused || job.attempt >= MAX_ATTEMPTS;
    const retryInMs = this.retryBaseMs * 2 ** (job.attempt - 1);
    this.metrics.webhookAttempts.inc({
      outcome: outcome.ok ? 'delivered' : outcome.refused ? 'refused' : final ? 'failed' : 'retrying',
    });
    this.metrics.webhookDuration.observe(outcome.durationMs / 1000);
    await this.records.add({
      id: newId('whd'),
      delivery: job.delivery,
      accountId: row.account_id,
      eventId: row.event_id,
      webhookId: row.webhook_id,
      url: row.url,
      attempt: job.attempt,
      statusCode: outcome.statusCode,
      durationMs: outcome.durationMs,
      error: outcome.error,
      createdAt: startedAt,
      nextAttemptAt: final ? null : new Date(this.clock.now().getTime() + retryInMs),
    });
    if (!final) await this.jobs.enqueue([{ delivery: job.delivery, attempt: job.attempt + 1 }], retryInMs);
    if (!outcome.ok)
      this.logger.info(
        { delivery: job.delivery, attempt: job.attempt, error: outcome.error, final },
        'webhook attempt failed',
      );
  }

  /**
   * Deliveries whose next attempt is overdue by `overdueMs` get their job again: it was never
   * enqueued (Redis was away) or Redis lost it. Job ids make this a no-op when the job is in
   * fact still there, waiting behind others.
   */
  async recoverStalled(overdueMs: number, limit = 1_000): Promise<number> {
    const rows = await this.prisma.pendingWebhookDelivery.findMany({
      where: { nextAttemptAt: { lt: new Date(this.clock.now().getTime() - overdueMs) } },
      orderBy: { nextAttemptAt: 'asc' },
      take: limit,
      select: { id: true, attempts: true },
    });
    await this.jobs.enqueue(rows.map((row) => ({ delivery: row.id, attempt: row.attempts + 1 })));
    return rows.length;
  }

  private async load(ids: string[]): Promise<(AttemptRow | null)[]> {
    const rows = await this.prisma.$queryRaw<AttemptRow[]>`
      SELECT p.id, p.attempts, p.account_id, p.event_id, p.webhook_id, e.body,
        COALESCE(w.url, c.webhook) AS url, a.webhook_secret_sealed AS secret_sealed
      FROM pending_webhook_deliveries p
      JOIN events e ON e.id = p.event_id
      JOIN accounts a ON a.id = p.account_id
      LEFT JOIN webhooks w ON w.id = p.webhook_id AND w.deleted_at IS NULL
      LEFT JOIN campaigns c ON c.id = p.campaign_id AND c.deleted_at IS NULL
      WHERE p.id = ANY(${ids})`;
    const byId = new Map(rows.map((row) => [row.id, row]));
    return ids.map((id) => byId.get(id) ?? null);
  }

  /** Logs attempts and moves their deliveries on (next attempt due, or over) in one statement. */
  private async write(records: AttemptRecord[]): Promise<undefined[]> {
    const column = <T>(pick: (record: AttemptRecord) => T) => records.map(pick);
    await this.prisma.$executeRaw`
      WITH v AS (
        SELECT * FROM unnest(
          ${column((r) => r.id)}::text[], ${column((r) => r.delivery)}::text[], ${column((r) => r.accountId)}::text[],
          ${column((r) => r.eventId)}::text[], ${column((r) => r.webhookId)}::text[], ${column((r) => r.url)}::text[],
          ${column((r) => r.attempt)}::int[], ${column((r) => r.statusCode)}::int[], ${column((r) => r.durationMs)}::int[],
          ${column((r) => r.error)}::text[], ${column((r) => r.createdAt.toISOString())}::timestamptz[],
          ${column((r) => r.nextAttemptAt?.toISOString() ?? null)}::timestamptz[])
        AS v(id, delivery, account_id, event_id, webhook_id, url, attempt, status_code, duration_ms, error, created_at, next_attempt_at)
      ), logged AS (
        INSERT INTO webhook_deliveries (id, account_id, event_id, webhook_id, url, attempt, status_code, duration_ms, error, created_at)
        SELECT id, account_id, event_id, webhook_id, url, attempt, status_code, duration_ms, error, created_at FROM v
      ), over AS (
        DELETE FROM pending_webhook_deliveries p USING v WHERE p.id = v.delivery AND v.next_attempt_at IS NULL
      )
      UPDATE pending_webhook_deliveries p SET attempts = v.attempt, next_attempt_at = v.next_attempt_at
      FROM v WHERE p.id = v.delivery AND v.next_attempt_at IS NOT NULL AND p.attempts = v.attempt - 1`;
    return records.map(() => undefined);
  }
}
