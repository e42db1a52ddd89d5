import type { Logger } from 'pino';
import type { Prisma, PrismaClient } from '../../generated/prisma/client.js';
import type { CampaignDispatchJobs } from '../../jobs/campaign-dispatch.job.js';
import type { MessageSendJobs } from '../../jobs/message-send.job.js';
import type { Clock } from '../../lib/clock.js';
import type { FraudGuard } from '../fraud-guard/fraud-guard.js';
import type { LivePublisher } from '../live/live-events.js';
import {
  insertMessageRows,
  type NewMessageRow,
  type ReservedSegments,
  reservationsOf,
} from '../messages/message-rows.js';
import type { AccountQuotas } from '../quotas/account-quotas.js';
import { withinQuota } from '../quotas/campaign-quota.js';
import type { SenderChoice } from '../senders/sender-choice.js';
import { BatchMessages } from './batch-messages.js';
import { type LockedCampaign, lockCampaign } from './campaign-rows.js';
import { moveCampaign } from './campaign-transitions.js';
import { batchContacts, type PendingContact } from './pending-contacts.js';

type Tx = Prisma.TransactionClient;

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
  private readonly batchMessages: BatchMessages;
  private readonly logger: Logger;

  constructor(options: CampaignDispatchOptions) {
    ({
      prisma: this.prisma,
      clock: this.clock,
      dispatchJobs: this.dispatchJobs,
      sendJobs: this.sendJobs,
      live: this.live,
      quotas: this.quotas,
      logger: this.logger,
    } = options);
    this.batchMessages = new BatchMessages(options);
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
    const contacts = await batchContacts(tx, campaign);
    const messages = contacts.length
      ? await this.batchMessages.make(tx, campaign, template.content, contacts, now)
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
}
