import { z } from 'zod';
import { analyzeText, type TextAnalysis } from '../../carriers/encoding.js';
import { NotFoundError } from '../../errors.js';
import type { Prisma, PrismaClient } from '../../generated/prisma/client.js';
import { MessageStatus } from '../../generated/prisma/enums.js';
import { newestFirst, type PageArgs, type PageRequest, parsePage } from '../../lib/pagination.js';
import { e164 } from '../../lib/phone.js';
import { parseInput } from '../../lib/validation.js';
import { messageText } from './message-text.js';

export const previewInput = z
  .object({ message: messageText.meta({ description: 'The text to measure' }) })
  .meta({ description: 'A text to measure' });

export const messageListInput = z.object({
  status: z.enum(MessageStatus).meta({ description: 'Only messages in this status' }).nullish(),
  campaign: z.string().max(64).meta({ description: 'Only messages of this campaign' }).nullish(),
  to: e164.meta({ description: 'Only messages to this number (E.164 digits)' }).nullish(),
});

export interface MessageFilter {
  status?: MessageStatus;
  campaignId?: string;
  to?: string;
}

type MessageQuery = Omit<Prisma.MessageFindFirstArgs, 'where'>;

/** What the API reads of an account's messages, and the preview of a text that sends nothing. */
export class MessageQueries {
  constructor(private readonly prisma: PrismaClient) {}

  preview(input: unknown): TextAnalysis {
    return analyzeText(parseInput(previewInput, input).message);
  }

  async get(accountId: string, id: string, query: MessageQuery = {}) {
    const message = await this.prisma.message.findFirst({ ...query, where: { id, accountId } });
    if (!message) throw new NotFoundError('Message');
    return message;
  }

  parseListArgs(
    args: {
      status?: unknown;
      campaign?: unknown;
      to?: unknown;
    } & PageArgs,
  ) {
    const page = parsePage(args);
    const filter = parseInput(messageListInput, {
      status: args.status,
      campaign: args.campaign,
      to: args.to,
    });
    return {
      page,
      filter: {
        ...(filter.status ? { status: filter.status } : {}),
        ...(filter.campaign ? { campaignId: filter.campaign } : {}),
        ...(filter.to ? { to: filter.to } : {}),
      } satisfies MessageFilter,
    };
  }

  list(accountId: string, filter: MessageFilter, page: PageRequest, query: MessageQuery = {}) {
    return this.prisma.message.findMany({
      ...query,
      ...newestFirst({ accountId, ...filter }, page),
    });
  }

  count(accountId: string, filter: MessageFilter): Promise<number> {
    return this.prisma.message.count({ where: { accountId, ...filter } });
  }
}
