import { createHash } from 'node:crypto';
import type { Logger } from 'pino';
import { z } from 'zod';
import { Batcher } from '../../batcher.js';
import type { DeliveryReport, InboundSms } from '../../carriers/carrier.js';
import type { Clock } from '../../clock.js';
import { NotFoundError, ValidationError } from '../../errors.js';
import { Prisma, type PrismaClient } from '../../generated/prisma/client.js';
import type { MessageStatus } from '../../generated/prisma/enums.js';
import { newId } from '../../ids.js';
import { SEND_JOB_SIZE, type Queues } from '../../jobs/queues.js';
import type { Metrics } from '../../metrics/metrics.js';
import { pageWindow, parsePage, type PageRequest } from '../../pagination.js';
import { e164 } from '../../phone.js';
import { optedOutError, type OptOutService } from '../opt-outs/opt-outs.service.js';
import { isUnstorableText, parseInput } from '../../validation.js';
import { analyzeText, type TextAnalysis } from './encoding.js';
import { repliedPayload, type MessageEventType } from './message-events.js';

export const MAX_MESSAGE_CHARACTERS = 1600;
export const IDEMPOTENCY_WINDOW_MS = 24 * 60 * 60 * 1000;

const messageText = z.string().superRefine((text, context) => {
  const characters = [...text].length;
  if (characters < 1) context.addIssue({ code: 'custom', params: { issue: 'too_short' }, message: 'The message is empty' });
  // The request layers refuse such text in variables; a literal in a GraphQL document reaches here.
  if (isUnstorableText(text)) {
    context.addIssue({ code: 'custom', params: { issue: 'invalid_value' }, message: 'The message contains a NUL character or an unpaired surrogate' });
  }
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

interface NewMessage {
  id: string;
  accountId: string;
  campaignId: string | null;
  to: string;
  text: string;
  encoding: 'GSM-7' | 'UCS-2';
  segments: number;
  createdAt: Date;
}

/** A status change of one message; `carrier` and `carrierMessageId` come with what a carrier said. */
interface Transition {
  id: string;
  status: 'sent' | 'delivered' | 'failed';
  at: Date;
  carrier?: string;
  carrierMessageId?: string;
  error?: { code: string; message: string };
}

// Batches grow with load by themselves (see Batcher); two run side by side: more would make
// them smaller, and a statement's round trip (a write to the socket each) costs more than its rows.
const BATCHING = { maxBatch: 100, maxInFlight: 2 };

type ClaimRow = Omit<ClaimedMessage, 'reclaimed'> & { previous_claim: Date | null };

type MessageQuery = Omit<Prisma.MessageFindFirstArgs, 'where'>;
type Tx = Prisma.TransactionClient;

/** The message an event row is about. */
interface EventSubject {
  id: string;
  account_id: string;
  campaign_id: string | null;
  to: string;
}

export class MessageService {
  // One acceptance batch at a time: sends arriving meanwhile wait a few milliseconds and share
  // the next one, so that send jobs (made per batch) carry many messages under load.
  private readonly accepted = new Batcher((messages: NewMessage[]) => this.insertAndEnqueue(messages), { maxBatch: 100, maxInFlight: 1 });
  private readonly claims = new Batcher((requests: { id: string; leaseMs: number }[]) => this.claimMany(requests), BATCHING);
  private readonly reportedMessages = new Batcher(
    (reports: { carrier: string; carrierMessageId: string; reference: string | null }[]) => this.findReported(reports),
    BATCHING,
  );
  private readonly transitions = new Batcher((changes: Transition[]) => this.transitionMany(changes), BATCHING);

  constructor(
    private readonly prisma: PrismaClient,
    private readonly clock: Clock,
    private readonly queues: Queues,
    private readonly logger: Logger,
    private readonly optOuts: OptOutService,
    private readonly metrics: Metrics,
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
    const now = this.clock.now();
    const { encoding, segments } = analyzeText(data.message);
    const message: NewMessage = { id: newId('msg'), accountId, campaignId, to: data.to, text: data.message, encoding, segments, createdAt: now };
    if (!key) {
      const failure = await this.accepted.add(message);
      if (failure) throw failure;
      return { id: message.id, status: 'queued', to: data.to, campaignId, replayed: false };
    }

    const requestHash = createHash('sha256').update(JSON.stringify([data.to, data.message, campaignId])).digest('hex');
    const replay = await this.replay(accountId, key, requestHash, now);
    if (replay) return replay;
    // After the replay: a send accepted before the opt-out still answers as it did.
    await this.optOuts.assertReachable(accountId, data.to);
    try {
      await this.prisma.$transaction([
        this.prisma.idempotencyKey.deleteMany({ where: { accountId, key, createdAt: { lte: new Date(now.getTime() - IDEMPOTENCY_WINDOW_MS) } } }),
        this.prisma.message.create({
          data: { ...message, encoding: encoding === 'GSM-7' ? 'GSM_7' : 'UCS_2' },
          select: { id: true },
        }),
        this.prisma.idempotencyKey.create({ data: { accountId, key, requestHash, messageId: message.id, createdAt: now } }),
      ]);
    } catch (error) {
      // Another request with the same key won the race: answer as it did.
      const raced = isUniqueViolation(error) ? await this.replay(accountId, key, requestHash, now) : null;
      if (raced) return raced;
      throw error;
    }
    await this.enqueue([message.id]);
    return { id: message.id, status: 'queued', to: data.to, campaignId, replayed: false };
  }

  /**
   * Concurrent sends without an idempotency key share one opt-out check, one multi-row INSERT and
   * one `addBulk`: the commit and the round trips are most of a send's cost, not the rows. Should
   * the INSERT fail, each message is tried alone, so that one bad row fails only its own request.
   */
  private async insertAndEnqueue(batch: NewMessage[]): Promise<(Error | null)[]> {
    const optedOut = await this.optOuts.optedOut(batch);
    const messages = batch.filter((_, index) => !optedOut[index]);
    const results = messages.length > 0 ? await this.insertAndEnqueueReachable(messages) : [];
    let result = 0;
    return batch.map((_, index) => (optedOut[index] ? optedOutError() : results[result++]!));
  }

  private async insertAndEnqueueReachable(messages: NewMessage[]): Promise<(Error | null)[]> {
    try {
      await this.insertMessages(messages);
    } catch (error) {
      if (messages.length === 1) return [asError(error)];
      const alone = await Promise.all(messages.map((message) => this.insertMessages([message]).then(() => null, asError)));
      await this.enqueue(messages.filter((_, index) => alone[index] === null).map((m) => m.id));
      return alone;
    }
    await this.enqueue(messages.map((m) => m.id));
    return messages.map(() => null);
  }

  private async insertMessages(messages: NewMessage[]): Promise<void> {
    await this.prisma.$executeRaw`
      INSERT INTO messages (id, account_id, campaign_id, "to", text, encoding, segments, created_at)
      SELECT * FROM unnest(
        ${messages.map((m) => m.id)}::text[], ${messages.map((m) => m.accountId)}::text[], ${messages.map((m) => m.campaignId)}::text[],
        ${messages.map((m) => m.to)}::text[], ${messages.map((m) => m.text)}::text[], ${messages.map((m) => m.encoding)}::"MessageEncoding"[],
        ${messages.map((m) => m.segments)}::int[], ${messages.map((m) => m.createdAt.toISOString())}::timestamptz[])`;
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

  /**
   * Hands messages to the send queue, SEND_JOB_SIZE to a job: per-job costs (Redis round trips,
   * locks, events) then stay small beside the messages'. A job's id is made of its messages', so
   * enqueueing the same batch again adds nothing. A failure is logged, not raised: the sweep retries.
   */
  async enqueue(ids: string[]): Promise<void> {
    if (ids.length === 0) return;
    const jobs = [];
    for (let start = 0; start < ids.length; start += SEND_JOB_SIZE) {
      const messageIds = ids.slice(start, start + SEND_JOB_SIZE);
      const jobId = messageIds.length === 1 ? messageIds[0]! : `batch-${createHash('sha256').update(messageIds.join(',')).digest('base64url')}`;
      jobs.push({ name: 'send', data: { messageIds }, opts: { jobId } });
    }
    try {
      await this.queues.messageSend.addBulk(jobs);
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
   * older than the lease belonged to a worker that died, and may be taken over. Concurrent
   * claims share one statement.
   */
  async claimForSending(id: string, leaseMs: number): Promise<ClaimedMessage | null> {
    // Rows another transaction holds are skipped by the batch, so that one busy row does not
    // hold up the others, and then claimed on their own, waiting for the row as a single claim would.
    const row = (await this.claims.add({ id, leaseMs })) ?? (await this.claimRows([{ id, leaseMs }], false))[0];
    if (!row) return null;
    return { id: row.id, to: row.to, text: row.text, encoding: row.encoding, segments: row.segments, sender: row.sender, reclaimed: row.previous_claim !== null };
  }

  private async claimMany(requests: { id: string; leaseMs: number }[]): Promise<(ClaimRow | undefined)[]> {
    const claimed = new Map((await this.claimRows(requests, true)).map((row) => [row.id, row]));
    return requests.map(({ id }) => {
      const row = claimed.get(id);
      // The same message asked for twice in one batch is claimed once.
      claimed.delete(id);
      return row;
    });
  }

  private claimRows(requests: { id: string; leaseMs: number }[], skipLocked: boolean) {
    const now = this.clock.now();
    return this.prisma.$queryRaw<ClaimRow[]>`
      WITH request AS (
        SELECT * FROM unnest(${requests.map((r) => r.id)}::text[], ${requests.map((r) => new Date(now.getTime() - r.leaseMs).toISOString())}::timestamptz[])
          AS r(id, lapsed_before)),
      prior AS (
        SELECT m.id, m.claimed_at, request.lapsed_before FROM messages m JOIN request USING (id)
        WHERE m.status = 'queued'
        ORDER BY m.id FOR UPDATE OF m ${skipLocked ? Prisma.sql`SKIP LOCKED` : Prisma.empty})
      UPDATE messages m SET claimed_at = ${now}
      FROM prior
      WHERE m.id = prior.id AND m.status = 'queued' AND (prior.claimed_at IS NULL OR prior.claimed_at < prior.lapsed_before)
      RETURNING m.id, m."to", m.text, m.encoding::text AS encoding, m.segments, prior.claimed_at AS previous_claim,
        (SELECT default_sender FROM account_settings s WHERE s.account_id = m.account_id) AS sender`;
  }

  /** A claim whose carrier call certainly did not happen is given back for the retry. */
  async releaseClaim(id: string): Promise<void> {
    await this.prisma.message.updateMany({ where: { id, status: 'queued' }, data: { claimedAt: null } });
  }

  async recordSubmitted(id: string, carrier: string, carrierMessageId: string): Promise<void> {
    const moved = await this.transitions.add({ id, status: 'sent', at: this.clock.now(), carrier, carrierMessageId });
    if (moved) return;
    // A delivery report overtook the submit acknowledgement, or the message failed meanwhile;
    // keep the carrier's id all the same.
    await this.prisma.message.updateMany({ where: { id, carrierMessageId: null }, data: { carrier, carrierMessageId } });
  }

  async recordFailed(id: string, error: { code: string; message: string }): Promise<void> {
    await this.transitions.add({ id, status: 'failed', at: this.clock.now(), error });
  }

  /**
   * Applies a carrier's delivery report. Statuses only move forward, so a late or repeated
   * report changes nothing; a report for a message the carrier has not acknowledged yet raises
   * UnknownCarrierMessageError, for the carrier to retry it. Concurrent reports share statements.
   */
  async applyDeliveryReport(carrier: string, report: DeliveryReport): Promise<void> {
    const id = await this.reportedMessages.add({ carrier, carrierMessageId: report.carrierMessageId, reference: report.reference ?? null });
    if (!id) throw new UnknownCarrierMessageError(`no message for ${carrier} id ${report.carrierMessageId}`);
    // A report can overtake the record of the submit (or the worker that would record it died):
    // the carrier's id then comes from the report.
    const identity = { carrier, carrierMessageId: report.carrierMessageId };
    if (report.status === 'delivered') {
      await this.transitions.add({ id, status: 'delivered', at: report.at, ...identity });
      return;
    }
    const error = report.error ?? { code: 'carrier_error', message: 'The carrier reported a failure' };
    await this.transitions.add({ id, status: 'failed', at: report.at, error, ...identity });
  }

  private async findReported(reports: { carrier: string; carrierMessageId: string; reference: string | null }[]): Promise<(string | null)[]> {
    const rows = await this.prisma.$queryRaw<{ ord: bigint; id: string | null }[]>`
      SELECT r.ord, COALESCE(
        (SELECT m.id FROM messages m WHERE m.id = r.reference),
        (SELECT m.id FROM messages m WHERE m.carrier = r.carrier AND m.carrier_message_id = r.carrier_message_id LIMIT 1)) AS id
      FROM unnest(${reports.map((r) => r.carrier)}::text[], ${reports.map((r) => r.carrierMessageId)}::text[], ${reports.map((r) => r.reference)}::text[])
        WITH ORDINALITY AS r(carrier, carrier_message_id, reference, ord)`;
    const found = new Map(rows.map((row) => [Number(row.ord), row.id]));
    return reports.map((_, index) => found.get(index + 1) ?? null);
  }

  /**
   * Moves messages forward and writes each one's event, in one statement for the whole batch:
   * a message that has already moved on is left alone and gets no event. Rows are locked in id
   * order, so batches running side by side cannot deadlock. A message twice in one batch (a
   * repeated report) goes through a second statement, which then finds it moved on.
   */
  private async transitionMany(changes: Transition[]): Promise<boolean[]> {
    const seen = new Set<string>();
    const first = changes.map((change) => !seen.has(change.id) && Boolean(seen.add(change.id)));
    const batch = changes.filter((_, index) => first[index]);
    const moved = new Set(await this.applyTransitions(batch));
    const repeats = changes.filter((_, index) => !first[index]);
    const repeatsMoved = repeats.length > 0 ? await this.transitionMany(repeats) : [];
    let repeat = 0;
    return changes.map((change, index) => (first[index] ? moved.has(change.id) : repeatsMoved[repeat++]!));
  }

  private async applyTransitions(changes: Transition[]): Promise<string[]> {
    const column = <T>(pick: (change: Transition) => T) => changes.map(pick);
    const rows = await this.prisma.$queryRaw<{ message_id: string }[]>`
      WITH change AS (
        SELECT * FROM unnest(
          ${column((c) => c.id)}::text[], ${column((c) => c.status)}::text[], ${column((c) => c.at.toISOString())}::text[],
          ${column((c) => c.carrier ?? null)}::text[], ${column((c) => c.carrierMessageId ?? null)}::text[],
          ${column((c) => c.error?.code ?? null)}::text[], ${column((c) => c.error?.message ?? null)}::text[],
          ${column(() => newId('evt'))}::text[])
          AS c(id, status, at, carrier, carrier_message_id, error_code, error_message, event_id)),
      target AS (
        SELECT m.id FROM messages m JOIN change c USING (id)
        WHERE m.status = 'queued' OR (m.status = 'sent' AND c.status <> 'sent')
        ORDER BY m.id FOR UPDATE OF m),
      moved AS (
        UPDATE messages m SET
          status = c.status::"MessageStatus",
          sent_at = CASE WHEN c.status = 'sent' THEN c.at::timestamptz ELSE COALESCE(m.sent_at, CASE WHEN c.carrier IS NOT NULL THEN c.at::timestamptz END) END,
          delivered_at = CASE WHEN c.status = 'delivered' THEN c.at::timestamptz ELSE m.delivered_at END,
          failed_at = CASE WHEN c.status = 'failed' THEN c.at::timestamptz ELSE m.failed_at END,
          error_code = COALESCE(c.error_code, m.error_code),
          error_message = COALESCE(c.error_message, m.error_message),
          carrier = COALESCE(m.carrier, c.carrier),
          carrier_message_id = COALESCE(m.carrier_message_id, c.carrier_message_id)
        FROM change c, target
        WHERE m.id = c.id AND target.id = m.id AND (m.status = 'queued' OR (m.status = 'sent' AND c.status <> 'sent'))
        RETURNING m.id, m.account_id, m.campaign_id, m."to", c.status, c.at, c.error_code, c.error_message, c.event_id)
      INSERT INTO events (id, account_id, type, payload, campaign_id, message_id, created_at)
      SELECT event_id, account_id, 'message.' || status,
        jsonb_build_object('event', 'message.' || status, 'message', id, 'to', "to", 'status', status, 'campaign', campaign_id)
          || CASE status
               WHEN 'sent' THEN jsonb_build_object('sent_at', at)
               WHEN 'delivered' THEN jsonb_build_object('delivered_at', at)
               ELSE jsonb_build_object('failed_at', at, 'error', jsonb_build_object('code', error_code, 'message', error_message))
             END,
        campaign_id, id, at::timestamptz
      FROM moved
      RETURNING message_id`;
    this.countTransitions(changes, rows);
    return rows.map((row) => row.message_id);
  }

  /** The metrics of the messages that did move (one row per moved message). */
  private countTransitions(changes: Transition[], moved: { message_id: string }[]): void {
    const movedIds = new Set(moved.map((row) => row.message_id));
    for (const change of changes) if (movedIds.has(change.id)) this.metrics.messageTransitions.inc({ status: change.status });
  }

  /**
   * Stores a reply, linked to the latest message the same account sent to that number, with
   * its `message.replied` event; a STOP or START reply also opts the number out of (or back into)
   * that account's messages. A carrier redelivering the same inbound message changes nothing.
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
        await this.optOuts.applyReply(tx, replied.accountId, inbound.from, inbound.text, inbound.at);
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

  /** When the oldest message still waiting for the carrier was accepted. */
  async oldestQueued(): Promise<Date | null> {
    const oldest = await this.prisma.message.findFirst({ where: { status: 'queued' }, orderBy: { createdAt: 'asc' }, select: { createdAt: true } });
    return oldest?.createdAt ?? null;
  }

  private async writeEvent(tx: Tx, message: EventSubject, type: MessageEventType, payload: Prisma.InputJsonObject, at: Date) {
    await tx.event.create({
      data: { id: newId('evt'), accountId: message.account_id, type, payload, campaignId: message.campaign_id, messageId: message.id, createdAt: at },
    });
  }
}

function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}

function isUniqueViolation(error: unknown): boolean {
  return error instanceof Prisma.PrismaClientKnownRequestError && error.code === 'P2002';
}
