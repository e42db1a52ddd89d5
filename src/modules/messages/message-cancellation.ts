import { InvalidStateError, NotFoundError } from '../../errors.js';
import type { PrismaClient } from '../../generated/prisma/client.js';
import type { CampaignDispatchJobs } from '../../jobs/campaign-dispatch.job.js';
import type { Clock } from '../../lib/clock.js';
import { settleWaitingCampaigns } from '../campaigns/campaign-settling.js';
import type { MessageStatusChanges } from './message-status-changes.js';

/** Waiting messages of a cancelled campaign taken per statement. */
const CAMPAIGN_CHUNK = 1_000;

/**
 * Cancelling scheduled messages: one a client names, or every one still waiting of a campaign
 * that was cancelled or deleted. The status change decides a cancellation racing the release by
 * the message's row lock: the message ends cancelled or on its way, never both.
 */
export interface MessageCancellationOptions {
  prisma: PrismaClient;
  clock: Clock;
  statusChanges: MessageStatusChanges;
  /** A running campaign whose waiting message a client cancelled may finish (campaign-settling.ts). */
  dispatchJobs: CampaignDispatchJobs;
}

export class MessageCancellation {
  private readonly prisma: PrismaClient;
  private readonly clock: Clock;
  private readonly statusChanges: MessageStatusChanges;
  private readonly dispatchJobs: CampaignDispatchJobs;

  constructor(options: MessageCancellationOptions) {
    ({
      prisma: this.prisma,
      clock: this.clock,
      statusChanges: this.statusChanges,
      dispatchJobs: this.dispatchJobs,
    } = options);
  }

  /** 409 invalid_state once the message is on its way (or cancelled already). */
  async cancel(accountId: string, id: string): Promise<void> {
    const message = await this.prisma.message.findFirst({
      where: { id, accountId },
      select: { id: true, to: true, campaignId: true, status: true },
    });
    if (!message) throw new NotFoundError('Message');
    const moved =
      message.status === 'scheduled' &&
      (await this.statusChanges.apply({ message, status: 'cancelled', at: this.clock.now() }));
    if (moved) {
      if (message.campaignId)
        await settleWaitingCampaigns(this.prisma, this.dispatchJobs, [message.campaignId]);
      return;
    }
    const now = await this.prisma.message.findUniqueOrThrow({ where: { id }, select: { status: true } });
    throw new InvalidStateError(
      `A ${now.status} message cannot be cancelled: only a scheduled one can, before it is released`,
    );
  }

  /** Cancels every message of the campaign still waiting for its time or window; answers how many. */
  async cancelWaiting(campaignId: string): Promise<number> {
    let cancelled = 0;
    for (;;) {
      const waiting = await this.prisma.message.findMany({
        where: { campaignId, status: 'scheduled' },
        select: { id: true, to: true, campaignId: true },
        take: CAMPAIGN_CHUNK,
      });
      if (waiting.length === 0) return cancelled;
      const at = this.clock.now();
      const moved = await Promise.all(
        waiting.map((message) => this.statusChanges.apply({ message, status: 'cancelled', at })),
      );
      cancelled += moved.filter(Boolean).length;
    }
  }
}
