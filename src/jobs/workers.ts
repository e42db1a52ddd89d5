import type { Worker } from 'bullmq';
import type { Dependencies } from '../deps.js';
import type { Services } from '../services.js';

/** A BullMQ worker of the service, started by the worker role of the process. */
export type WorkerFactory = (deps: Dependencies, services: Services) => Worker;

export interface RunningWorkers {
  names: string[];
  close(): Promise<void>;
}

/**
 * Starts the given workers. On close each finishes its in-flight jobs before its connection
 * goes, which is what lets SIGTERM drain instead of abandoning a job half done.
 */
export function startWorkers(factories: readonly WorkerFactory[], deps: Dependencies, services: Services): RunningWorkers {
  const workers = factories.map((factory) => factory(deps, services));
  for (const worker of workers) {
    worker.on('failed', (job, error) => deps.logger.warn({ queue: worker.name, job: job?.id, err: error }, 'job failed'));
    worker.on('error', (error) => deps.logger.error({ queue: worker.name, err: error }, 'worker error'));
  }
  return {
    names: workers.map((worker) => worker.name),
    close: async () => {
      await Promise.all(workers.map((worker) => worker.close()));
    },
  };
}
