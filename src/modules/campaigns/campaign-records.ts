import { z } from 'zod';
import { isForeignKeyViolation } from '../../db/prisma-errors.js';
import { NotFoundError, ValidationError } from '../../errors.js';
import { Prisma, type PrismaClient } from '../../generated/prisma/client.js';
import { CampaignStatus } from '../../generated/prisma/enums.js';
import type { CampaignDispatchJobs } from '../../jobs/campaign-dispatch.job.js';
import type { Clock } from '../../lib/clock.js';
import { newId } from '../../lib/ids.js';
import { newestFirst, type PageArgs, type PageRequest, parsePage } from '../../lib/pagination.js';
import { parseInput } from '../../lib/validation.js';
import { messageValidityInput } from '../messages/message-timing.js';
import { type AccountSenders, namedSenderInput } from '../senders/account-senders.js';
import { sendWindowInput } from '../settings/send-window.js';
import { webhookUrl } from '../webhooks/webhook-url.js';
import { type CampaignQuery, liveCampaign, requireCampaign } from './campaign-lookup.js';

function campaignFields(allowInsecureWebhooks: boolean) {
  return {
    name: z.string().trim().min(1).max(120).meta({ description: 'Its name, for people' }),
    description: z.string().max(2000).meta({ description: 'What it is for, for people' }),
    webhook: webhookUrl(allowInsecureWebhooks)
      .meta({ description: "A URL that receives this campaign's events besides the account's webhooks" })
      .nullable(),
    delay: z.number().min(0).max(86_400).meta({ description: 'Seconds between batches' }),
    template: z.string().min(1).max(64).meta({ description: 'A template of the account' }).nullable(),
    batchSize: z.number().int().min(1).max(10_000).meta({ description: 'Messages per batch' }),
    sendAt: z.iso
      .datetime({ offset: true })
      .meta({ description: 'ISO 8601 time with offset at which a scheduled campaign starts' })
      .transform((value) => new Date(value))
      .nullable(),
    sendWindow: sendWindowInput
      .meta({
        description:
          "When its messages may go, in each contact's local time (its timezone, else the account's); null: the account's send_window",
      })
      .nullable(),
    validity: messageValidityInput
      .meta({
        description:
          "Seconds each message may wait for its hand-over from when the campaign made it; null: the account's message_validity",
      })
      .nullable(),
    from: namedSenderInput
      .meta({
        description:
          'A sender the operator approved for the account, which every message of the campaign goes from; null: each message’s is chosen (the account’s default_sender, else its pool)',
      })
      .nullable(),
  };
}

/** The create and update bodies of a campaign: every field but `name` may be left out. */
export function campaignInputs(allowInsecureWebhooks: boolean) {
  const fields = z.object(campaignFields(allowInsecureWebhooks)).partial();
  return {
    create: fields.required({ name: true }).meta({ description: 'A new campaign' }),
    update: z.strictObject(fields.shape).meta({ description: "Any subset of the campaign's fields" }),
  };
}

export const campaignListInput = z.object({
  status: z.enum(CampaignStatus).meta({ description: 'Only campaigns in this status' }).nullish(),
});

export interface CampaignFilter {
  status?: CampaignStatus;
}

export interface CampaignRecordsOptions {
  prisma: PrismaClient;
  clock: Clock;
  dispatchJobs: CampaignDispatchJobs;
  allowInsecureWebhooks: boolean;
  senders: AccountSenders;
}

/** An account's campaigns as records: create, read, list, change and delete. */
export class CampaignRecords {
  private readonly createInput;
  private readonly updateInput;
  private readonly prisma: PrismaClient;
  private readonly clock: Clock;
  private readonly dispatchJobs: CampaignDispatchJobs;
  private readonly senders: AccountSenders;

  constructor(options: CampaignRecordsOptions) {
    ({
      prisma: this.prisma,
      clock: this.clock,
      dispatchJobs: this.dispatchJobs,
      senders: this.senders,
    } = options);
    const { allowInsecureWebhooks } = options;
    const inputs = campaignInputs(allowInsecureWebhooks);
    this.createInput = inputs.create;
    this.updateInput = inputs.update;
  }

  async create(accountId: string, input: unknown, query: CampaignQuery = {}) {
    const data = parseInput(this.createInput, input);
    if (data.template) await this.requireTemplate(accountId, data.template);
    if (data.from) await this.senders.assertApproved(accountId, data.from, null);
    const now = this.clock.now();
    const id = newId('cmp');
    const sendAt = data.sendAt ?? null;
    const campaign = await this.withTemplateCheck(
      this.prisma.campaign.create({
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
          sendWindow: data.sendWindow ?? Prisma.DbNull,
          validity: data.validity ?? null,
          sender: data.from ?? null,
          status: 'scheduled',
          createdAt: now,
          updatedAt: now,
        },
      }),
    );
    if (sendAt) await this.dispatchJobs.scheduleStart(id, sendAt);
    return campaign;
  }

  get(accountId: string, id: string, query: CampaignQuery = {}) {
    return requireCampaign(this.prisma, accountId, id, query);
  }

  parseListArgs(args: { status?: CampaignStatus | null } & PageArgs) {
    const { status } = parseInput(campaignListInput, { status: args.status });
    return { page: parsePage(args), filter: status ? { status } : {} };
  }

  list(accountId: string, filter: CampaignFilter, page: PageRequest, query: CampaignQuery = {}) {
    return this.prisma.campaign.findMany({
      ...query,
      ...newestFirst({ accountId, deletedAt: null, ...filter }, page),
    });
  }

  count(accountId: string, filter: CampaignFilter): Promise<number> {
    return this.prisma.campaign.count({ where: { accountId, deletedAt: null, ...filter } });
  }

  async update(accountId: string, id: string, input: unknown, query: CampaignQuery = {}) {
    const data = parseInput(this.updateInput, input);
    await this.get(accountId, id, { select: { id: true } });
    if (data.template) await this.requireTemplate(accountId, data.template);
    if (data.from) await this.senders.assertApproved(accountId, data.from, null);
    const campaign = await this.withTemplateCheck(
      this.prisma.campaign.update({
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
          ...(data.sendWindow === undefined ? {} : { sendWindow: data.sendWindow ?? Prisma.DbNull }),
          validity: data.validity,
          sender: data.from,
          updatedAt: this.clock.now(),
        },
      }),
    );
    if (data.sendAt) {
      const { status } = await this.get(accountId, id, { select: { status: true } });
      if (status === 'scheduled') await this.dispatchJobs.scheduleStart(id, data.sendAt);
    }
    return campaign;
  }

  /** Deleted campaigns keep their rows (their messages still name them) but vanish from the API and stop dispatching. */
  async delete(accountId: string, id: string): Promise<{ id: string; deleted: true }> {
    const { count } = await this.prisma.campaign.updateMany({
      where: liveCampaign(accountId, id),
      data: { deletedAt: this.clock.now() },
    });
    if (count === 0) throw new NotFoundError('Campaign');
    return { id, deleted: true };
  }

  /** A template deleted between requireTemplate and the write fails its foreign key: the same 422. */
  private async withTemplateCheck<T>(write: Promise<T>): Promise<T> {
    try {
      return await write;
    } catch (error) {
      if (isForeignKeyViolation(error))
        throw new ValidationError([{ field: 'template', issue: 'not_found' }]);
      throw error;
    }
  }

  private async requireTemplate(accountId: string, templateId: string) {
    const template = await this.prisma.template.findFirst({
      where: { id: templateId, accountId },
      select: { id: true },
    });
    if (!template) throw new ValidationError([{ field: 'template', issue: 'not_found' }]);
  }
}
