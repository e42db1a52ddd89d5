import type { Logger } from 'pino';
import { analyzeText } from '../../carriers/encoding.js';
import { perRowProbe } from '../../db/per-row-probe.js';
import { Prisma, type PrismaClient } from '../../generated/prisma/client.js';
import type { CampaignDispatchJobs } from '../../jobs/campaign-dispatch.job.js';
import type { MessageSendJobs } from '../../jobs/message-send.job.js';
import type { Clock } from '../../lib/clock.js';
import { newId } from '../../lib/ids.js';
import type { FraudGuard } from '../fraud-guard/fraud-guard.js';
import type { LivePublisher } from '../live/live-events.js';
import {
  insertMessageRows,
  type NewMessageRow,
  type ReservedSegments,
  reservationsOf,
} from '../messages/message-rows.js';
import { messageTiming, type TimingRules, timingRulesOf } from '../messages/message-timing.js';
import { contactOptedOut } from '../opt-outs/opt-outs.js';
import { type AccountQuotas, isAllowedDestination } from '../quotas/account-quotas.js';
import { withinQuota } from '../quotas/campaign-quota.js';
import { NO_COMPLIANT_SENDER, type SenderChoice } from '../senders/sender-choice.js';
import { renderTemplate } from '../templates/render-template.js';
import { type LockedCampaign, lockCampaign } from './campaign-rows.js';
import { moveCampaign } from './campaign-transitions.js';

type Tx = Prisma.TransactionClient;

interface PendingContact {
  id: string;
  phone: string;
  name: string | null;
  email: string | null;
  document: string | null;
  tags: string[];
  timezone: string | null;
  created_at: Date;
}

export interface DispatchOutcome {
  /** Messages created by this batch, to hand to the send queue. */
  messageIds: string[];
  /** When the next batch is due, or null when the campaign is no longer running. */
  next: { batch: number; delayMs: number } | null;
}

/** The messages a batch made, for the live updates once it has committed. */
interface DispatchedBatch {
  accountId: string;
  messages: { id: string; to: string; status: NewMessageRow['status'] }[];
  /** The account's counts after the batch's reservation, for the quota notices once it has committed. */
  reservations: Map<string, ReservedSegments>;
}

// Campaigns the recovery sweep looks at per round, of each kind.
const RECOVERY_LIMIT = 500;

export interface CampaignDispatchOptions {
  prisma: PrismaClient;
  clock: Clock;
  dispatchJobs: CampaignDispatchJobs;
  sendJobs: MessageSendJobs;
  live: LivePublisher;
  quotas: AccountQuotas;
  senderChoice: SenderChoice;
  fraudGuard: FraudGuard;
  logger: Logger;
}

/** Running campaigns, batch by batch: each batch's messages, the next batch's job, and the finish. */
export class CampaignDispatch {
  private readonly prisma: PrismaClient;
  private readonly clock: Clock;
  private readonly dispatchJobs: CampaignDispatchJobs;
  private readonly sendJobs: MessageSendJobs;
  private readonly live: LivePublisher;
  private readonly quotas: AccountQuotas;
  private readonly senderChoice: SenderChoice;
  private readonly fraudGuard: FraudGuard;
  private readonly logger: Logger;

  constructor(options: CampaignDispatchOptions) {
    ({
      prisma: this.prisma,
      clock: this.clock,
      dispatchJobs: this.dispatchJobs,
      sendJobs: this.sendJobs,
      live: this.live,
      quotas: this.quotas,
      senderChoice: this.senderChoice,
      fraudGuard: this.fraudGuard,
      logger: this.logger,
    } = options);
  }

  /**
   * Sends the next batch of a running campaign: contacts without a message get one, rendered
   * from the template. The campaign row is locked for the batch, so two dispatchers never
   * interleave, and the unique (campaign, contact) index makes a second message for a contact
   * impossible whatever happens around it. When no contact is left the campaign finishes.
   */
  async dispatchBatch(campaignId: string): Promise<DispatchOutcome> {
    const now = this.clock.now();
    const { outcome, dispatched } = await this.prisma.$transaction(
      (tx) => this.dispatchLocked(tx, campaignId, now),
      { timeout: 60_000 },
    );
    if (dispatched) {
      this.publish(campaignId, dispatched);
      await this.quotas.noteReserved(dispatched.reservations);
    }
    await this.sendJobs.enqueue(outcome.messageIds);
    if (outcome.next)
      await this.dispatchJobs.enqueueBatch(campaignId, outcome.next.batch, outcome.next.delayMs);
    return outcome;
  }

  private async dispatchLocked(
    tx: Tx,
    campaignId: string,
    now: Date,
  ): Promise<{ outcome: DispatchOutcome; dispatched: DispatchedBatch | null }> {
    const idle = { outcome: { messageIds: [], next: null }, dispatched: null };
    const campaign = await lockCampaign(tx, campaignId);
    if (!campaign || campaign.deleted_at || campaign.status !== 'running') return idle;
    const template = campaign.template_id
      ? await tx.template.findUnique({ where: { id: campaign.template_id }, select: { content: true } })
      : null;
    if (!template) {
      this.logger.warn({ campaign: campaignId }, 'running campaign without a template; nothing dispatched');
      return idle;
    }
    const contacts = await this.batchContacts(tx, campaign);
    const messages = contacts.length
      ? await this.batchMessages(tx, campaign, template.content, contacts, now)
      : [];
    const admitted = messages.length ? await withinQuota(tx, campaign.account_id, messages, now) : [];
    const created = admitted.length ? await insertMessageRows(tx, admitted) : [];
    const next =
      admitted.length < messages.length
        ? await this.pauseAtQuota(tx, campaign, now)
        : await this.advance(tx, campaign, contacts, created.length > 0, now);
    return {
      outcome: { messageIds: created.filter((m) => m.status === 'queued').map((m) => m.id), next },
      dispatched: {
        accountId: campaign.account_id,
        messages: created,
        reservations: reservationsOf(created),
      },
    };
  }

  /**
   * The batch's messages, rendered and timed; those to a country the account may not send to
   * are made failed (`destination_not_allowed`), then those no sender may take there
   * (`no_compliant_sender`) and those the fraud guard refuses (`fraud_blocked`), before any is
   * reserved, so the campaign's stats count them and the quota does not.
   */
  private async batchMessages(
    tx: Tx,
    campaign: LockedCampaign,
    template: string,
    contacts: PendingContact[],
    now: Date,
  ): Promise<NewMessageRow[]> {
    const [timing, allowed] = await Promise.all([
      timingRulesOf(tx, campaign.account_id, {
        window: campaign.send_window,
        validitySeconds: campaign.validity,
      }),
      this.quotas.allowedCountries(campaign.account_id),
    ]);
    const messages = campaignMessages(campaign, template, contacts, timing, now).map((message) =>
      isAllowedDestination(allowed, message.to)
        ? message
        : failedAtAcceptance(message, {
            code: 'destination_not_allowed',
            message: 'The account may not send to this country',
          }),
    );
    return this.withinFraudGuard(await this.withSenders(tx, campaign, messages));
  }

  /**
   * Those the fraud guard refuses are made failed (`fraud_blocked`). Checked last, so that only
   * messages that would otherwise go count in its windows.
   */
  private withinFraudGuard(messages: NewMessageRow[]): Promise<NewMessageRow[]> {
    return Promise.all(
      messages.map(async (message) => {
        if (message.status === 'failed') return message;
        const rule = await this.fraudGuard.check(message);
        if (!rule) return message;
        return failedAtAcceptance(message, {
          code: 'fraud_blocked',
          message: `Refused by the fraud guard: ${rule}`,
        });
      }),
    );
  }

  /**
   * Each message's sender: the campaign's `from`, else the account's default sender or pool
   * (sticky per recipient, written in the batch's transaction). A message no sender of them may
   * take to its country is made failed (`no_compliant_sender`).
   */
  private async withSenders(tx: Tx, campaign: LockedCampaign, messages: NewMessageRow[]) {
    const going = messages.filter((message) => message.status !== 'failed');
    if (going.length === 0) return messages;
    const senders = await this.senderChoice.choose(
      tx,
      campaign.account_id,
      campaign.sender,
      going.map((message) => message.to),
    );
    const senderOf = new Map(going.map((message, index) => [message.id, senders[index]!]));
    return messages.map((message) => {
      const sender = senderOf.get(message.id);
      if (sender === undefined) return message;
      return sender === 'refused' ? failedAtAcceptance(message, NO_COMPLIANT_SENDER) : { ...message, sender };
    });
  }

  /**
   * The batch found the account's quota reached before its end: the campaign pauses, saying why,
   * and the contacts left get their messages in a batch after `resume`.
   */
  private async pauseAtQuota(tx: Tx, campaign: LockedCampaign, now: Date): Promise<null> {
    await moveCampaign(tx, campaign, 'pauseAtQuota', now, {
      pausedReason: 'quota_exceeded',
      nextBatchAt: null,
      dispatchedBatches: { increment: 1 },
    });
    this.quotas.notePausedAtQuota(campaign.account_id, campaign.id);
    return null;
  }

  /**
   * The batch's contacts, read on from the last batch. A short read means the end, where a read
   * from the start also finds contacts that committed late with an earlier created_at (an
   * import's rows).
   */
  private async batchContacts(tx: Tx, campaign: LockedCampaign): Promise<PendingContact[]> {
    const contacts = await this.pendingContacts(tx, campaign, campaign.batch_size);
    if (contacts.length === campaign.batch_size || !campaign.dispatched_through_id) return contacts;
    return this.pendingContacts(
      tx,
      { ...campaign, dispatched_through_at: null, dispatched_through_id: null },
      campaign.batch_size,
    );
  }

  /**
   * After a batch: a short batch was the last (every contact the campaign had has its message
   * now) and finishes the campaign, unless messages of it still wait for their time or window:
   * then it stays running until the last of them goes, expires or is cancelled (the release, or a
   * client's cancel, dispatches it again when they move: campaign-settling.ts; its nextBatchAt,
   * the latest of their expiries, lets the recovery sweep do it should that job be lost). A full batch schedules the next after the
   * campaign's delay.
   */
  private async advance(
    tx: Tx,
    campaign: LockedCampaign,
    contacts: PendingContact[],
    createdAny: boolean,
    now: Date,
  ): Promise<DispatchOutcome['next']> {
    if (contacts.length < campaign.batch_size) {
      const [waiting] = await tx.$queryRaw<{ until: Date | null }[]>`
        SELECT max(expires_at) AS until FROM messages WHERE campaign_id = ${campaign.id} AND status = 'scheduled'`;
      if (waiting?.until) {
        await tx.campaign.update({
          where: { id: campaign.id },
          data: { nextBatchAt: waiting.until, dispatchedBatches: { increment: createdAny ? 1 : 0 } },
        });
        return null;
      }
      await moveCampaign(tx, campaign, 'finish', now, {
        finishedAt: now,
        nextBatchAt: null,
        dispatchedBatches: { increment: createdAny ? 1 : 0 },
      });
      return null;
    }
    const delayMs = Math.round(campaign.delay * 1000);
    const last = contacts.at(-1)!;
    await tx.campaign.update({
      where: { id: campaign.id },
      data: {
        dispatchedBatches: { increment: 1 },
        nextBatchAt: new Date(now.getTime() + delayMs),
        dispatchedThroughAt: last.created_at,
        dispatchedThroughId: last.id,
      },
    });
    return { batch: campaign.dispatched_batches + 2, delayMs };
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
        take: RECOVERY_LIMIT,
      }),
      this.prisma.campaign.findMany({
        where: { status: 'scheduled', deletedAt: null, sendAt: { lt: cutoff } },
        select: { id: true, sendAt: true },
        take: RECOVERY_LIMIT,
      }),
    ]);
    for (const campaign of running)
      await this.dispatchJobs.enqueueBatch(campaign.id, campaign.dispatchedBatches + 1, 0);
    for (const campaign of scheduled) await this.dispatchJobs.scheduleStart(campaign.id, campaign.sendAt!);
    return running.length + scheduled.length;
  }

  /** The batch's new messages (queued), and the campaign whose counts (and perhaps status) moved. */
  private publish(campaignId: string, batch: DispatchedBatch) {
    const { accountId, messages } = batch;
    this.live.messages(messages.map(({ id, to, status }) => ({ accountId, id, to, campaignId, status })));
    this.live.campaign(accountId, campaignId);
  }

  /** Contacts still to be sent: no message yet, and not opted out of the account. */
  private pendingContacts(tx: Tx, campaign: LockedCampaign, limit: number): Promise<PendingContact[]> {
    return tx.$queryRaw<PendingContact[]>(pendingContactsQuery(campaign, limit));
  }
}

/**
 * The next contacts of a campaign without a message, in order, from the last batch's position
 * when there is one. Each contact costs two index probes (its message, its opt-out), however
 * many messages the campaign already has. The message is looked up by contact alone (a contact
 * belongs to one campaign): by (campaign, contact), a planner that believes the campaign has no
 * messages may as well take the (campaign, status) index and read all of them per contact.
 */
export function pendingContactsQuery(
  campaign: Pick<LockedCampaign, 'id' | 'account_id' | 'dispatched_through_at' | 'dispatched_through_id'>,
  limit: number,
): Prisma.Sql {
  const after = campaign.dispatched_through_id
    ? Prisma.sql`AND (c.created_at, c.id) > (${campaign.dispatched_through_at}, ${campaign.dispatched_through_id})`
    : Prisma.empty;
  return Prisma.sql`
    SELECT c.id, c.phone, c.name, c.email, c.document, c.tags, c.timezone, c.created_at
    FROM contacts c
    WHERE c.campaign_id = ${campaign.id} ${after}
      AND NOT EXISTS (SELECT 1 FROM messages m WHERE m.contact_id = c.id ${perRowProbe})
      AND NOT ${contactOptedOut(campaign.account_id)}
    ORDER BY c.created_at, c.id
    LIMIT ${limit}`;
}

/** A message of the batch refused as it is made: failed at once, with why. */
function failedAtAcceptance(message: NewMessageRow, error: { code: string; message: string }): NewMessageRow {
  return { ...message, status: 'failed', releaseAt: null, error };
}

/**
 * A batch's messages: the template rendered for each contact, each going at once when the
 * contact's window is open and otherwise scheduled for its next opening in the contact's time
 * zone; each expires its validity after it may first go out.
 */
function campaignMessages(
  campaign: LockedCampaign,
  template: string,
  contacts: PendingContact[],
  rules: TimingRules,
  now: Date,
): NewMessageRow[] {
  return contacts.map((contact) => {
    const text = renderTemplate(template, contact);
    const { encoding, segments } = analyzeText(text);
    const timing = messageTiming({ now, sendAt: null, rules, timeZone: contact.timezone });
    return {
      id: newId('msg'),
      accountId: campaign.account_id,
      campaignId: campaign.id,
      contactId: contact.id,
      to: contact.phone,
      text,
      encoding,
      segments,
      createdAt: now,
      status: timing.status,
      sendAt: null,
      releaseAt: timing.releaseAt,
      validitySeconds: rules.validitySeconds,
    };
  });
}
