import { createHash } from 'node:crypto';
import { z } from 'zod';
import { isUniqueViolation } from '../../db/prisma-errors.js';
import { ValidationError } from '../../errors.js';
import type { PrismaClient } from '../../generated/prisma/client.js';
import type { MessageSendJobs } from '../../jobs/message-send.job.js';
import { Batcher } from '../../lib/batcher.js';
import type { Clock } from '../../lib/clock.js';
import { newId } from '../../lib/ids.js';
import { e164 } from '../../lib/phone.js';
import { parseInput } from '../../lib/validation.js';
import { findCampaign } from '../campaigns/campaign-lookup.js';
import type { LivePublisher } from '../live/live-events.js';
import { type OptOuts, optedOutError } from '../opt-outs/opt-outs.js';
import { storedWindow } from '../settings/send-window.js';
import { analyzeText } from './encoding.js';
import { insertMessageRows, type NewMessageRow } from './message-rows.js';
import { messageText } from './message-text.js';
import {
  DEFAULT_MESSAGE_VALIDITY,
  messageTiming,
  messageValidityInput,
  sendAtInput,
} from './message-timing.js';

export const IDEMPOTENCY_WINDOW_MS = 24 * 60 * 60 * 1000;

/** A single send's fields; `sendAt` is checked against the clock, so the schema is made with it. */
export function sendInput(clock: Clock) {
  return z
    .object({
      to: e164,
      message: messageText.meta({ description: 'The text to send' }),
      campaign: z
        .string()
        .min(1)
        .max(64)
        .meta({ description: 'A campaign of the account to link the message to' })
        .nullish(),
      sendAt: sendAtInput(clock).nullish(),
      validity: messageValidityInput
        .meta({
          description:
            'Seconds from send_at (or now) until the message fails as expired if no carrier took it; the account’s message_validity when left out',
        })
        .nullish(),
      respectSendWindow: z
        .boolean()
        .meta({
          description: 'Wait for the account’s send window, as campaign messages do; false when left out',
        })
        .nullish(),
    })
    .meta({ description: 'One SMS to send' });
}

type SendInput = z.output<ReturnType<typeof sendInput>>;

export const idempotencyKeyInput = z.string().min(1).max(255).meta({
  description:
    'Makes a retry safe: the same key and request within 24 hours answer the first message again (Idempotent-Replayed: true) and send nothing new; the same key with another request is a 422 reused',
});

/** What a send answers: the message as it was accepted, also on an idempotent replay. */
export interface MessageAcceptance {
  id: string;
  /** `scheduled` when it waits for its send_at or its window, `queued` when it goes at once. */
  status: 'queued' | 'scheduled';
  to: string;
  campaignId: string | null;
  sendAt: Date | null;
  replayed: boolean;
}

/** Whether some carrier route covers a number; the carriers module answers from memory. */
export interface RouteCoverage {
  covers(to: string, accountId: string): Promise<boolean>;
}

export interface MessageSendingOptions {
  routes: RouteCoverage;
  prisma: PrismaClient;
  clock: Clock;
  sendJobs: MessageSendJobs;
  optOuts: OptOuts;
  live: LivePublisher;
}

/**
 * Accepts messages for sending: each is committed in PostgreSQL before the caller hears 202,
 * then handed to the send queue. Should Redis not take the job, the recovery sweep enqueues it later.
 */
export class MessageSending {
  // One acceptance batch at a time: sends arriving meanwhile wait a few milliseconds and share
  // the next one, so that send jobs (made per batch) carry many messages under load.
  private readonly accepted = new Batcher((messages: NewMessageRow[]) => this.insertAndEnqueue(messages), {
    maxBatch: 100,
    maxInFlight: 1,
  });
  private readonly prisma: PrismaClient;
  private readonly clock: Clock;
  private readonly sendJobs: MessageSendJobs;
  private readonly optOuts: OptOuts;
  private readonly live: LivePublisher;
  private readonly input: ReturnType<typeof sendInput>;
  private readonly routes: RouteCoverage;

  constructor(options: MessageSendingOptions) {
    ({
      routes: this.routes,
      prisma: this.prisma,
      clock: this.clock,
      sendJobs: this.sendJobs,
      optOuts: this.optOuts,
      live: this.live,
    } = options);
    this.input = sendInput(this.clock);
  }

  async send(accountId: string, input: unknown, key?: string | null): Promise<MessageAcceptance> {
    const data = parseInput(this.input, input);
    if (key !== undefined && key !== null && !idempotencyKeyInput.safeParse(key).success) {
      throw new ValidationError([
        { field: 'Idempotency-Key', issue: key.length === 0 ? 'too_short' : 'too_long' },
      ]);
    }
    if (!(await this.routes.covers(data.to, accountId)))
      throw new ValidationError([{ field: 'to', issue: 'no_route' }]);
    const campaignId = data.campaign ?? null;
    if (campaignId && !(await findCampaign(this.prisma, accountId, campaignId))) {
      throw new ValidationError([{ field: 'campaign', issue: 'not_found' }]);
    }
    const { encoding, segments } = analyzeText(data.message);
    const now = this.clock.now();
    const message: NewMessageRow = {
      id: newId('msg'),
      accountId,
      campaignId,
      contactId: null,
      to: data.to,
      text: data.message,
      encoding,
      segments,
      createdAt: now,
      ...(await this.timing(accountId, data, now)),
    };
    if (key) return this.sendOnce(message, key, data);
    const failure = await this.accepted.add(message);
    if (failure) throw failure;
    return acceptanceOf(message, false);
  }

  /**
   * When the message goes: at once, at its send_at, or, if it asks to respect the account's send
   * window, at the window's next opening in the account's time zone (then, and only then, are the
   * settings read here; otherwise the INSERT takes the account's validity itself).
   */
  private async timing(
    accountId: string,
    data: SendInput,
    now: Date,
  ): Promise<Pick<NewMessageRow, 'status' | 'sendAt' | 'releaseAt' | 'validitySeconds'>> {
    const sendAt = data.sendAt ?? null;
    const validitySeconds = data.validity ?? null;
    if (!data.respectSendWindow) {
      return { status: sendAt ? 'scheduled' : 'queued', sendAt, releaseAt: sendAt, validitySeconds };
    }
    const settings = await this.prisma.accountSettings.findUnique({
      where: { accountId },
      select: { timezone: true, sendWindow: true, messageValidity: true },
    });
    const timing = messageTiming({
      now,
      sendAt,
      validitySeconds: validitySeconds ?? settings?.messageValidity ?? DEFAULT_MESSAGE_VALIDITY,
      window: storedWindow(settings?.sendWindow),
      timeZone: settings?.timezone ?? 'UTC',
    });
    return { status: timing.status, sendAt, releaseAt: timing.releaseAt, validitySeconds };
  }

  /** A send with an Idempotency-Key: the same key and request within 24 hours answer the first acceptance again. */
  private async sendOnce(message: NewMessageRow, key: string, data: SendInput): Promise<MessageAcceptance> {
    const { accountId, createdAt: now } = message;
    const requestHash = createHash('sha256')
      .update(
        JSON.stringify([
          message.to,
          message.text,
          message.campaignId,
          data.sendAt?.toISOString() ?? null,
          data.validity ?? null,
          data.respectSendWindow ?? false,
        ]),
      )
      .digest('hex');
    const replay = await this.replay(accountId, key, requestHash, now);
    if (replay) return replay;
    // After the replay: a send accepted before the opt-out still answers as it did.
    await this.optOuts.assertReachable(accountId, message.to);
    try {
      await this.prisma.$transaction([
        this.prisma.idempotencyKey.deleteMany({
          where: { accountId, key, createdAt: { lte: new Date(now.getTime() - IDEMPOTENCY_WINDOW_MS) } },
        }),
        insertMessageRows(this.prisma, [message]),
        this.prisma.idempotencyKey.create({
          data: { accountId, key, requestHash, messageId: message.id, createdAt: now },
        }),
      ]);
    } catch (error) {
      // Another request with the same key won the race: answer as it did.
      const raced = isUniqueViolation(error) ? await this.replay(accountId, key, requestHash, now) : null;
      if (raced) return raced;
      throw error;
    }
    this.publishAccepted([message]);
    await this.enqueueQueued([message]);
    return acceptanceOf(message, false);
  }

  private async replay(
    accountId: string,
    key: string,
    requestHash: string,
    now: Date,
  ): Promise<MessageAcceptance | null> {
    const existing = await this.prisma.idempotencyKey.findUnique({
      where: { accountId_key: { accountId, key } },
      select: {
        requestHash: true,
        createdAt: true,
        message: { select: { id: true, to: true, campaignId: true, sendAt: true, status: true } },
      },
    });
    if (!existing || existing.createdAt.getTime() <= now.getTime() - IDEMPOTENCY_WINDOW_MS) return null;
    if (existing.requestHash !== requestHash)
      throw new ValidationError([{ field: 'Idempotency-Key', issue: 'reused' }]);
    const { message } = existing;
    return {
      id: message.id,
      status: message.sendAt || message.status === 'scheduled' ? 'scheduled' : 'queued',
      to: message.to,
      campaignId: message.campaignId,
      sendAt: message.sendAt,
      replayed: true,
    };
  }

  /**
   * Concurrent sends without an idempotency key share one opt-out check, one multi-row INSERT and
   * one `addBulk`: the commit and the round trips are most of a send's cost, not the rows. Should
   * the INSERT fail, each message is tried alone, so that one bad row fails only its own request.
   */
  private async insertAndEnqueue(batch: NewMessageRow[]): Promise<(Error | null)[]> {
    const optedOut = await this.optOuts.optedOut(batch);
    const messages = batch.filter((_, index) => !optedOut[index]);
    const results = messages.length > 0 ? await this.insertAndEnqueueReachable(messages) : [];
    let result = 0;
    return batch.map((_, index) => (optedOut[index] ? optedOutError() : results[result++]!));
  }

  private async insertAndEnqueueReachable(messages: NewMessageRow[]): Promise<(Error | null)[]> {
    try {
      await this.insertMessages(messages);
    } catch (error) {
      if (messages.length === 1) return [asError(error)];
      const alone = await Promise.all(
        messages.map((message) => this.insertMessages([message]).then(() => null, asError)),
      );
      const inserted = messages.filter((_, index) => alone[index] === null);
      this.publishAccepted(inserted);
      await this.enqueueQueued(inserted);
      return alone;
    }
    this.publishAccepted(messages);
    await this.enqueueQueued(messages);
    return messages.map(() => null);
  }

  /**
   * Published before the send job exists, on the connection the job is added on: Redis keeps
   * their order, so no subscriber hears of a message being sent before hearing it was queued.
   */
  private publishAccepted(messages: NewMessageRow[]): void {
    this.live.messages(
      messages.map(({ id, accountId, to, campaignId, status }) => ({
        id,
        accountId,
        to,
        campaignId,
        status,
      })),
    );
  }

  /** Scheduled messages wait for the release of their due time; the others go to the send queue now. */
  private enqueueQueued(messages: NewMessageRow[]): Promise<unknown> {
    return this.sendJobs.enqueue(messages.filter((m) => m.status === 'queued').map((m) => m.id));
  }

  private async insertMessages(messages: NewMessageRow[]): Promise<void> {
    await insertMessageRows(this.prisma, messages);
  }
}

function acceptanceOf(message: NewMessageRow, replayed: boolean): MessageAcceptance {
  return {
    id: message.id,
    status: message.status,
    to: message.to,
    campaignId: message.campaignId,
    sendAt: message.sendAt,
    replayed,
  };
}

function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}
