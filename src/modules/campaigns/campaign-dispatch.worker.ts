import { Worker } from 'bullmq';
import { type CampaignDispatchJob, campaignDispatchQueue } from '../../jobs/campaign-dispatch.job.js';
import { createWorkerConnection } from '../../jobs/redis-connections.js';
import type { WorkerContext } from '../../worker-context.js';
import type { CampaignDispatch } from './campaign-dispatch.js';
import type { CampaignLifecycle } from './campaign-lifecycle.js';

/**
 * Starts scheduled campaigns when their send_at comes and sends running campaigns batch by
 * batch; each batch schedules the next one `delay` seconds later.
 */
export function createCampaignDispatchWorker({
  deps,
  services,
}: WorkerContext<{
  campaignLifecycle: CampaignLifecycle;
  campaignDispatch: CampaignDispatch;
}>): Worker<CampaignDispatchJob> {
  const connection = createWorkerConnection(deps.config.redis);
  const worker = new Worker<CampaignDispatchJob>(
    campaignDispatchQueue.name,
    async (job) => {
      if (job.data.kind === 'start')
        await services.campaignLifecycle.startScheduled(job.data.campaignId, new Date(job.data.sendAt));
      else await services.campaignDispatch.dispatchBatch(job.data.campaignId);
    },
    {
      connection,
      prefix: deps.config.redisPrefix,
      concurrency: 4,
      // A batch of a worker that died must go to another soon; its transaction was rolled back.
      lockDuration: Math.min(deps.config.claimLeaseMs, 30_000),
      stalledInterval: deps.config.recoveryIntervalMs,
      // A busy event loop can miss a lock renewal; running the batch again is harmless (its row
      // lock and the unique index), failing it for that is not.
      maxStalledCount: 10,
    },
  );
  worker.on('failed', (job, error) =>
    deps.logger.warn({ campaign: job?.data.campaignId, err: error }, 'campaign job failed'),
  );
  worker.on('closed', () => void connection.quit());
  return worker;
}
