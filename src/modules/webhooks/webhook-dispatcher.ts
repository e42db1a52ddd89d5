import type { Logger } from 'pino';
import type { PrismaClient } from '../../generated/prisma/client.js';
import { PollingLoop } from '../../jobs/polling-loop.js';
import type { WebhookDeliveryJobs } from '../../jobs/webhook-delivery.job.js';
import type { Clock } from '../../lib/clock.js';
import type { PlannedDelivery, StoredEvent, WebhookDeliveries } from './webhook-deliveries.js';
import { goesToCampaignUrl, isSubscribable } from './webhook-events.js';

interface UndispatchedEvent extends StoredEvent {
  account_id: string;
  campaign_id: string | null;
}

/**
 * Where an event goes: each registered webhook of the account subscribed to its kind, and the
 * campaign's own URL for the events of a campaign that has one.
 */
function destinationsOf(
  event: UndispatchedEvent,
  webhooks: readonly { id: string; events: string[] }[],
  campaignsWithUrl: ReadonlySet<string>,
): PlannedDelivery[] {
  const destinations: PlannedDelivery[] = [];
  const common = { accountId: event.account_id, eventId: event.id };
  if (isSubscribable(event.type)) {
    for (const webhook of webhooks) {
      if (webhook.events.includes(event.type))
        destinations.push({ ...common, id: `${event.id}-${webhook.id}`, webhookId: webhook.id });
    }
  }
  if (event.campaign_id && campaignsWithUrl.has(event.campaign_id) && goesToCampaignUrl(event.type)) {
    destinations.push({ ...common, id: `${event.id}-${event.campaign_id}`, campaignId: event.campaign_id });
  }
  return destinations;
}

const BATCH = 500;

export interface WebhookDispatcherOptions {
  prisma: PrismaClient;
  clock: Clock;
  deliveries: WebhookDeliveries;
  deliveryJobs: WebhookDeliveryJobs;
  logger: Logger;
  pollMs: number;
}

/**
 * Turns event rows, written in the same transactions as the changes they tell of, into
 * deliveries: one per registered webhook of the account subscribed to the kind, and one to
 * the campaign's own URL for the events of a campaign that has one. A loop in every worker
 * process; racing loops take disjoint batches (FOR UPDATE SKIP LOCKED). The events are marked
 * dispatched, their bodies stored and their deliveries planned in one transaction, and only
 * then enqueued: a crash before the commit leaves the batch for the next loop, one after it
 * leaves planned deliveries that the recovery sweep enqueues.
 */
export class WebhookDispatcher {
  private readonly loop: PollingLoop;
  private readonly prisma: PrismaClient;
  private readonly clock: Clock;
  private readonly deliveries: WebhookDeliveries;
  private readonly deliveryJobs: WebhookDeliveryJobs;

  constructor(options: WebhookDispatcherOptions) {
    ({
      prisma: this.prisma,
      clock: this.clock,
      deliveries: this.deliveries,
      deliveryJobs: this.deliveryJobs,
    } = options);
    const { logger, pollMs } = options;
    this.loop = new PollingLoop({
      step: () => this.dispatchBatch(),
      batch: BATCH,
      pollMs,
      logger,
      failure: 'webhook dispatcher could not take events; trying again',
    });
  }

  start(): void {
    this.loop.start();
  }

  stop(): Promise<void> {
    return this.loop.stop();
  }

  /** Dispatches one batch; answers how many events it took. */
  async dispatchBatch(): Promise<number> {
    // Most polls find nothing; that costs one index probe, not a transaction.
    const [waiting] = await this.prisma.$queryRaw<
      unknown[]
    >`SELECT 1 FROM events WHERE dispatched_at IS NULL LIMIT 1`;
    if (!waiting) return 0;
    const now = this.clock.now();
    const { taken, jobs } = await this.prisma.$transaction(async (tx) => {
      const events = await tx.$queryRaw<UndispatchedEvent[]>`
        SELECT id, account_id, type, payload, campaign_id, created_at, body
        FROM events WHERE dispatched_at IS NULL
        ORDER BY created_at
        LIMIT ${BATCH}
        FOR UPDATE SKIP LOCKED`;
      if (events.length === 0) return { taken: 0, jobs: [] };
      const accountIds = [
        ...new Set(events.filter((event) => isSubscribable(event.type)).map((event) => event.account_id)),
      ];
      const campaignIds = [
        ...new Set(
          events
            .filter((event) => event.campaign_id && goesToCampaignUrl(event.type))
            .map((event) => event.campaign_id!),
        ),
      ];
      const webhooks = accountIds.length
        ? await tx.webhook.findMany({
            where: { accountId: { in: accountIds }, deletedAt: null },
            select: { id: true, accountId: true, events: true },
          })
        : [];
      const campaigns = campaignIds.length
        ? await tx.campaign.findMany({
            where: { id: { in: campaignIds }, deletedAt: null, webhook: { not: null } },
            select: { id: true },
          })
        : [];
      const withUrl = new Set(campaigns.map((campaign) => campaign.id));
      const webhooksOf = new Map<string, typeof webhooks>();
      for (const webhook of webhooks)
        webhooksOf.set(webhook.accountId, [...(webhooksOf.get(webhook.accountId) ?? []), webhook]);
      const items = events.map((event) => ({
        event,
        deliveries: destinationsOf(event, webhooksOf.get(event.account_id) ?? [], withUrl),
      }));
      return { taken: events.length, jobs: await this.deliveries.planEvents(tx, items, now) };
    });
    await this.deliveryJobs.enqueue(jobs);
    return taken;
  }
}
