import { createHash } from 'node:crypto';
import { analyzeText } from '../../carriers/encoding.js';
import { isUniqueViolation } from '../../db/prisma-errors.js';
import { ValidationError } from '../../errors.js';
import type { PrismaClient } from '../../generated/prisma/client.js';
import type { MessageSendJobs } from '../../jobs/message-send.job.js';
import { Batcher } from '../../lib/batcher.js';
import type { Clock } from '../../lib/clock.js';
import { newId } from '../../lib/ids.js';
import type { SealedBox } from '../../lib/sealed-box.js';
import { parseInput } from '../../lib/validation.js';
import { findCampaign } from '../campaigns/campaign-lookup.js';
import type { FraudGuard } from '../fraud-guard/fraud-guard.js';
import type { LivePublisher } from '../live/live-events.js';
import { type OptOuts, optedOutError } from '../opt-outs/opt-outs.js';
import type { AccountQuotas } from '../quotas/account-quotas.js';
import type { AccountSenders } from '../senders/account-senders.js';
import type { SenderChoice } from '../senders/sender-choice.js';
import { type AcceptedRow, acceptanceOf, type MessageAcceptance } from './message-acceptance.js';
import { type InsertedMessageRow, insertMessageRows, reservationsOf } from './message-rows.js';
import { messageTiming, timingRulesOf } from './message-timing.js';
import { IDEMPOTENCY_WINDOW_MS, idempotencyKeyInput, type SendInput, sendInput } from './send-input.js';

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
  quotas: AccountQuotas;
  senders: AccountSenders;
  senderChoice: SenderChoice;
  /** Seals the real text of a message stored masked (`sendMasked`). */
  textBox: SealedBox;
  fraudGuard: FraudGuard;
}

/** A message whose stored text hides what the carrier gets (a verification's code). */
export interface MaskedSend {
  id: string;
  to: string;
  /** What the carrier gets, kept sealed until the hand-over. */
  text: string;
  /** What Tern stores and shows. */
  maskedText: string;
  validitySeconds: number;
}

/**
 * Accepts messages for sending: each is committed in PostgreSQL before the caller hears 202,
 * then handed to the send queue. Should Redis not take the job, the recovery sweep enqueues it later.
 */
export class MessageSending {
  // One acceptance batch at a time: sends arriving meanwhile wait a few milliseconds and share
  // the next one, so that send jobs (made per batch) carry many messages under load.
  private readonly accepted = new Batcher((messages: AcceptedRow[]) => this.insertAndEnqueue(messages), {
    maxBatch: 100,
    maxInFlight: 1,
  });
  private readonly prisma: PrismaClient;
  private readonly clock: Clock;
  private readonly sendJobs: MessageSendJobs;
  private readonly optOuts: OptOuts;
  private readonly live: LivePublisher;
  private readonly quotas: AccountQuotas;
  private readonly input: ReturnType<typeof sendInput>;
  private readonly routes: RouteCoverage;
  private readonly senders: AccountSenders;
  private readonly textBox: SealedBox;
  private readonly senderChoice: SenderChoice;
  private readonly fraudGuard: FraudGuard;

  constructor(options: MessageSendingOptions) {
    ({
      routes: this.routes,
      prisma: this.prisma,
      clock: this.clock,
      sendJobs: this.sendJobs,
      optOuts: this.optOuts,
      live: this.live,
      quotas: this.quotas,
      senders: this.senders,
      textBox: this.textBox,
      senderChoice: this.senderChoice,
      fraudGuard: this.fraudGuard,
    } = options);
    this.input = sendInput(this.clock);
  }

  /** An approved sender if it names one, a country the account may send to, then a route that covers the number. */
  private async assertDeliverable(message: AcceptedRow): Promise<void> {
    const { accountId, to, sender } = message;
    if (sender) await this.senders.assertApproved(accountId, sender, to);
    await this.quotas.assertDestinationAllowed(accountId, to);
    if (!(await this.routes.covers(to, accountId)))
      throw new ValidationError(
        [{ field: 'to', issue: 'no_route' }],
        'No route covers this destination: the operator has configured no carrier for it (the number itself may be valid); ask the operator',
      );
  }

  /**
   * The sender each message goes from, chosen before it is stored so that the answer shows it
   * (set on the message): its `from`, else the account's default sender or pool
   * (docs/messages.md, Which sender a message goes from), in one choice for the batch. A message
   * none of whose senders its country allows gets a 422 `no_compliant_sender`, on `from` when it
   * named one.
   */
  private async chooseSenders(messages: AcceptedRow[]): Promise<(ValidationError | null)[]> {
    const senders = await this.senderChoice.chooseAll(
      this.prisma,
      messages.map(({ accountId, sender, to }) => ({ accountId, from: sender ?? null, to })),
    );
    return messages.map((message, index) => {
      const sender = senders[index]!;
      const named = message.sender ?? null;
      if (sender !== 'refused') {
        message.sender = sender;
        return null;
      }
      return new ValidationError(
        [{ field: named ? 'from' : 'to', issue: 'no_compliant_sender' }],
        named
          ? `from: ${named} cannot reach this number's country (its sender rules, or the countries the sender is approved for)`
          : 'No sender of the account may reach this number’s country: name a `from` it allows, or ask the operator for one',
      );
    });
  }

  async send(accountId: string, input: unknown, key?: string | null): Promise<MessageAcceptance> {
    const data = parseInput(this.input, input);
    if (key !== undefined && key !== null && !idempotencyKeyInput.safeParse(key).success) {
      throw new ValidationError([
        { field: 'Idempotency-Key', issue: key.length === 0 ? 'too_short' : 'too_long' },
      ]);
    }
    const campaignId = data.campaign ?? null;
    if (campaignId && !(await findCampaign(this.prisma, accountId, campaignId))) {
      throw new ValidationError([{ field: 'campaign', issue: 'not_found' }]);
    }
    const { encoding, segments } = analyzeText(data.message);
    const now = this.clock.now();
    const message: AcceptedRow = {
      id: newId('msg'),
      accountId,
      campaignId,
      contactId: null,
      to: data.to,
      text: data.message,
      encoding,
      segments,
      createdAt: now,
      sender: data.from ?? null,
      ...(await this.timing(accountId, data, now)),
    };
    if (key) return this.sendOnce(message, key, data);
    await this.assertDeliverable(message);
    await this.fraudGuard.assertAllowed(message);
    const failure = await this.accepted.add(message);
    if (failure) throw failure;
    return acceptanceOf(message, false);
  }

  /**
   * Sends at once on the ordinary path (senders, countries, routes, the fraud guard, opt-outs, quotas), outside
   * any send window: the stored text is `maskedText`, the carrier's is sealed beside it.
   */
  async sendMasked(accountId: string, send: MaskedSend): Promise<void> {
    const { encoding, segments } = analyzeText(send.text);
    const message: AcceptedRow = {
      id: send.id,
      accountId,
      campaignId: null,
      contactId: null,
      to: send.to,
      text: send.maskedText,
      sealedText: this.textBox.seal(send.id, send.text),
      encoding,
      segments,
      createdAt: this.clock.now(),
      sender: null,
      status: 'queued',
      sendAt: null,
      releaseAt: null,
      validitySeconds: send.validitySeconds,
    };
    await this.assertDeliverable(message);
    await this.fraudGuard.assertAllowed(message);
    const failure = await this.accepted.add(message);
    if (failure) throw failure;
  }

  /**
   * When the message goes: at once, at its send_at, or, if it asks to respect the account's send
   * window, at the window's next opening in the account's time zone (then, and only then, are the
   * settings read here; otherwise the INSERT takes the account's validity itself). Its validity
   * counts from when it may first go out, its release time (message-rows.ts).
   */
  private async timing(
    accountId: string,
    data: SendInput,
    now: Date,
  ): Promise<Pick<AcceptedRow, 'status' | 'sendAt' | 'releaseAt' | 'validitySeconds'>> {
    const sendAt = data.sendAt ?? null;
    const validitySeconds = data.validity ?? null;
    if (!data.respectSendWindow) {
      return { status: sendAt ? 'scheduled' : 'queued', sendAt, releaseAt: sendAt, validitySeconds };
    }
    const rules = await timingRulesOf(this.prisma, accountId, { validitySeconds });
    const timing = messageTiming({ now, sendAt, rules });
    return { status: timing.status, sendAt, releaseAt: timing.releaseAt, validitySeconds };
  }

  /** A send with an Idempotency-Key: the same key and request within 24 hours answer the first acceptance again. */
  private async sendOnce(message: AcceptedRow, key: string, data: SendInput): Promise<MessageAcceptance> {
    const { accountId, createdAt: now } = message;
    const requestHash = createHash('sha256')
      .update(
        JSON.stringify([
          message.to,
          message.text,
          message.campaignId,
          message.sender,
          data.sendAt?.toISOString() ?? null,
          data.validity ?? null,
          data.respectSendWindow ?? false,
        ]),
      )
      .digest('hex');
    const replay = await this.replay(accountId, key, requestHash, now);
    if (replay) return replay;
    // After the replay: a send accepted before the opt-out (or a change of countries or routes) still answers as it did.
    await this.assertDeliverable(message);
    const [refused] = await this.chooseSenders([message]);
    if (refused) throw refused;
    await this.optOuts.assertReachable(accountId, message.to);
    await this.fraudGuard.assertAllowed(message);
    let inserted: InsertedMessageRow[];
    try {
      inserted = await this.prisma.$transaction(async (tx) => {
        await tx.idempotencyKey.deleteMany({
          where: { accountId, key, createdAt: { lte: new Date(now.getTime() - IDEMPOTENCY_WINDOW_MS) } },
        });
        const rows = await insertMessageRows(tx, [message]);
        // No row: the account had no room, and the key stays free for a retry once it has.
        if (rows.length > 0)
          await tx.idempotencyKey.create({
            data: { accountId, key, requestHash, messageId: message.id, createdAt: now },
          });
        return rows;
      });
    } catch (error) {
      // Another request with the same key won the race: answer as it did.
      const raced = isUniqueViolation(error) ? await this.replay(accountId, key, requestHash, now) : null;
      if (raced) return raced;
      throw error;
    }
    if (inserted.length === 0) throw await this.quotas.refusal(accountId, message.segments);
    await this.quotas.noteReserved(reservationsOf(inserted));
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
        message: {
          select: {
            id: true,
            to: true,
            campaignId: true,
            sendAt: true,
            status: true,
            releaseAt: true,
            sender: true,
          },
        },
      },
    });
    if (!existing || existing.createdAt.getTime() <= now.getTime() - IDEMPOTENCY_WINDOW_MS) return null;
    if (existing.requestHash !== requestHash)
      throw new ValidationError([{ field: 'Idempotency-Key', issue: 'reused' }]);
    const { message } = existing;
    const scheduled = message.sendAt !== null || message.status === 'scheduled';
    return {
      id: message.id,
      status: scheduled ? 'scheduled' : 'queued',
      to: message.to,
      campaignId: message.campaignId,
      sendAt: message.sendAt,
      waitsUntil: scheduled ? (message.releaseAt ?? message.sendAt) : null,
      from: message.sender,
      replayed: true,
    };
  }

  /**
   * Concurrent sends without an idempotency key share one choice of senders, one opt-out check,
   * one multi-row INSERT and one `addBulk`: the commit and the round trips are most of a send's cost, not the rows. Should
   * the INSERT fail, or an account of the batch lack room for all of its messages, each of those
   * messages is tried alone, so that one bad row or one send over a quota fails only its own request.
   */
  private async insertAndEnqueue(batch: AcceptedRow[]): Promise<(Error | null)[]> {
    const [refused, optedOut] = await Promise.all([this.chooseSenders(batch), this.optOuts.optedOut(batch)]);
    const messages = batch.filter((_, index) => !optedOut[index] && !refused[index]);
    const results = messages.length > 0 ? await this.insertAndEnqueueReachable(messages) : [];
    let result = 0;
    return batch.map(
      (_, index) => refused[index] ?? (optedOut[index] ? optedOutError() : results[result++]!),
    );
  }

  private async insertAndEnqueueReachable(messages: AcceptedRow[]): Promise<(Error | null)[]> {
    let insertedIds: Set<string>;
    try {
      insertedIds = await this.insertMessages(messages);
    } catch (error) {
      if (messages.length === 1) return [asError(error)];
      return this.insertEachAlone(messages);
    }
    const inserted = messages.filter((message) => insertedIds.has(message.id));
    await this.acceptInserted(inserted);
    if (inserted.length === messages.length) return messages.map(() => null);
    const left = messages.filter((message) => !insertedIds.has(message.id));
    const leftResults = await this.retryRefused(left);
    const resultOf = new Map(left.map((message, index) => [message.id, leftResults[index]!]));
    return messages.map((message) => resultOf.get(message.id) ?? null);
  }

  /**
   * The messages whose account had no room for all of its batch: of an account with several,
   * those that would fit now are tried alone, where each reservation decides exactly; the others
   * are refused from one read of their accounts' standing, so that a send over a quota costs one
   * statement, not three.
   */
  private async retryRefused(left: AcceptedRow[]): Promise<(Error | null)[]> {
    const standings = await this.quotas.standings(left.map((message) => message.accountId));
    const perAccount = new Map<string, number>();
    for (const { accountId } of left) perAccount.set(accountId, (perAccount.get(accountId) ?? 0) + 1);
    const fits = (message: AcceptedRow) => {
      const standing = standings.get(message.accountId);
      return standing !== undefined && message.segments <= Math.min(standing.dayRoom, standing.monthRoom);
    };
    const alone = left.filter((message) => perAccount.get(message.accountId)! > 1 && fits(message));
    const aloneResults = await this.insertEachAlone(alone);
    const resultOf = new Map(alone.map((message, index) => [message.id, aloneResults[index]!]));
    return left.map((message) =>
      resultOf.has(message.id)
        ? resultOf.get(message.id)!
        : this.quotas.refusalOf(standings.get(message.accountId), message.segments),
    );
  }

  /** Each message in a statement of its own; the inserted ones published and enqueued together. */
  private async insertEachAlone(messages: AcceptedRow[]): Promise<(Error | null)[]> {
    const alone = await Promise.all(
      messages.map(async (message) => {
        const inserted = await this.insertMessages([message]).catch(asError);
        if (inserted instanceof Error) return inserted;
        return inserted.has(message.id) ? null : this.quotas.refusal(message.accountId, message.segments);
      }),
    );
    await this.acceptInserted(messages.filter((_, index) => alone[index] === null));
    return alone;
  }

  private async acceptInserted(messages: AcceptedRow[]): Promise<void> {
    if (messages.length === 0) return;
    this.publishAccepted(messages);
    await this.enqueueQueued(messages);
  }

  /**
   * Published before the send job exists, on the connection the job is added on: Redis keeps
   * their order, so no subscriber hears of a message being sent before hearing it was queued.
   */
  private publishAccepted(messages: AcceptedRow[]): void {
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
  private enqueueQueued(messages: AcceptedRow[]): Promise<unknown> {
    return this.sendJobs.enqueue(messages.filter((m) => m.status === 'queued').map((m) => m.id));
  }

  /** The ids inserted: a message left out is one whose account had no room for it. */
  private async insertMessages(messages: AcceptedRow[]): Promise<Set<string>> {
    const inserted = await insertMessageRows(this.prisma, messages);
    await this.quotas.noteReserved(reservationsOf(inserted));
    return new Set(inserted.map((row) => row.id));
  }
}

function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}
