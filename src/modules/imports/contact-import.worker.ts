import { Worker } from 'bullmq';
import { type ContactImportJob, contactImportQueue } from '../../jobs/contact-import.job.js';
import { createWorkerConnection } from '../../jobs/redis-connections.js';
import type { WorkerContext } from '../../worker-context.js';
import type { ContactImports } from './contact-imports.js';

// BullMQ's default for how often it looks for jobs of dead workers; shorter when the lease is.
const MAX_STALLED_INTERVAL_MS = 30_000;

/**
 * Imports uploaded files, one at a time per process: parsing is CPU work, and one import of
 * 100,000 rows fits the memory target on its own. A worker killed mid-import stops renewing
 * its BullMQ lock; after CLAIM_LEASE_MS another worker takes the job and starts it over (the
 * killed run's transaction never committed).
 */
export function createContactImportWorker({
  deps,
  services,
}: WorkerContext<{ contactImports: ContactImports }>): Worker<ContactImportJob> {
  const connection = createWorkerConnection(deps.config.redis);
  const worker = new Worker<ContactImportJob>(
    contactImportQueue.name,
    (job) => services.contactImports.run(job.data.importJobId),
    {
      connection,
      prefix: deps.config.redisPrefix,
      concurrency: 1,
      lockDuration: deps.config.claimLeaseMs,
      stalledInterval: Math.min(deps.config.claimLeaseMs, MAX_STALLED_INTERVAL_MS),
      // A busy event loop can miss a lock renewal; a run again is harmless (all or nothing).
      maxStalledCount: 10,
    },
  );
  worker.on('failed', (job, error) => {
    deps.logger.warn({ job: job?.data.importJobId, err: error }, 'import run failed');
    if (job && job.attemptsMade >= (job.opts.attempts ?? 1)) {
      services.contactImports.giveUp(job.data.importJobId, 'The import failed').catch((failure: unknown) => {
        deps.logger.error(
          { job: job.data.importJobId, err: failure },
          'could not mark the import failed; the recovery sweep will retry it',
        );
      });
    }
  });
  worker.on('closed', () => void connection.quit());
  return worker;
}
