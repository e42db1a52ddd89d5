import type { Logger } from 'pino';
import { NotFoundError, ValidationError } from '../../errors.js';
import type { PrismaClient } from '../../generated/prisma/client.js';
import type { CampaignDispatchJobs } from '../../jobs/campaign-dispatch.job.js';
import type { Clock } from '../../lib/clock.js';
import type { LivePublisher } from '../live/live-events.js';
import type { MessageCancellation } from '../messages/message-cancellation.js';
import { lockCampaign } from './campaign-rows.js';
import { assertMoveAllowed, type CampaignAction, moveCampaign } from './campaign-transitions.js';

export interface CampaignLifecycleOptions {
  prisma: PrismaClient;
  clock: Clock;
  dispatchJobs: CampaignDispatchJobs;
  live: LivePublisher;
  messageCancellation: MessageCancellation;
  logger: Logger;
}

/** A campaign's status changes, by the transition table: a client's actions, and the start at send_at. */
export class CampaignLifecycle {
  private readonly prisma: PrismaClient;
  private readonly clock: Clock;
  private readonly dispatchJobs: CampaignDispatchJobs;
  private readonly live: LivePublisher;
  private readonly messageCancellation: MessageCancellation;
  private readonly logger: Logger;

  constructor(options: CampaignLifecycleOptions) {
    ({
      prisma: this.prisma,
      clock: this.clock,
      dispatchJobs: this.dispatchJobs,
      live: this.live,
      messageCancellation: this.messageCancellation,
      logger: this.logger,
    } = options);
  }

  /** One of the campaign actions of the transition table; 409 invalid_state when its status forbids it. */
  async act(accountId: string, id: string, action: CampaignAction): Promise<void> {
    const now = this.clock.now();
    const moved = await this.prisma.$transaction(async (tx) => {
      const campaign = await lockCampaign(tx, id);
      if (!campaign || campaign.account_id !== accountId || campaign.deleted_at)
        throw new NotFoundError('Campaign');
      const rule = assertMoveAllowed(campaign.status, action);
      if (rule.to === 'running' && !campaign.template_id)
        throw new ValidationError([{ field: 'template', issue: 'required' }]);
      await moveCampaign(tx, campaign, action, now, {
        pausedReason: null,
        ...(action === 'start' ? { startedAt: now, nextBatchAt: now } : {}),
        ...(action === 'resume' ? { nextBatchAt: now } : {}),
      });
      // Messages held while it was paused are due again; each is released when its window is open.
      if (action === 'resume')
        await tx.$executeRaw`
          UPDATE messages SET release_at = ${now}
          WHERE campaign_id = ${id} AND status = 'scheduled' AND (release_at IS NULL OR release_at > ${now})`;
      return { campaign, rule };
    });
    // Its messages still waiting for their window will not go.
    if (action === 'cancel') await this.messageCancellation.cancelWaiting(id);
    this.live.campaign(accountId, id);
    if (moved.rule.to === 'running')
      await this.dispatchJobs.enqueueBatch(id, moved.campaign.dispatched_batches + 1, 0);
    if (action === 'schedule' && moved.campaign.send_at)
      await this.dispatchJobs.scheduleStart(id, moved.campaign.send_at);
  }

  /** The delayed `start` job of a scheduled campaign fires; it starts only if still scheduled for that time. */
  async startScheduled(campaignId: string, sendAt: Date): Promise<void> {
    const now = this.clock.now();
    const started = await this.prisma.$transaction(async (tx) => {
      const campaign = await lockCampaign(tx, campaignId);
      if (
        !campaign ||
        campaign.deleted_at ||
        campaign.status !== 'scheduled' ||
        campaign.send_at?.getTime() !== sendAt.getTime()
      )
        return null;
      if (!campaign.template_id) {
        this.logger.warn(
          { campaign: campaignId },
          'send_at reached but the campaign has no template; left scheduled',
        );
        return null;
      }
      await moveCampaign(tx, campaign, 'startAtSendAt', now, { startedAt: now, nextBatchAt: now });
      return campaign;
    });
    if (started) this.live.campaign(started.account_id, campaignId);
    if (started) await this.dispatchJobs.enqueueBatch(campaignId, started.dispatched_batches + 1, 0);
  }
}
