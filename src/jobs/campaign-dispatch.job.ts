import type { Queue } from 'bullmq';
import type { Logger } from 'pino';
import type { Clock } from '../clock.js';
import { FORGET_FINISHED_JOBS, type QueueDefinition } from './queue-definition.js';

/** `start`: a scheduled campaign's send_at has come; `dispatch`: send its next batch. */
export type CampaignDispatchJob = { kind: 'start'; campaignId: string; sendAt: string } | { kind: 'dispatch'; campaignId: string };

export const campaignDispatchQueue: QueueDefinition<CampaignDispatchJob> = {
  name: 'campaign-dispatch',
  defaultJobOptions: { attempts: 10, backoff: { type: 'exponential', delay: 1_000 }, ...FORGET_FINISHED_JOBS },
};

/**
 * A batch's job id names the campaign and the batch's number, a start's the campaign and its
 * send_at: the same batch or start enqueued twice (a retry, the recovery sweep) is one job.
 */
export class CampaignDispatchJobs {
  constructor(
    private readonly queue: Queue<CampaignDispatchJob>,
    private readonly clock: Clock,
    private readonly logger: Logger,
  ) {}

  async enqueueBatch(campaignId: string, batch: number, delayMs: number): Promise<void> {
    try {
      await this.queue.add('dispatch', { kind: 'dispatch', campaignId }, { jobId: `dispatch-${campaignId}-${batch}`, delay: delayMs });
    } catch (error) {
      this.logger.warn({ err: error, campaign: campaignId }, 'could not enqueue the next batch; the recovery sweep will');
    }
  }

  async scheduleStart(campaignId: string, sendAt: Date): Promise<void> {
    const delay = Math.max(0, sendAt.getTime() - this.clock.now().getTime());
    try {
      await this.queue.add('start', { kind: 'start', campaignId, sendAt: sendAt.toISOString() }, { jobId: `start-${campaignId}-${sendAt.getTime()}`, delay });
    } catch (error) {
      this.logger.warn({ err: error, campaign: campaignId }, 'could not schedule the start; the recovery sweep will');
    }
  }
}
