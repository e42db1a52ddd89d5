import type { Logger } from 'pino';
import { z } from 'zod';
import type { Clock } from '../../clock.js';
import { InvalidStateError, NotFoundError, ValidationError } from '../../errors.js';
import { Prisma, type PrismaClient } from '../../generated/prisma/client.js';
import type { CampaignStatus } from '../../generated/prisma/enums.js';
import { newId } from '../../ids.js';
import type { Queues } from '../../jobs/queues.js';
import { pageWindow, parsePage, type PageRequest } from '../../pagination.js';
import { parseInput } from '../../validation.js';
import { analyzeText } from '../messages/encoding.js';
import type { MessageService } from '../messages/messages.service.js';
import { contactOptedOut } from '../opt-outs/opt-outs.service.js';
import { renderTemplate } from '../templates/render-template.js';
import { webhookUrl } from '../webhooks/webhook-url.js';

export interface CampaignStats {
  contacts: number;
  queued: number;
  sent: number;
  delivered: number;
  failed: number;
  replied: number;
  /** The campaign's contacts whose number opted out of the account, read now: dispatch skips them. */
  opted_out: number;
}

export type CampaignAction = 'start' | 'pause' | 'resume' | 'cancel' | 'schedule' | 'unschedule';
type CampaignEventType = 'campaign.started' | 'campaign.paused' | 'campaign.finished' | 'campaign.cancelled';

/** decisions.md's transition table: the statuses an action may leave, where it goes, what it tells. */
const TRANSITIONS: Record<CampaignAction, { from: CampaignStatus[]; to: CampaignStatus; event?: CampaignEventType }> = {
  start: { from: ['scheduled'], to: 'running', event: 'campaign.started' },
  unschedule: { from: ['scheduled'], to: 'draft' },
  schedule: { from: ['draft'], to: 'scheduled' },
  pause: { from: ['running'], to: 'paused', event: 'campaign.paused' },
  resume: { from: ['paused'], to: 'running', event: 'campaign.started' },
  cancel: { from: ['scheduled', 'draft', 'running', 'paused'], to: 'cancelled', event: 'campaign.cancelled' },
};

const isoTime = z.iso.datetime({ offset: true }).transform((value) => new Date(value));

function campaignFields(allowInsecureWebhooks: boolean) {
  return {
    name: z.string().trim().min(1).max(120),
    description: z.string().max(2000),
    webhook: webhookUrl(allowInsecureWebhooks).nullable(),
    delay: z.number().min(0).max(86_400),
    template: z.string().min(1).max(64).nullable(),
    batchSize: z.number().int().min(1).max(10_000),
    sendAt: isoTime.nullable(),
  };
}

/** The selection Pothos computes for a field; spread into every query. */
type CampaignQuery = Pick<Prisma.CampaignFindFirstArgs, 'select' | 'include'>;
type Tx = Prisma.TransactionClient;

interface LockedCampaign {
  id: string;
  account_id: string;
  status: CampaignStatus;
  template_id: string | null;
  batch_size: number;
  delay: number;
  dispatched_batches: number;
  dispatched_through_at: Date | null;
  dispatched_through_id: string | null;
  send_at: Date | null;
  deleted_at: Date | null;
}

interface PendingContact {
  id: string;
  phone: string;
  name: string | null;
  email: string | null;
  document: string | null;
  tags: string[];
  created_at: Date;
}

export interface DispatchOutcome {
  /** Messages created by this batch, to hand to the send queue. */
  messageIds: string[];
  /** When the next batch is due, or null when the campaign is no longer running. */
  next: { batch: number; delayMs: number } | null;
}

export class CampaignService {
  private readonly createInput;
  private readonly updateInput;

  constructor(
    private readonly prisma: PrismaClient,
    private readonly clock: Clock,
    private readonly queues: Queues,
    private readonly messages: MessageService,
    private readonly logger: Logger,
    allowInsecureWebhooks: boolean,
  ) {
    const fields = campaignFields(allowInsecureWebhooks);
    this.createInput = z.object({
      name: fields.name,
      description: fields.description.optional(),
      webhook: fields.webhook.optional(),
      delay: fields.delay.optional(),
      template: fields.template.optional(),
      batchSize: fields.batchSize.optional(),
      sendAt: fields.sendAt.optional(),
    });
    this.updateInput = z.strictObject({
      name: fields.name.optional(),
      description: fields.description.optional(),
      webhook: fields.webhook.optional(),
      delay: fields.delay.optional(),
      template: fields.template.optional(),
      batchSize: fields.batchSize.optional(),
      sendAt: fields.sendAt.optional(),
    });
  }

  async create(accountId: string, input: unknown, query: CampaignQuery = {}) {
    const data = parseInput(this.createInput, input);
    if (data.template) await this.requireTemplate(accountId, data.template);
    const now = this.clock.now();
    const id = newId('cmp');
    const sendAt = data.sendAt ?? null;
    const campaign = await this.withTemplateCheck(this.prisma.campaign.create({
      ...query,
      data: {
        id,
        accountId,
        name: data.name,
        description: data.description ?? '',
        webhook: data.webhook ?? null,
        delay: data.delay ?? 0,
        templateId: data.template ?? null,
        batchSize: data.batchSize ?? 100,
        sendAt,
        status: 'scheduled',
        createdAt: now,
        updatedAt: now,
      },
    }));
    if (sendAt) await this.scheduleStart(id, sendAt);
    return campaign;
  }

  async get(accountId: string, id: string, query: CampaignQuery = {}) {
    const campaign = await this.prisma.campaign.findFirst({ ...query, where: { id, accountId, deletedAt: null } });
    if (!campaign) throw new NotFoundError('Campaign');
    return campaign;
  }

  parseListArgs(args: { status?: CampaignStatus | null; page?: number | null; perPage?: number | null }) {
    return { page: parsePage(args), filter: args.status ? { status: args.status } : {} };
  }

  list(accountId: string, filter: { status?: CampaignStatus }, page: PageRequest, query: CampaignQuery = {}) {
    return this.prisma.campaign.findMany({
      ...query,
      where: { accountId, deletedAt: null, ...filter },
      orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
      ...pageWindow(page),
    });
  }

  count(accountId: string, filter: { status?: CampaignStatus }): Promise<number> {
    return this.prisma.campaign.count({ where: { accountId, deletedAt: null, ...filter } });
  }

  async update(accountId: string, id: string, input: unknown, query: CampaignQuery = {}) {
    const data = parseInput(this.updateInput, input);
    await this.get(accountId, id, { select: { id: true } });
    if (data.template) await this.requireTemplate(accountId, data.template);
    const campaign = await this.withTemplateCheck(this.prisma.campaign.update({
      ...query,
      where: { id },
      data: {
        name: data.name,
        description: data.description,
        webhook: data.webhook,
        delay: data.delay,
        templateId: data.template,
        batchSize: data.batchSize,
        sendAt: data.sendAt,
        updatedAt: this.clock.now(),
      },
    }));
    if (data.sendAt) {
      const { status } = await this.get(accountId, id, { select: { status: true } });
      if (status === 'scheduled') await this.scheduleStart(id, data.sendAt);
    }
    return campaign;
  }

  /** Deleted campaigns keep their rows (their messages still name them) but vanish from the API and stop dispatching. */
  async delete(accountId: string, id: string): Promise<{ id: string; deleted: true }> {
    const { count } = await this.prisma.campaign.updateMany({
      where: { id, accountId, deletedAt: null },
      data: { deletedAt: this.clock.now() },
    });
    if (count === 0) throw new NotFoundError('Campaign');
    return { id, deleted: true };
  }

  /** One of the campaign actions of the transition table; 409 invalid_state when its status forbids it. */
  async act(accountId: string, id: string, action: CampaignAction): Promise<void> {
    const rule = TRANSITIONS[action];
    const now = this.clock.now();
    const moved = await this.prisma.$transaction(async (tx) => {
      const campaign = await this.lock(tx, id);
      if (!campaign || campaign.account_id !== accountId || campaign.deleted_at) throw new NotFoundError('Campaign');
      if (!rule.from.includes(campaign.status)) {
        throw new InvalidStateError(`A ${campaign.status} campaign cannot ${action}; allowed from: ${rule.from.join(', ')}`);
      }
      if (rule.to === 'running' && !campaign.template_id) throw new ValidationError([{ field: 'template', issue: 'required' }]);
      await tx.campaign.update({
        where: { id },
        data: {
          status: rule.to,
          updatedAt: now,
          ...(action === 'start' ? { startedAt: now, nextBatchAt: now } : {}),
          ...(action === 'resume' ? { nextBatchAt: now } : {}),
        },
      });
      if (rule.event) await this.writeEvent(tx, campaign, rule.event, rule.to, now);
      return campaign;
    });
    if (rule.to === 'running') await this.enqueueDispatch(id, moved.dispatched_batches + 1, 0);
    if (action === 'schedule' && moved.send_at) await this.scheduleStart(id, moved.send_at);
  }

  /** The delayed `start` job of a scheduled campaign fires; it starts only if still scheduled for that time. */
  async startScheduled(campaignId: string, sendAt: Date): Promise<void> {
    const now = this.clock.now();
    const started = await this.prisma.$transaction(async (tx) => {
      const campaign = await this.lock(tx, campaignId);
      if (!campaign || campaign.deleted_at || campaign.status !== 'scheduled' || campaign.send_at?.getTime() !== sendAt.getTime()) return null;
      if (!campaign.template_id) {
        this.logger.warn({ campaign: campaignId }, 'send_at reached but the campaign has no template; left scheduled');
        return null;
      }
      await tx.campaign.update({ where: { id: campaignId }, data: { status: 'running', startedAt: now, nextBatchAt: now, updatedAt: now } });
      await this.writeEvent(tx, campaign, 'campaign.started', 'running', now);
      return campaign;
    });
    if (started) await this.enqueueDispatch(campaignId, started.dispatched_batches + 1, 0);
  }

  /**
   * Sends the next batch of a running campaign: contacts without a message get one, rendered
   * from the template. The campaign row is locked for the batch (FOR NO KEY UPDATE, which the
   * foreign-key checks of rows being added to the campaign do not wait on), so two dispatchers never
   * interleave, and the unique (campaign, contact) index makes a second message for a contact
   * impossible whatever happens around it. When no contact is left the campaign finishes.
   */
  async dispatchBatch(campaignId: string): Promise<DispatchOutcome> {
    const now = this.clock.now();
    const outcome = await this.prisma.$transaction(
      async (tx): Promise<DispatchOutcome> => {
        const campaign = await this.lock(tx, campaignId);
        if (!campaign || campaign.deleted_at || campaign.status !== 'running') return { messageIds: [], next: null };
        const template = campaign.template_id
          ? await tx.template.findUnique({ where: { id: campaign.template_id }, select: { content: true } })
          : null;
        if (!template) {
          this.logger.warn({ campaign: campaignId }, 'running campaign without a template; nothing dispatched');
          return { messageIds: [], next: null };
        }
        // Read on from the last batch; a short read means the end, where a read from the start
        // also finds contacts that committed late with an earlier created_at (an import's rows).
        let contacts = await this.pendingContacts(tx, campaign, campaign.batch_size);
        if (contacts.length < campaign.batch_size && campaign.dispatched_through_id) {
          contacts = await this.pendingContacts(tx, { ...campaign, dispatched_through_at: null, dispatched_through_id: null }, campaign.batch_size);
        }
        const created = contacts.length
          ? await tx.message.createManyAndReturn({
              data: contacts.map((contact) => {
                const text = renderTemplate(template.content, contact);
                const { encoding, segments } = analyzeText(text);
                return {
                  id: newId('msg'),
                  accountId: campaign.account_id,
                  campaignId,
                  contactId: contact.id,
                  to: contact.phone,
                  text,
                  encoding: encoding === 'GSM-7' ? ('GSM_7' as const) : ('UCS_2' as const),
                  segments,
                  createdAt: now,
                };
              }),
              skipDuplicates: true,
              select: { id: true },
            })
          : [];
        // A short batch was the last: every contact the campaign had has its message now.
        if (contacts.length < campaign.batch_size) {
          await tx.campaign.update({
            where: { id: campaignId },
            data: { status: 'finished', finishedAt: now, nextBatchAt: null, updatedAt: now, dispatchedBatches: { increment: created.length ? 1 : 0 } },
          });
          await this.writeEvent(tx, campaign, 'campaign.finished', 'finished', now);
          return { messageIds: created.map((m) => m.id), next: null };
        }
        const delayMs = Math.round(campaign.delay * 1000);
        await tx.campaign.update({
          where: { id: campaignId },
          data: {
            dispatchedBatches: { increment: 1 },
            nextBatchAt: new Date(now.getTime() + delayMs),
            dispatchedThroughAt: contacts.at(-1)!.created_at,
            dispatchedThroughId: contacts.at(-1)!.id,
          },
        });
        return { messageIds: created.map((m) => m.id), next: { batch: campaign.dispatched_batches + 2, delayMs } };
      },
      { timeout: 60_000 },
    );
    await this.messages.enqueue(outcome.messageIds);
    if (outcome.next) await this.enqueueDispatch(campaignId, outcome.next.batch, outcome.next.delayMs);
    return outcome;
  }

  /**
   * Running campaigns whose next batch is overdue (its job was lost with Redis, say) and
   * scheduled ones whose send_at passed unnoticed get their job again; job ids make it a no-op
   * when the job is in fact still there.
   */
  async recoverStalled(overdueMs: number): Promise<number> {
    const cutoff = new Date(this.clock.now().getTime() - overdueMs);
    const [running, scheduled] = await Promise.all([
      this.prisma.campaign.findMany({
        where: { status: 'running', deletedAt: null, nextBatchAt: { lt: cutoff } },
        select: { id: true, dispatchedBatches: true },
        take: 500,
      }),
      this.prisma.campaign.findMany({
        where: { status: 'scheduled', deletedAt: null, sendAt: { lt: cutoff } },
        select: { id: true, sendAt: true },
        take: 500,
      }),
    ]);
    for (const campaign of running) await this.enqueueDispatch(campaign.id, campaign.dispatchedBatches + 1, 0);
    for (const campaign of scheduled) await this.scheduleStart(campaign.id, campaign.sendAt!);
    return running.length + scheduled.length;
  }

  /** Stats of many campaigns in three grouped queries, for lists without a query per campaign. */
  async statsFor(campaignIds: readonly string[]): Promise<CampaignStats[]> {
    const ids = [...campaignIds];
    const [contacts, byStatus, replied, optedOut] = await Promise.all([
      this.prisma.contact.groupBy({ by: ['campaignId'], where: { campaignId: { in: ids } }, _count: { _all: true } }),
      this.prisma.message.groupBy({ by: ['campaignId', 'status'], where: { campaignId: { in: ids } }, _count: { _all: true } }),
      this.prisma.$queryRaw<{ campaign_id: string; replied: bigint }[]>`
        SELECT m.campaign_id, count(DISTINCT m.id) AS replied
        FROM messages m JOIN inbound_messages i ON i.message_id = m.id
        WHERE m.campaign_id = ANY(${ids})
        GROUP BY m.campaign_id`,
      this.prisma.$queryRaw<{ campaign_id: string; opted_out: bigint }[]>`
        SELECT c.campaign_id, count(*) AS opted_out
        FROM contacts c JOIN campaigns k ON k.id = c.campaign_id
        WHERE c.campaign_id = ANY(${ids}) AND ${contactOptedOut(Prisma.sql`k.account_id`)}
        GROUP BY c.campaign_id`,
    ]);
    return ids.map((id) => {
      const stats: CampaignStats = { contacts: 0, queued: 0, sent: 0, delivered: 0, failed: 0, replied: 0, opted_out: 0 };
      stats.contacts = contacts.find((row) => row.campaignId === id)?._count._all ?? 0;
      for (const row of byStatus) if (row.campaignId === id) stats[row.status] = row._count._all;
      stats.replied = Number(replied.find((row) => row.campaign_id === id)?.replied ?? 0);
      stats.opted_out = Number(optedOut.find((row) => row.campaign_id === id)?.opted_out ?? 0);
      return stats;
    });
  }

  /** A template deleted between requireTemplate and the write fails its foreign key: the same 422. */
  private async withTemplateCheck<T>(write: Promise<T>): Promise<T> {
    try {
      return await write;
    } catch (error) {
      if (error instanceof Prisma.PrismaClientKnownRequestError && error.code === 'P2003') {
        throw new ValidationError([{ field: 'template', issue: 'not_found' }]);
      }
      throw error;
    }
  }

  private async requireTemplate(accountId: string, templateId: string) {
    const template = await this.prisma.template.findFirst({ where: { id: templateId, accountId }, select: { id: true } });
    if (!template) throw new ValidationError([{ field: 'template', issue: 'not_found' }]);
  }

  private async lock(tx: Tx, id: string): Promise<LockedCampaign | null> {
    const rows = await tx.$queryRaw<LockedCampaign[]>`
      SELECT id, account_id, status::text AS status, template_id, batch_size, delay, dispatched_batches, dispatched_through_at,
        dispatched_through_id, send_at, deleted_at
      FROM campaigns WHERE id = ${id} FOR NO KEY UPDATE`;
    return rows[0] ?? null;
  }

  /** Contacts still to be sent: no message yet, and not opted out of the account. */
  private pendingContacts(tx: Tx, campaign: LockedCampaign, limit: number): Promise<PendingContact[]> {
    const after = campaign.dispatched_through_id
      ? Prisma.sql`AND (c.created_at, c.id) > (${campaign.dispatched_through_at}, ${campaign.dispatched_through_id})`
      : Prisma.empty;
    return tx.$queryRaw<PendingContact[]>`
      SELECT c.id, c.phone, c.name, c.email, c.document, c.tags, c.created_at
      FROM contacts c
      WHERE c.campaign_id = ${campaign.id} ${after}
        AND NOT EXISTS (SELECT 1 FROM messages m WHERE m.campaign_id = ${campaign.id} AND m.contact_id = c.id)
        AND NOT ${contactOptedOut(campaign.account_id)}
      ORDER BY c.created_at, c.id
      LIMIT ${limit}`;
  }

  private async writeEvent(tx: Tx, campaign: LockedCampaign, type: CampaignEventType, status: CampaignStatus, at: Date) {
    const stats = await this.statsWithin(tx, campaign.id);
    await tx.event.create({
      data: {
        id: newId('evt'),
        accountId: campaign.account_id,
        type,
        payload: { event: type, campaign: campaign.id, status, stats: { ...stats } },
        campaignId: campaign.id,
        createdAt: at,
      },
    });
  }

  /** The same counts as statsFor, read inside the transaction that changes the status. */
  private async statsWithin(tx: Tx, campaignId: string): Promise<CampaignStats> {
    const [row] = await tx.$queryRaw<
      { contacts: bigint; queued: bigint; sent: bigint; delivered: bigint; failed: bigint; replied: bigint; opted_out: bigint }[]
    >`
      SELECT
        (SELECT count(*) FROM contacts WHERE campaign_id = ${campaignId}) AS contacts,
        (SELECT count(*) FROM contacts c JOIN campaigns k ON k.id = c.campaign_id
          WHERE c.campaign_id = ${campaignId} AND ${contactOptedOut(Prisma.sql`k.account_id`)}) AS opted_out,
        count(*) FILTER (WHERE m.status = 'queued') AS queued,
        count(*) FILTER (WHERE m.status = 'sent') AS sent,
        count(*) FILTER (WHERE m.status = 'delivered') AS delivered,
        count(*) FILTER (WHERE m.status = 'failed') AS failed,
        count(*) FILTER (WHERE EXISTS (SELECT 1 FROM inbound_messages i WHERE i.message_id = m.id)) AS replied
      FROM messages m WHERE m.campaign_id = ${campaignId}`;
    return {
      contacts: Number(row?.contacts ?? 0),
      queued: Number(row?.queued ?? 0),
      sent: Number(row?.sent ?? 0),
      delivered: Number(row?.delivered ?? 0),
      failed: Number(row?.failed ?? 0),
      replied: Number(row?.replied ?? 0),
      opted_out: Number(row?.opted_out ?? 0),
    };
  }

  private async enqueueDispatch(campaignId: string, batch: number, delayMs: number): Promise<void> {
    try {
      await this.queues.campaignDispatch.add('dispatch', { kind: 'dispatch', campaignId }, { jobId: `dispatch-${campaignId}-${batch}`, delay: delayMs });
    } catch (error) {
      this.logger.warn({ err: error, campaign: campaignId }, 'could not enqueue the next batch; the recovery sweep will');
    }
  }

  private async scheduleStart(campaignId: string, sendAt: Date): Promise<void> {
    const delay = Math.max(0, sendAt.getTime() - this.clock.now().getTime());
    try {
      await this.queues.campaignDispatch.add(
        'start',
        { kind: 'start', campaignId, sendAt: sendAt.toISOString() },
        { jobId: `start-${campaignId}-${sendAt.getTime()}`, delay },
      );
    } catch (error) {
      this.logger.warn({ err: error, campaign: campaignId }, 'could not schedule the start; the recovery sweep will');
    }
  }
}

