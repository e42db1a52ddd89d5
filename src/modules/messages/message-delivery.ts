import type { Encoding } from '../../carriers/encoding.js';
import { sqlRelation } from '../../db/sql-relation.js';
import { Prisma, type PrismaClient } from '../../generated/prisma/client.js';
import type { MessageSendJobs } from '../../jobs/message-send.job.js';
import { Batcher } from '../../lib/batcher.js';
import type { Clock } from '../../lib/clock.js';
import { type SealedBox, UnsealError } from '../../lib/sealed-box.js';
import type { CountrySenderRules } from '../senders/country-sender-rules.js';
import { NO_COMPLIANT_SENDER } from '../senders/sender-choice.js';
import { countCarrierPins } from '../stats/stats-rollups.js';
import type { MessageSubject } from '../webhooks/webhook-events.js';
import { type MessageStatusChanges, STATEMENT_BATCHING } from './message-status-changes.js';
import { EXPIRED } from './message-timing.js';
import { senderAddress } from './reply-routing.js';

/** A message pinned to a carrier, as the pinning statement's RETURNING gives it (`t`: before, `m`: after). */
const PINNED = sqlRelation('pinned', {
  account_id: 'm.account_id',
  created_at: 'm.created_at',
  campaign_id: 'm.campaign_id',
  country: 'm.country',
  status: 'm.status',
  segments: 'm.segments',
  from_carrier: 't.carrier',
  carrier: 'm.carrier',
});

const PINNED_PAGE = 1_000;
const CARRIER_REMOVED = {
  code: 'carrier_removed',
  message: 'The carrier this message was left with (its hand-over outcome unknown) was removed',
};

/** A message claimed by a worker for its carrier call, with what the carrier needs. */
export interface ClaimedMessage extends MessageSubject {
  text: string;
  encoding: Encoding;
  segments: number;
  /** The address it goes out from, recorded with the claim: replies are matched on it. */
  sender: string | null;
  /** The number's country, as recorded at acceptance; null when its calling code names none. */
  country: string | null;
  /** A previous claim had expired: a worker died during the carrier call, outcome unknown. */
  reclaimed: boolean;
  /** When it expires; null for no limit. */
  expiresAt: Date | null;
  accountId: string;
  /** The carrier an earlier hand-over of unknown outcome left it with; null when any may take it. */
  pinnedCarrier: string | null;
}

type ClaimRow = Omit<
  ClaimedMessage,
  'campaignId' | 'reclaimed' | 'expiresAt' | 'accountId' | 'pinnedCarrier'
> & {
  campaign_id: string | null;
  previous_claim: Date | null;
  expires_at: Date | null;
  account_id: string;
  carrier: string | null;
  sealed_text: string | null;
};

export interface ClaimRequest {
  id: string;
  leaseMs: number;
}

export interface MessageDeliveryOptions {
  prisma: PrismaClient;
  clock: Clock;
  statusChanges: MessageStatusChanges;
  sendJobs: MessageSendJobs;
  carrierSender: string | null;
  /** Opens a message's sealed text (message-rows.ts), bound to its id. */
  textBox: SealedBox;
  senderRules: CountrySenderRules;
}

const SEALED_TEXT_UNREADABLE = {
  code: 'sealed_text_unreadable',
  message:
    'The text for the carrier was sealed with another key than this process has (WEBHOOK_SECRET_KEY changed)',
};

/**
 * A message's way to the carrier, used only by the workers and the recovery sweep: the claim
 * that makes each message go to the carrier once, and what the carrier's answer makes of it.
 */
export class MessageDelivery {
  private readonly claims = new Batcher(
    (requests: ClaimRequest[]) => this.claimMany(requests),
    STATEMENT_BATCHING,
  );

  private readonly carrierSender: string | null;

  /** `carrierSender` is what the carrier sends from for an account without a default sender. */
  private readonly prisma: PrismaClient;
  private readonly clock: Clock;
  private readonly statusChanges: MessageStatusChanges;
  private readonly sendJobs: MessageSendJobs;
  private readonly textBox: SealedBox;
  private readonly senderRules: CountrySenderRules;

  constructor(options: MessageDeliveryOptions) {
    ({
      prisma: this.prisma,
      clock: this.clock,
      statusChanges: this.statusChanges,
      sendJobs: this.sendJobs,
      textBox: this.textBox,
      senderRules: this.senderRules,
    } = options);
    const { carrierSender } = options;
    this.carrierSender = senderAddress(carrierSender);
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
    const row =
      (await this.claims.add({ id, leaseMs })) ?? (await this.claimRows([{ id, leaseMs }], false))[0];
    if (!row) return null;
    const {
      campaign_id: campaignId,
      previous_claim: previousClaim,
      expires_at: expiresAt,
      account_id: accountId,
      carrier: pinnedCarrier,
      sealed_text: sealedText,
      ...message
    } = row;
    const claimed = {
      ...message,
      campaignId,
      expiresAt,
      accountId,
      pinnedCarrier,
      reclaimed: previousClaim !== null,
    };
    if (sealedText === null) return claimed;
    try {
      return { ...claimed, text: this.textBox.unseal(claimed.id, sealedText) };
    } catch (error) {
      if (!(error instanceof UnsealError)) throw error;
      await this.recordFailed(claimed, SEALED_TEXT_UNREADABLE);
      return null;
    }
  }

  /**
   * A claim whose carrier call did not take the message is given back for the retry; `pinTo`
   * names the carrier it must stay with when that carrier may have taken part of it.
   */
  async releaseClaim(id: string, pinTo: string | null = null): Promise<void> {
    if (pinTo) await this.setCarrier(id, pinTo, { releaseClaim: true, carrierMessageId: null });
    else await this.prisma.message.updateMany({ where: { id, status: 'queued' }, data: { claimedAt: null } });
  }

  /**
   * Sets a message's carrier outside a status change (a pin while queued, or the carrier's id
   * once its status moved on), moving its statistics to that carrier in the same statement so a
   * split by carrier stays equal to a count.
   */
  private async setCarrier(
    id: string,
    carrier: string,
    { releaseClaim, carrierMessageId }: { releaseClaim: boolean; carrierMessageId: string | null },
  ): Promise<void> {
    await this.prisma.$executeRaw`
      WITH target AS (
        SELECT id, carrier FROM messages
        WHERE id = ${id} AND CASE WHEN ${releaseClaim}::boolean THEN status = 'queued' ELSE carrier_message_id IS NULL END
        FOR UPDATE),
      ${PINNED.name} AS (
        UPDATE messages m SET carrier = ${carrier},
          claimed_at = CASE WHEN ${releaseClaim}::boolean THEN NULL ELSE m.claimed_at END,
          carrier_message_id = COALESCE(${carrierMessageId}::text, m.carrier_message_id)
        FROM target t WHERE m.id = t.id
        RETURNING ${PINNED.select}),
      ${countCarrierPins(PINNED)}
      SELECT 1`;
  }

  async recordSubmitted(message: MessageSubject, carrier: string, carrierMessageId: string): Promise<void> {
    const moved = await this.statusChanges.apply({
      message,
      status: 'sent',
      at: this.clock.now(),
      carrier,
      carrierMessageId,
    });
    if (moved) return;
    // A delivery report overtook the submit acknowledgement, or the message failed meanwhile;
    // keep the carrier's id all the same.
    await this.setCarrier(message.id, carrier, { releaseClaim: false, carrierMessageId });
  }

  /** A claimed message whose validity ran out before its carrier call fails as expired instead. */
  async failIfExpired(message: ClaimedMessage): Promise<boolean> {
    if (!message.expiresAt || message.expiresAt.getTime() > this.clock.now().getTime()) return false;
    await this.recordFailed(message, EXPIRED);
    return true;
  }

  /**
   * The country rules, applied once more before the carrier: to the carrier's own sender (a
   * message accepted without one of the account's), or a rule the operator changed since the
   * message was accepted. A sender none of them refuses goes on.
   */
  async failIfNoCompliantSender(message: ClaimedMessage): Promise<boolean> {
    if (message.sender === null) return false;
    await this.senderRules.ready();
    if (this.senderRules.allows(message.sender, message.country)) return false;
    await this.recordFailed(message, NO_COMPLIANT_SENDER);
    return true;
  }

  async recordFailed(message: MessageSubject, error: { code: string; message: string }): Promise<void> {
    await this.statusChanges.apply({ message, status: 'failed', at: this.clock.now(), error });
  }

  /**
   * Fails at once, with `carrier_removed`, the messages left pinned to a carrier the operator
   * removes (queued with it after a hand-over of unknown outcome: no other carrier may take them,
   * and this one never will): the same change, event and rollups as any failure; how many.
   */
  async failPinnedTo(carrier: string): Promise<number> {
    let failed = 0;
    for (;;) {
      const pinned = await this.prisma.message.findMany({
        where: { status: 'queued', carrier },
        select: { id: true, to: true, campaignId: true },
        orderBy: { id: 'asc' },
        take: PINNED_PAGE,
      });
      const moved = await Promise.all(
        pinned.map((message) =>
          this.statusChanges.apply({
            message,
            status: 'failed',
            at: this.clock.now(),
            error: CARRIER_REMOVED,
          }),
        ),
      );
      failed += moved.filter(Boolean).length;
      // None moved: each had moved on by itself (sent meanwhile), and the next page would be the same.
      if (pinned.length < PINNED_PAGE || !moved.some(Boolean)) return failed;
    }
  }

  /**
   * Queued messages no worker is on (never enqueued because Redis was away, or claimed by a
   * worker that died) are enqueued again; the number of them.
   */
  async recoverStranded(options: {
    unclaimedForMs: number;
    leaseMs: number;
    limit: number;
  }): Promise<number> {
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
    await this.sendJobs.enqueue(rows.map((row) => row.id));
    return rows.length;
  }

  /** When the oldest message still waiting for the carrier was accepted. */
  async oldestQueued(): Promise<Date | null> {
    const oldest = await this.prisma.message.findFirst({
      where: { status: 'queued' },
      orderBy: { createdAt: 'asc' },
      select: { createdAt: true },
    });
    return oldest?.createdAt ?? null;
  }

  private async claimMany(requests: ClaimRequest[]): Promise<(ClaimRow | undefined)[]> {
    const claimed = new Map((await this.claimRows(requests, true)).map((row) => [row.id, row]));
    return requests.map(({ id }) => {
      const row = claimed.get(id);
      // The same message asked for twice in one batch is claimed once.
      claimed.delete(id);
      return row;
    });
  }

  private claimRows(requests: ClaimRequest[], skipLocked: boolean) {
    return this.prisma.$queryRaw<ClaimRow[]>(
      claimStatement(requests, { now: this.clock.now(), carrierSender: this.carrierSender, skipLocked }),
    );
  }
}

/**
 * Claims the requested messages still queued and not claimed within their lease, answering them.
 * It finds them by id alone and reads their status from the locked row: asked for
 * `status = 'queued'`, a planner whose statistics say almost no message is queued (a table of
 * delivered messages, then a campaign queues 20,000) scans every queued message for each one
 * claimed. Only this statement touches the locked rows until it ends, so their status holds for
 * the UPDATE.
 */
export function claimStatement(
  requests: readonly ClaimRequest[],
  { now, carrierSender, skipLocked }: { now: Date; carrierSender: string | null; skipLocked: boolean },
): Prisma.Sql {
  return Prisma.sql`
    WITH request AS (
      SELECT * FROM unnest(${requests.map((r) => r.id)}::text[], ${requests.map((r) => new Date(now.getTime() - r.leaseMs).toISOString())}::timestamptz[])
        AS r(id, lapsed_before)),
    prior AS (
      SELECT m.id, m.status, m.claimed_at, request.lapsed_before FROM messages m JOIN request USING (id)
      ORDER BY m.id FOR UPDATE OF m ${skipLocked ? Prisma.sql`SKIP LOCKED` : Prisma.empty})
    UPDATE messages m SET claimed_at = ${now},
      sender = COALESCE(m.sender, (SELECT default_sender FROM account_settings s WHERE s.account_id = m.account_id), ${carrierSender})
    FROM prior
    WHERE m.id = prior.id AND prior.status = 'queued' AND (prior.claimed_at IS NULL OR prior.claimed_at < prior.lapsed_before)
    RETURNING m.id, m."to", m.campaign_id, m.text, m.encoding::text AS encoding, m.segments, prior.claimed_at AS previous_claim, m.sender,
      m.country, m.expires_at, m.account_id, m.carrier, m.sealed_text`;
}
