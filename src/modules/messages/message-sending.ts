import { analyzeText } from '../../carriers/encoding.js';
import { isUniqueViolation } from '../../db/prisma-errors.js';
import { ValidationError } from '../../errors.js';
import type { PrismaClient } from '../../generated/prisma/client.js';
import type { MessageSendJobs } from '../../jobs/message-send.job.js';
import type { Clock } from '../../lib/clock.js';
import { newId } from '../../lib/ids.js';
import type { SealedBox } from '../../lib/sealed-box.js';
import { parseInput } from '../../lib/validation.js';
import { findCampaign } from '../campaigns/campaign-lookup.js';
import type { FraudGuard } from '../fraud-guard/fraud-guard.js';
import type { LivePublisher } from '../live/live-events.js';
import type { OptOuts } from '../opt-outs/opt-outs.js';
import type { AccountQuotas } from '../quotas/account-quotas.js';
import type { AccountSenders } from '../senders/account-senders.js';
import type { SenderChoice } from '../senders/sender-choice.js';
import { AcceptanceBatches } from './acceptance-batches.js';
import { chooseSenders } from './accepted-senders.js';
import { insertWithKey, keyedSendOf, replayOf } from './idempotency-keys.js';
import { type AcceptedRow, acceptanceOf, type MessageAcceptance } from './message-acceptance.js';
import { type InsertedMessageRow, reservationsOf } from './message-rows.js';
import { messageTiming, timingRulesOf } from './message-timing.js';
import { idempotencyKeyInput, type SendInput, sendInput } from './send-input.js';

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
  private readonly batches: AcceptanceBatches;
  private readonly prisma: PrismaClient;
  private readonly clock: Clock;
  private readonly optOuts: OptOuts;
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
      optOuts: this.optOuts,
      quotas: this.quotas,
      senders: this.senders,
      textBox: this.textBox,
      senderChoice: this.senderChoice,
      fraudGuard: this.fraudGuard,
    } = options);
    this.input = sendInput(this.clock);
    this.batches = new AcceptanceBatches(options);
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
    const failure = await this.batches.add(message);
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
    const failure = await this.batches.add(message);
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
    const keyed = keyedSendOf(message, key, data);
    const replay = await replayOf(this.prisma, keyed);
    if (replay) return replay;
    // After the replay: a send accepted before the opt-out (or a change of countries or routes) still answers as it did.
    await this.assertDeliverable(message);
    const [refused] = await chooseSenders(this.senderChoice, this.prisma, [message]);
    if (refused) throw refused;
    await this.optOuts.assertReachable(message.accountId, message.to);
    await this.fraudGuard.assertAllowed(message);
    let inserted: InsertedMessageRow[];
    try {
      inserted = await insertWithKey(this.prisma, keyed, message);
    } catch (error) {
      // Another request with the same key won the race: answer as it did.
      const raced = isUniqueViolation(error) ? await replayOf(this.prisma, keyed) : null;
      if (raced) return raced;
      throw error;
    }
    if (inserted.length === 0) throw await this.quotas.refusal(message.accountId, message.segments);
    await this.quotas.noteReserved(reservationsOf(inserted));
    await this.batches.acceptInserted([message]);
    return acceptanceOf(message, false);
  }
}
