import type { Worker } from 'bullmq';
import type { CarrierPool } from '../carriers/carrier-pool.js';
import type { Dependencies } from '../deps.js';
import type { Services } from '../services.js';

export interface WorkerContext {
  deps: Dependencies;
  services: Services;
  carriers: CarrierPool;
}

/** A BullMQ worker of the service, started by the worker role of the process. */
export type WorkerFactory = (context: WorkerContext) => Worker;

export interface RunningWorkers {
  names: string[];
  close(): Promise<void>;
}

/**
 * Starts the given workers. On close each finishes its in-flight jobs before its connection
 * goes, which is what lets SIGTERM drain instead of abandoning a job half done.
 */
export function startWorkers(factories: readonly WorkerFactory[], context: WorkerContext): RunningWorkers {
  const workers = factories.map((factory) => factory(context));
  const { jobs } = context.deps.metrics;
  for (const worker of workers) {
    worker.on('error', (error) =>
      context.deps.logger.error({ queue: worker.name, err: error }, 'worker error'),
    );
    worker.on('completed', () => jobs.inc({ queue: worker.name, outcome: 'completed' }));
    // By the time 'failed' is emitted the attempt is counted: fewer than allowed means BullMQ retries it.
    worker.on('failed', (job) =>
      jobs.inc({
        queue: worker.name,
        outcome: job && job.attemptsMade < (job.opts.attempts ?? 1) ? 'retried' : 'failed',
      }),
    );
  }
  return {
    names: workers.map((worker) => worker.name),
    close: async () => {
      await Promise.all(workers.map((worker) => worker.close()));
    },
  };
}
