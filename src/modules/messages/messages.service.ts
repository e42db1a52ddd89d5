import { createHash } from 'node:crypto';
import type { Logger } from 'pino';
import { z } from 'zod';
import type { DeliveryReport, InboundSms } from '../../carriers/carrier.js';
import type { Clock } from '../../clock.js';
import { NotFoundError, ValidationError } from '../../errors.js';
import { Prisma, type PrismaClient } from '../../generated/prisma/client.js';
import type { MessageStatus } from '../../generated/prisma/enums.js';
import { newId } from '../../ids.js';
import type { Queues } from '../../jobs/queues.js';
import { pageWindow, parsePage, type PageRequest } from '../../pagination.js';
import { e164 } from '../../phone.js';
import { issue, parseInput } from '../../validation.js';
import { analyzeText, type TextAnalysis } from './encoding.js';
import { deliveredPayload, failedPayload, repliedPayload, sentPayload, type MessageEventType } from './message-events.js';

export const MAX_MESSAGE_CHARACTERS = 1600;
export const IDEMPOTENCY_WINDOW_MS = 24 * 60 * 60 * 1000;

const messageText = z.string().superRefine((text, context) => {
  const characters = [...text].length;
  if (characters < 1) context.addIssue({ code: 'custom', params: { issue: 'too_short' }, message: 'The message is empty' });
  if (characters > MAX_MESSAGE_CHARACTERS) {
    context.addIssue({ code: 'custom', params: { issue: 'too_long' }, message: `The message is over ${MAX_MESSAGE_CHARACTERS} characters` });
  }
});

const sendInput = z.object({
  to: e164,
  message: messageText,
  campaign: z.string().min(1).max(64).nullish(),
});

const previewInput = z.object({ message: messageText });

const idempotencyKey = z.string().min(1).max(255);

const listInput = z.object({
  status: z.enum(['queued', 'sent', 'delivered', 'failed']).nullish(),
  campaign: z.string().max(64).nullish(),
  to: e164.nullish(),
});

export interface MessageFilter {
  status?: MessageStatus;
  campaignId?: string;
  to?: string;
}

/** What a send answers: the message as it was accepted (section 2.2), also on an idempotent replay. */
export interface MessageAcceptance {
  id: string;
  status: 'queued';
  to: string;
  campaignId: string | null;
  replayed: boolean;
}

/** A message claimed by a worker for its carrier call, with what the carrier needs. */
export interface ClaimedMessage {
  id: string;
  to: string;
  text: string;
  encoding: 'GSM-7' | 'UCS-2';
  segments: number;
  sender: string | null;
  /** A previous claim had expired: a worker died during the carrier call, outcome unknown. */
  reclaimed: boolean;
}

export class UnknownCarrierMessageError extends Error {}

type MessageQuery = Omit<Prisma.MessageFindFirstArgs, 'where'>;
type Tx = Prisma.TransactionClient;

interface TransitionedRow {
  id: string;
  account_id: string;
  campaign_id: string | null;
  to: string;
}

export class MessageService {
  constructor(
    private readonly prisma: PrismaClient,
    private readonly clock: Clock,
    private readonly queues: Queues,
    private readonly logger: Logger,
  ) {}

  preview(input: unknown): TextAnalysis {
    return analyzeText(parseInput(previewInput, input).message);
  }

  /**
   * Accepts one message: committed in PostgreSQL before the caller hears 202, then handed to the
   * send queue. Should Redis not take the job, the recovery sweep enqueues it later.
   */
  async send(accountId: string, input: unknown, key?: string | null): Promise<MessageAcceptance> {
    const data = parseInput(sendInput, input);
    if (key !== undefined && key !== null && !idempotencyKey.safeParse(key).success) {
      throw new ValidationError([{ field: 'Idempotency-Key', issue: key.length === 0 ? 'too_short' : 'too_long' }]);
    }
    const campaignId = data.campaign ?? null;
    if (campaignId) {
      const campaign = await this.prisma.campaign.findFirst({ where: { id: campaignId, accountId, deletedAt: null }, select: { id: true } });
      if (!campaign) throw new ValidationError([{ field: 'campaign', issue: 'not_found' }]);
    }
    const requestHash = createHash('sha256').update(JSON.stringify([data.to, data.message, campaignId])).digest('hex');
    const now = this.clock.now();

    if (key) {
      const replay = await this.replay(accountId, key, requestHash, now);
      if (replay) return replay;
    }

    const { encoding, segments } = analyzeText(data.message);
    const id = newId('msg');
    const create = this.prisma.message.create({
      data: { id, accountId, campaignId, to: data.to, text: data.message, encoding: encoding === 'GSM-7' ? 'GSM_7' : 'UCS_2', segments, createdAt: now },
      select: { id: true },
    });
    try {
      if (key) {
        await this.prisma.$transaction([
          this.prisma.idempotencyKey.deleteMany({ where: { accountId, key, createdAt: { lte: new Date(now.getTime() - IDEMPOTENCY_WINDOW_MS) } } }),
          create,
          this.prisma.idempotencyKey.create({ data: { accountId, key, requestHash, messageId: id, createdAt: now } }),
        ]);
      } else {
        await create;
      }
    } catch (error) {
      // Another request with the same key won the race: answer as it did.
      const replay = key && isUniqueViolation(error) ? await this.replay(accountId, key, requestHash, now) : null;
      if (replay) return replay;
      throw error;
    }
    await this.enqueue([id]);
    return { id, status: 'queued', to: data.to, campaignId, replayed: false };
  }

  private async replay(accountId: string, key: string, requestHash: string, now: Date): Promise<MessageAcceptance | null> {
    const existing = await this.prisma.idempotencyKey.findUnique({
      where: { accountId_key: { accountId, key } },
      select: { requestHash: true, createdAt: true, message: { select: { id: true, to: true, campaignId: true } } },
    });
    if (!existing || existing.createdAt.getTime() <= now.getTime() - IDEMPOTENCY_WINDOW_MS) return null;
    if (existing.requestHash !== requestHash) throw new ValidationError([{ field: 'Idempotency-Key', issue: 'reused' }]);
    return { id: existing.message.id, status: 'queued', to: existing.message.to, campaignId: existing.message.campaignId, replayed: true };
  }

  /** Hands messages to the send queue; a failure is logged, not raised: the sweep retries. */
  async enqueue(ids: string[]): Promise<void> {
    if (ids.length === 0) return;
    try {
      await this.queues.messageSend.addBulk(ids.map((messageId) => ({ name: 'send', data: { messageId }, opts: { jobId: messageId } })));
    } catch (error) {
      this.logger.warn({ err: error, messages: ids.length }, 'could not enqueue messages; the recovery sweep will');
    }
  }

  async get(accountId: string, id: string, query: MessageQuery = {}) {
    const message = await this.prisma.message.findFirst({ ...query, where: { id, accountId } });
    if (!message) throw new NotFoundError('Message');
    return message;
  }

  parseListArgs(args: { status?: unknown; campaign?: unknown; to?: unknown; page?: number | null; perPage?: number | null }) {
    const page = parsePage(args);
    const filter = parseInput(listInput, { status: args.status, campaign: args.campaign, to: args.to });
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
      where: { accountId, ...filter },
      orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
      ...pageWindow(page),
    });
  }

  count(accountId: string, filter: MessageFilter): Promise<number> {
    return this.prisma.message.count({ where: { accountId, ...filter } });
  }

  /**
   * Takes a queued message for one carrier call. The claim is written before the call, so a
   * duplicate or retried job finds it taken and never hands the message over again; a claim
   * older than the lease belonged to a worker that died, and may be taken over.
   */
  async claimForSending(id: string, leaseMs: number): Promise<ClaimedMessage | null> {
    const now = this.clock.now();
    const rows = await this.prisma.$queryRaw<
      { id: string; to: string; text: string; encoding: 'GSM-7' | 'UCS-2'; segments: number; sender: string | null; previous_claim: Date | null }[]
    >`
      WITH prior AS (SELECT id, claimed_at FROM messages WHERE id = ${id} FOR UPDATE)
      UPDATE messages m SET claimed_at = ${now}
      FROM prior
      WHERE m.id = prior.id AND m.status = 'queued'
        AND (prior.claimed_at IS NULL OR prior.claimed_at < ${new Date(now.getTime() - leaseMs)})
      RETURNING m.id, m."to", m.text, m.encoding::text AS encoding, m.segments, prior.claimed_at AS previous_claim,
        (SELECT default_sender FROM account_settings s WHERE s.account_id = m.account_id) AS sender`;
    const row = rows[0];
    if (!row) return null;
    return { id: row.id, to: row.to, text: row.text, encoding: row.encoding, segments: row.segments, sender: row.sender, reclaimed: row.previous_claim !== null };
  }

  /** A claim whose carrier call certainly did not happen is given back for the retry. */
  async releaseClaim(id: string): Promise<void> {
    await this.prisma.message.updateMany({ where: { id, status: 'queued' }, data: { claimedAt: null } });
  }

  async recordSubmitted(id: string, carrier: string, carrierMessageId: string): Promise<void> {
    const now = this.clock.now();
    await this.prisma.$transaction(async (tx) => {
      const moved = await this.transition(tx, id, ['queued'], Prisma.sql`status = 'sent', sent_at = ${now}, carrier = ${carrier}, carrier_message_id = ${carrierMessageId}`);
      if (moved) {
        await this.writeEvent(tx, moved, 'message.sent', sentPayload(facts(moved), now), now);
        return;
      }
      // A delivery report overtook the submit acknowledgement; keep the carrier's id all the same.
      await tx.message.updateMany({ where: { id, carrierMessageId: null }, data: { carrier, carrierMessageId } });
    });
  }

  async recordFailed(id: string, error: { code: string; message: string }): Promise<void> {
    const now = this.clock.now();
    await this.prisma.$transaction(async (tx) => {
      const moved = await this.transition(
        tx,
        id,
        ['queued', 'sent'],
        Prisma.sql`status = 'failed', failed_at = ${now}, error_code = ${error.code}, error_message = ${error.message}`,
      );
      if (moved) await this.writeEvent(tx, moved, 'message.failed', failedPayload(facts(moved), now, error), now);
    });
  }

  /**
   * Applies a carrier's delivery report. Statuses only move forward, so a late or repeated
   * report changes nothing; a report for a message the carrier has not acknowledged yet raises
   * UnknownCarrierMessageError, for the carrier to retry it.
   */
  async applyDeliveryReport(carrier: string, report: DeliveryReport): Promise<void> {
    const message = await this.prisma.message.findFirst({
      where: { OR: [{ carrier, carrierMessageId: report.carrierMessageId }, ...(report.reference ? [{ id: report.reference }] : [])] },
      select: { id: true },
    });
    if (!message) throw new UnknownCarrierMessageError(`no message for ${carrier} id ${report.carrierMessageId}`);
    const at = report.at;
    // A report can overtake the record of the submit (or the worker that would record it died):
    // the carrier's id then comes from the report.
    const carrierIds = Prisma.sql`carrier = COALESCE(carrier, ${carrier}), carrier_message_id = COALESCE(carrier_message_id, ${report.carrierMessageId})`;
    await this.prisma.$transaction(async (tx) => {
      if (report.status === 'delivered') {
        const moved = await this.transition(
          tx,
          message.id,
          ['queued', 'sent'],
          Prisma.sql`status = 'delivered', delivered_at = ${at}, sent_at = COALESCE(sent_at, ${at}), ${carrierIds}`,
        );
        if (moved) await this.writeEvent(tx, moved, 'message.delivered', deliveredPayload(facts(moved), at), at);
        return;
      }
      const error = report.error ?? { code: 'carrier_error', message: 'The carrier reported a failure' };
      const moved = await this.transition(
        tx,
        message.id,
        ['queued', 'sent'],
        Prisma.sql`status = 'failed', failed_at = ${at}, sent_at = COALESCE(sent_at, ${at}), error_code = ${error.code}, error_message = ${error.message}, ${carrierIds}`,
      );
      if (moved) await this.writeEvent(tx, moved, 'message.failed', failedPayload(facts(moved), at, error), at);
    });
  }

  /**
   * Stores a reply, linked to the latest message the same account sent to that number, with
   * its `message.replied` event. A carrier redelivering the same inbound message changes nothing.
   */
  async recordInbound(carrier: string, inbound: InboundSms): Promise<void> {
    const replied = inbound.inReplyTo
      ? await this.prisma.message.findUnique({ where: { id: inbound.inReplyTo }, select: { accountId: true } })
      : await this.prisma.message.findFirst({ where: { to: inbound.from }, orderBy: { createdAt: 'desc' }, select: { accountId: true } });
    if (!replied) {
      this.logger.warn({ carrier, from: inbound.from }, 'inbound message from a number no account has written to; dropped');
      return;
    }
    const latest = await this.prisma.message.findFirst({
      where: { accountId: replied.accountId, to: inbound.from },
      orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
      select: { id: true, to: true, campaignId: true },
    });
    const id = newId('inb');
    try {
      await this.prisma.$transaction(async (tx) => {
        await tx.inboundMessage.create({
          data: {
            id,
            accountId: replied.accountId,
            messageId: latest?.id ?? null,
            from: inbound.from,
            to: inbound.to,
            text: inbound.text,
            carrier,
            carrierMessageId: inbound.carrierMessageId,
            receivedAt: inbound.at,
          },
        });
        if (latest) {
          await this.writeEvent(
            tx,
            { id: latest.id, account_id: replied.accountId, campaign_id: latest.campaignId, to: latest.to },
            'message.replied',
            repliedPayload(latest, { id, from: inbound.from, text: inbound.text, receivedAt: inbound.at }),
            inbound.at,
          );
        }
      });
    } catch (error) {
      if (isUniqueViolation(error)) return;
      throw error;
    }
  }

  /** Queued messages no worker is on: never enqueued (Redis was away) or claimed by a worker that died. */
  async findStranded(options: { unclaimedForMs: number; leaseMs: number; limit: number }): Promise<string[]> {
    const now = this.clock.now().getTime();
    const rows = await this.prisma.message.findMany({
      where: {
        status: 'queued',
        OR: [
          { claimedAt: null, createdAt: { lt: new Date(now - options.unclaimedForMs) } },
          { claimedAt: { lt: new Date(now - options.leaseMs) } },
        ],
      },
      orderBy: { createdAt: 'asc' },
      take: options.limit,
      select: { id: true },
    });
    return rows.map((row) => row.id);
  }

  /** Moves a message forward from one of `from`; null when it had already moved on. */
  private async transition(tx: Tx, id: string, from: MessageStatus[], set: Prisma.Sql): Promise<TransitionedRow | null> {
    const rows = await tx.$queryRaw<TransitionedRow[]>`
      UPDATE messages SET ${set}
      WHERE id = ${id} AND status::text = ANY(${from})
      RETURNING id, account_id, campaign_id, "to"`;
    return rows[0] ?? null;
  }

  private async writeEvent(tx: Tx, message: TransitionedRow, type: MessageEventType, payload: Prisma.InputJsonObject, at: Date) {
    await tx.event.create({
      data: { id: newId('evt'), accountId: message.account_id, type, payload, campaignId: message.campaign_id, messageId: message.id, createdAt: at },
    });
  }
}

function facts(row: TransitionedRow) {
  return { id: row.id, to: row.to, campaignId: row.campaign_id };
}

function isUniqueViolation(error: unknown): boolean {
  return error instanceof Prisma.PrismaClientKnownRequestError && error.code === 'P2002';
}
