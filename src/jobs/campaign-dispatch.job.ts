import type { Queue } from 'bullmq';
import type { Logger } from 'pino';
import type { Clock } from '../lib/clock.js';
import { FORGET_FINISHED_JOBS, JobProducer, type QueueDefinition } from './queue-definition.js';

/** `start`: a scheduled campaign's send_at has come; `dispatch`: send its next batch. */
export type CampaignDispatchJob =
  | { kind: 'start'; campaignId: string; sendAt: string }
  | { kind: 'dispatch'; campaignId: string };

export const campaignDispatchQueue: QueueDefinition<CampaignDispatchJob> = {
  name: 'campaign-dispatch',
  defaultJobOptions: {
    attempts: 10,
    backoff: { type: 'exponential', delay: 1_000 },
    ...FORGET_FINISHED_JOBS,
  },
};

/**
 * A batch's job id names the campaign and the batch's number, a start's the campaign and its
 * send_at: the same batch or start enqueued twice (a retry, the recovery sweep) is one job.
 */
export class CampaignDispatchJobs extends JobProducer<CampaignDispatchJob> {
  constructor(
    queue: Queue<CampaignDispatchJob>,
    private readonly clock: Clock,
    logger: Logger,
  ) {
    super(queue, logger);
  }

  async enqueueBatch(campaignId: string, batch: number, delayMs: number): Promise<void> {
    const job = {
      name: 'dispatch',
      data: { kind: 'dispatch', campaignId } as const,
      opts: { jobId: `dispatch-${campaignId}-${batch}`, delay: delayMs },
    };
    await this.add([job], 'could not enqueue the next batch; the recovery sweep will', {
      campaign: campaignId,
    });
  }

  async scheduleStart(campaignId: string, sendAt: Date): Promise<void> {
    const delay = Math.max(0, sendAt.getTime() - this.clock.now().getTime());
    const data = { kind: 'start', campaignId, sendAt: sendAt.toISOString() } as const;
    await this.add(
      [{ name: 'start', data, opts: { jobId: `start-${campaignId}-${sendAt.getTime()}`, delay } }],
      'could not schedule the start; the recovery sweep will',
      {
        campaign: campaignId,
      },
    );
  }
}
