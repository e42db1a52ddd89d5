import type { Logger } from 'pino';
import type { Prisma, PrismaClient } from '../../generated/prisma/client.js';
import type { WebhookDeliveryJob, WebhookDeliveryJobs } from '../../jobs/webhook-delivery.job.js';
import { Batcher } from '../../lib/batcher.js';
import type { Clock } from '../../lib/clock.js';
import { newId } from '../../lib/ids.js';
import type { Metrics } from '../../metrics/metrics.js';
import {
  type AttemptRecord,
  type AttemptRow,
  type Claim,
  claimAttempts,
  writeAttempts,
} from './delivery-attempts.js';
import { eventBody } from './webhook-events.js';
import type { WebhookSecrets } from './webhook-secrets.js';
import type { WebhookSender } from './webhook-sender.js';

/** A delivery gets five attempts in all, the first included. */
const MAX_ATTEMPTS = 5;

/** Deliveries to one destination attempted by one job. */
export const DELIVERIES_PER_JOB = 8;

/** A delivery to plan: one event to one destination. */
export interface PlannedDelivery {
  /** Fixed for the event and destination, so that planning the same delivery twice plans it once. */
  id: string;
  accountId: string;
  eventId: string;
  webhookId?: string;
  campaignId?: string;
}

/** An event row as planning reads it: its body is fixed the first time it goes anywhere. */
export interface StoredEvent {
  id: string;
  type: string;
  payload: unknown;
  created_at: Date;
  body: string | null;
}

/** An event and where it is to go (perhaps nowhere). */
export interface EventDeliveries {
  event: StoredEvent;
  deliveries: PlannedDelivery[];
}

// Attempts run WEBHOOK_CONCURRENCY at once; their reads and writes go to PostgreSQL in groups.
const BATCHING = { maxBatch: 200, maxInFlight: 2 };

/** A delivery whose next attempt is to be made. */
interface DueAttempt {
  delivery: string;
  /** The webhook or the campaign called. */
  destination: string;
  attempt: number;
}

/** The jobs that make these attempts: a job per destination and attempt number, of a few deliveries each. */
function jobsFor(due: readonly DueAttempt[]): WebhookDeliveryJob[] {
  const groups = new Map<string, DueAttempt[]>();
  for (const item of due) {
    const key = `${item.attempt}:${item.destination}`;
    const group = groups.get(key);
    if (group) group.push(item);
    else groups.set(key, [item]);
  }
  return [...groups.values()].flatMap((group) => {
    const jobs: WebhookDeliveryJob[] = [];
    for (let start = 0; start < group.length; start += DELIVERIES_PER_JOB) {
      const deliveries = group.slice(start, start + DELIVERIES_PER_JOB).map((item) => item.delivery);
      jobs.push({ deliveries, attempt: group[0]!.attempt });
    }
    return jobs;
  });
}

export interface WebhookDeliveriesOptions {
  prisma: PrismaClient;
  clock: Clock;
  jobs: WebhookDeliveryJobs;
  secrets: WebhookSecrets;
  sender: WebhookSender;
  logger: Logger;
  retryBaseMs: number;
  timeoutMs: number;
  metrics: Metrics;
}

/**
 * Pending deliveries and their attempts. PostgreSQL holds each delivery's attempt count and
 * when the next attempt is due, and an attempt is claimed there before it is made; BullMQ only
 * carries jobs that name the attempts to make, so a job lost with Redis is put back by the
 * recovery sweep and a stale copy of a job does nothing. Every attempt is written to the
 * delivery log.
 */
export class WebhookDeliveries {
  private readonly claims = new Batcher(
    (claims: Claim[]) => claimAttempts(this.prisma, claims, this.clock.now().getTime(), this.timeoutMs),
    BATCHING,
  );
  private readonly records = new Batcher(
    (records: AttemptRecord[]) => writeAttempts(this.prisma, records),
    BATCHING,
  );
  private readonly prisma: PrismaClient;
  private readonly clock: Clock;
  private readonly jobs: WebhookDeliveryJobs;
  private readonly secrets: WebhookSecrets;
  private readonly sender: WebhookSender;
  private readonly logger: Logger;
  private readonly retryBaseMs: number;
  private readonly timeoutMs: number;
  private readonly metrics: Metrics;

  constructor(options: WebhookDeliveriesOptions) {
    ({
      prisma: this.prisma,
      clock: this.clock,
      jobs: this.jobs,
      secrets: this.secrets,
      sender: this.sender,
      logger: this.logger,
      retryBaseMs: this.retryBaseMs,
      timeoutMs: this.timeoutMs,
      metrics: this.metrics,
    } = options);
  }

  /**
   * The one writer of planned deliveries, for the dispatcher and replays alike, inside the
   * caller's transaction: each event that goes somewhere gets its body fixed (kept from then
   * on, so that every delivery and replay sends the same bytes), `dispatchedAt` marks every
   * event given as dispatched, and the deliveries are stored. Enqueue the jobs it answers once
   * the transaction has committed.
   */
  async planEvents(
    tx: Prisma.TransactionClient,
    items: readonly EventDeliveries[],
    dispatchedAt: Date | null = null,
  ): Promise<WebhookDeliveryJob[]> {
    // An event that goes nowhere needs no body yet; should it ever be replayed, the replay fixes it.
    const updates = items
      .map(({ event, deliveries }) => ({
        id: event.id,
        body:
          event.body ?? (deliveries.length > 0 ? eventBody({ ...event, createdAt: event.created_at }) : null),
        changed: dispatchedAt !== null || (event.body === null && deliveries.length > 0),
      }))
      .filter((update) => update.changed);
    if (updates.length > 0) {
      await tx.$executeRaw`
        UPDATE events e SET dispatched_at = COALESCE(${dispatchedAt}::timestamptz, e.dispatched_at),
          body = COALESCE(e.body, v.body)
        FROM unnest(${updates.map((update) => update.id)}::text[], ${updates.map((update) => update.body)}::text[]) AS v(id, body)
        WHERE e.id = v.id`;
    }
    return this.plan(
      tx,
      items.flatMap((item) => item.deliveries),
    );
  }

  private async plan(
    tx: Prisma.TransactionClient,
    deliveries: PlannedDelivery[],
  ): Promise<WebhookDeliveryJob[]> {
    if (deliveries.length === 0) return [];
    const now = this.clock.now();
    await tx.$executeRaw`
      INSERT INTO pending_webhook_deliveries (id, account_id, event_id, webhook_id, campaign_id, next_attempt_at, created_at)
      SELECT id, account_id, event_id, webhook_id, campaign_id, ${now}, ${now}
      FROM unnest(${deliveries.map((d) => d.id)}::text[], ${deliveries.map((d) => d.accountId)}::text[], ${deliveries.map((d) => d.eventId)}::text[],
        ${deliveries.map((d) => d.webhookId ?? null)}::text[], ${deliveries.map((d) => d.campaignId ?? null)}::text[])
        AS v(id, account_id, event_id, webhook_id, campaign_id)
      ON CONFLICT (id) DO NOTHING`;
    return jobsFor(
      deliveries.map((d) => ({ delivery: d.id, destination: d.webhookId ?? d.campaignId ?? '', attempt: 1 })),
    );
  }

  /**
   * Makes the job's attempts, side by side, and schedules the next attempt of those that failed
   * and may be retried as one job. Each attempt is claimed first (its delivery still owes that
   * attempt and is due), so two copies of a job, or a job and a recovered one, make it once.
   */
  async attempt(job: WebhookDeliveryJob): Promise<void> {
    const outcomes = await Promise.allSettled(
      job.deliveries.map(async (delivery) => {
        const row = await this.claims.add({ delivery, attempt: job.attempt });
        return row ? this.attemptOne(row, job.attempt) : { retry: false };
      }),
    );
    const retries = job.deliveries.filter((_, index) => {
      const outcome = outcomes[index]!;
      return outcome.status === 'fulfilled' && outcome.value.retry;
    });
    if (retries.length > 0)
      await this.jobs.enqueue(
        [{ deliveries: retries, attempt: job.attempt + 1 }],
        this.retryDelayMs(job.attempt),
      );
    const failure = outcomes.find((outcome) => outcome.status === 'rejected');
    // The failed attempt keeps its claim; the recovery sweep makes it again once the claim is over.
    if (failure) throw failure.reason;
  }

  /**
   * Makes one claimed attempt of a delivery: with the destination's current URL and the
   * account's current secret, a fresh timestamp and the event's stored body. A 2xx ends the
   * delivery; so does a refused destination or the last attempt; otherwise the next attempt is
   * due `WEBHOOK_RETRY_BASE_MS × 2^(n-1)` after the n-th.
   */
  private async attemptOne(row: AttemptRow, attempt: number): Promise<{ retry: boolean }> {
    if (!row.url) {
      // The webhook was deleted, or the campaign lost its URL: nothing is owed to anyone.
      await this.prisma.pendingWebhookDelivery.deleteMany({ where: { id: row.id } });
      return { retry: false };
    }
    if (row.body === null) throw new Error(`event ${row.event_id} has no stored body`);
    const secret = await this.secrets.open(row.account_id, row.secret_sealed);
    const startedAt = this.clock.now();
    const outcome = await this.sender.send(row.url, row.body, secret, startedAt);
    const final = outcome.ok || outcome.refused || attempt >= MAX_ATTEMPTS;
    this.metrics.webhookAttempts.inc({
      outcome: outcome.ok ? 'delivered' : outcome.refused ? 'refused' : final ? 'failed' : 'retrying',
    });
    this.metrics.webhookDuration.observe(outcome.durationMs / 1000);
    await this.records.add({
      id: newId('whd'),
      delivery: row.id,
      accountId: row.account_id,
      eventId: row.event_id,
      webhookId: row.webhook_id,
      url: row.url,
      attempt,
      statusCode: outcome.statusCode,
      durationMs: outcome.durationMs,
      error: outcome.error,
      createdAt: startedAt,
      nextAttemptAt: final ? null : new Date(this.clock.now().getTime() + this.retryDelayMs(attempt)),
    });
    if (!outcome.ok)
      this.logger.info({ delivery: row.id, attempt, error: outcome.error, final }, 'webhook attempt failed');
    return { retry: !final };
  }

  private retryDelayMs(attempt: number): number {
    return this.retryBaseMs * 2 ** (attempt - 1);
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
      select: { id: true, attempts: true, webhookId: true, campaignId: true },
    });
    await this.jobs.enqueue(
      jobsFor(
        rows.map((row) => ({
          delivery: row.id,
          destination: row.webhookId ?? row.campaignId ?? '',
          attempt: row.attempts + 1,
        })),
      ),
    );
    return rows.length;
  }
}
