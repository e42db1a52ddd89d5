import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { allIds, inPageOrder, pageIdsPerParent } from '../../db/pages-per-parent.js';
import { NotFoundError, ValidationError } from '../../errors.js';
import { Prisma, type PrismaClient } from '../../generated/prisma/client.js';
import type { WebhookDeliveryJobs } from '../../jobs/webhook-delivery.job.js';
import type { Clock } from '../../lib/clock.js';
import { newId } from '../../lib/ids.js';
import { newestFirst, type PageArgs, type PageRequest, parsePage } from '../../lib/pagination.js';
import { parseInput } from '../../lib/validation.js';
import type { StoredEvent, WebhookDeliveries } from './webhook-deliveries.js';
import { pingBody, SUBSCRIBABLE_EVENTS } from './webhook-events.js';
import type { WebhookSecrets } from './webhook-secrets.js';
import type { WebhookSender } from './webhook-sender.js';
import { webhookUrl } from './webhook-url.js';

/** How far back a replay may reach. */
const REPLAY_WINDOW_MS = 7 * 24 * 60 * 60 * 1000;
const REPLAY_CHUNK = 1_000;

const eventKinds = z
  .array(z.enum(SUBSCRIBABLE_EVENTS))
  .min(1)
  .meta({ description: 'The kinds of event it receives' })
  .transform((kinds) => [...new Set(kinds)]);

export const replayInput = z
  .object({
    since: z.iso
      .datetime({ offset: true })
      .meta({ description: 'ISO 8601 time, at most 7 days back: every subscribed event since then' })
      .transform((value) => new Date(value))
      .nullish(),
    event: z.string().min(1).max(64).meta({ description: 'One event of the account' }).nullish(),
  })
  // Exactly one of the two: a time to replay from, or one event.
  .meta({
    description: 'Exactly one of `since` (within the last 7 days) and `event`',
    oneOf: [
      { required: ['since'], properties: { since: { type: 'string' } } },
      { required: ['event'], properties: { event: { type: 'string' } } },
    ],
  });

/** The register and update bodies of a webhook. */
export function webhookInputs(allowInsecure: boolean) {
  const url = webhookUrl(allowInsecure);
  return {
    register: z
      .object({
        url: url.meta({
          description:
            'An https URL (http only with WEBHOOK_ALLOW_INSECURE); it must answer a signed webhook.ping with a 2xx',
        }),
        events: eventKinds,
      })
      .meta({ description: 'A new webhook' }),
    update: z
      .strictObject({
        url: url.meta({ description: 'A new URL, pinged as at registration' }).optional(),
        events: eventKinds.optional(),
      })
      .meta({ description: "A webhook's new URL or kinds; a field left out keeps its value" }),
  };
}

type WebhookQuery = Pick<Prisma.WebhookFindFirstArgs, 'select' | 'include'>;
type DeliveryQuery = Pick<Prisma.WebhookDeliveryFindFirstArgs, 'select' | 'include'>;

export type RegisteredWebhook = Prisma.WebhookGetPayload<object> & { secret: string };

export interface DeletedWebhook {
  id: string;
  deleted: true;
}

export interface ReplayOutcome {
  webhookId: string;
  /** Events queued for delivery again. */
  events: number;
}

export interface WebhooksOptions {
  prisma: PrismaClient;
  clock: Clock;
  secrets: WebhookSecrets;
  sender: WebhookSender;
  deliveries: WebhookDeliveries;
  deliveryJobs: WebhookDeliveryJobs;
  allowInsecure: boolean;
}

/**
 * Webhook registrations of an account: each is checked with a signed `webhook.ping` before it
 * is stored; the account's one signing secret signs the ping and every callback.
 */
export class Webhooks {
  private readonly registerInput;
  private readonly updateInput;
  private readonly prisma: PrismaClient;
  private readonly clock: Clock;
  private readonly secrets: WebhookSecrets;
  private readonly sender: WebhookSender;
  private readonly deliveries: WebhookDeliveries;
  private readonly deliveryJobs: WebhookDeliveryJobs;

  constructor(options: WebhooksOptions) {
    ({
      prisma: this.prisma,
      clock: this.clock,
      secrets: this.secrets,
      sender: this.sender,
      deliveries: this.deliveries,
      deliveryJobs: this.deliveryJobs,
    } = options);
    const { allowInsecure } = options;
    const inputs = webhookInputs(allowInsecure);
    this.registerInput = inputs.register;
    this.updateInput = inputs.update;
  }

  async register(accountId: string, input: unknown): Promise<RegisteredWebhook> {
    const data = parseInput(this.registerInput, input);
    const secret = await this.secrets.current(accountId);
    await this.ping(data.url, secret);
    const now = this.clock.now();
    const webhook = await this.prisma.webhook.create({
      data: {
        id: newId('whk'),
        accountId,
        url: data.url,
        events: data.events,
        createdAt: now,
        updatedAt: now,
      },
    });
    return { ...webhook, secret };
  }

  async get(accountId: string, id: string, query: WebhookQuery = {}) {
    const webhook = await this.prisma.webhook.findFirst({
      ...query,
      where: { id, accountId, deletedAt: null },
    });
    if (!webhook) throw new NotFoundError('Webhook');
    return webhook;
  }

  list(accountId: string, page: PageRequest, query: WebhookQuery = {}) {
    return this.prisma.webhook.findMany({
      ...query,
      ...newestFirst({ accountId, deletedAt: null }, page),
    });
  }

  count(accountId: string): Promise<number> {
    return this.prisma.webhook.count({ where: { accountId, deletedAt: null } });
  }

  /** A new URL is pinged as at registration; the same URL again is not a change. */
  async update(accountId: string, id: string, input: unknown, query: WebhookQuery = {}) {
    const data = parseInput(this.updateInput, input);
    const current = await this.get(accountId, id, { select: { url: true } });
    if (data.url === undefined && data.events === undefined) return this.get(accountId, id, query);
    if (data.url !== undefined && data.url !== current.url)
      await this.ping(data.url, await this.secrets.current(accountId));
    return this.prisma.webhook.update({
      ...query,
      where: { id },
      data: { url: data.url, events: data.events, updatedAt: this.clock.now() },
    });
  }

  /** The registration stays (its delivery log names it) but gets nothing more, pending retries included. */
  async delete(accountId: string, id: string): Promise<DeletedWebhook> {
    const { count } = await this.prisma.webhook.updateMany({
      where: { id, accountId, deletedAt: null },
      data: { deletedAt: this.clock.now() },
    });
    if (count === 0) throw new NotFoundError('Webhook');
    await this.prisma.pendingWebhookDelivery.deleteMany({ where: { webhookId: id } });
    return { id, deleted: true };
  }

  rotateSecret(accountId: string): Promise<string> {
    return this.secrets.rotate(accountId);
  }

  /** The arguments of the delivery log, checked before anything is read. */
  async parseDeliveryArgs(accountId: string, webhookId: string, args: PageArgs) {
    const page = parsePage(args);
    await this.get(accountId, webhookId, { select: { id: true } });
    return { webhookId, page };
  }

  /** Every attempt to the webhook, newest first. */
  listDeliveries(webhookId: string, page: PageRequest, query: DeliveryQuery = {}) {
    return this.prisma.webhookDelivery.findMany({
      ...query,
      ...newestFirst({ webhookId }, page),
    });
  }

  /** The delivery log of each of several webhooks of the account (a webhook list's `deliveries`), a page each, read in SQL. */
  async deliveryPagesByWebhook(
    accountId: string,
    webhookIds: readonly string[],
    page: PageRequest,
    query: DeliveryQuery = {},
  ) {
    const pages = await pageIdsPerParent(
      this.prisma,
      {
        table: 'webhook_deliveries',
        parentColumn: 'webhook_id',
        where: Prisma.sql`child.account_id = ${accountId}`,
        orderBy: Prisma.sql`child.created_at DESC, child.id DESC`,
      },
      webhookIds,
      page,
    );
    const rows = await this.prisma.webhookDelivery.findMany({
      ...query,
      where: { id: { in: allIds(pages) }, accountId },
    });
    return inPageOrder(pages, rows, webhookIds);
  }

  countDeliveries(webhookId: string): Promise<number> {
    return this.prisma.webhookDelivery.count({ where: { webhookId } });
  }

  /**
   * Delivers past events to the webhook again, with their original `id` and body, newly
   * signed: those since a time (at most seven days back) or one event. Only the kinds the
   * webhook subscribes to are sent; each replay is a delivery of its own, with its own attempts.
   */
  async replay(accountId: string, webhookId: string, input: unknown): Promise<ReplayOutcome> {
    const selection = this.replaySelection(input);
    const webhook = await this.get(accountId, webhookId, { select: { id: true, events: true } });
    if (selection.eventId) {
      const event = await this.prisma.event.findFirst({
        where: { id: selection.eventId, accountId },
        select: { id: true },
      });
      if (!event) throw new NotFoundError('Event');
    }
    // Replays are deliveries of their own: their ids must not meet the first delivery's, or another replay's.
    const replayTag = `r${randomBytes(6).toString('hex')}`;
    let replayed = 0;
    let after: { createdAt: Date; id: string } | null = null;
    for (;;) {
      const events = await this.replayChunk(accountId, webhook.events, selection, after);
      if (events.length === 0) break;
      const items = events.map((event) => ({
        event,
        deliveries: [
          {
            id: `${event.id}-${webhook.id}-${replayTag}`,
            accountId,
            eventId: event.id,
            webhookId: webhook.id,
          },
        ],
      }));
      const jobs = await this.prisma.$transaction((tx) => this.deliveries.planEvents(tx, items));
      await this.deliveryJobs.enqueue(jobs);
      replayed += events.length;
      const last = events[events.length - 1]!;
      after = { createdAt: last.created_at, id: last.id };
      if (events.length < REPLAY_CHUNK) break;
    }
    return { webhookId: webhook.id, events: replayed };
  }

  /** What a replay covers: a time within the last seven days, or one event; exactly one of the two. */
  private replaySelection(input: unknown): { since: Date | null; eventId: string | null } {
    const data = parseInput(replayInput, input);
    const since = data.since ?? null;
    const eventId = data.event ?? null;
    if ((since === null) === (eventId === null)) {
      throw new ValidationError(
        since === null
          ? [{ field: 'since', issue: 'required' }]
          : [{ field: 'event', issue: 'invalid_value' }],
        since === null ? 'One of `since` or `event` is required' : 'Give either `since` or `event`, not both',
      );
    }
    const now = this.clock.now().getTime();
    if (since && (since.getTime() < now - REPLAY_WINDOW_MS || since.getTime() > now)) {
      throw new ValidationError(
        [{ field: 'since', issue: 'invalid_value' }],
        '`since` must be within the last 7 days',
      );
    }
    return { since, eventId };
  }

  /** The next events of a replay, in order, after the last one taken. */
  private replayChunk(
    accountId: string,
    kinds: string[],
    { since, eventId }: { since: Date | null; eventId: string | null },
    after: { createdAt: Date; id: string } | null,
  ): Promise<StoredEvent[]> {
    return this.prisma.$queryRaw<StoredEvent[]>`
      SELECT id, type, payload, created_at, body FROM events
      WHERE account_id = ${accountId} AND type = ANY(${kinds})
        AND ${eventId ? Prisma.sql`id = ${eventId}` : Prisma.sql`created_at >= ${since}`}
        ${after ? Prisma.sql`AND (created_at, id) > (${after.createdAt}, ${after.id})` : Prisma.empty}
      ORDER BY created_at, id
      LIMIT ${REPLAY_CHUNK}`;
  }

  /** A URL is registered only if it answers the signed ping with a 2xx within the timeout. */
  private async ping(url: string, secret: string): Promise<void> {
    const now = this.clock.now();
    const outcome = await this.sender.send(url, pingBody(newId('evt'), now), secret, now);
    if (!outcome.ok) {
      throw new ValidationError(
        [{ field: 'url', issue: 'unreachable' }],
        `The URL did not answer the signed webhook.ping with a 2xx: ${outcome.error}`,
      );
    }
  }
}
