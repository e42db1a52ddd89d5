import type { Worker } from 'bullmq';
import type { Logger } from 'pino';
import type { Metrics } from '../metrics/metrics.js';

/** What the workers report to: their errors to the log, each finished job to the metrics. */
export interface WorkerObservers {
  logger: Logger;
  metrics: Pick<Metrics, 'jobs'>;
}

export interface RunningWorkers {
  names: string[];
  close(): Promise<void>;
}

/**
 * Starts the given workers. On close each finishes its in-flight jobs before its connection
 * goes, which is what lets SIGTERM drain instead of abandoning a job half done.
 */
export function startWorkers<Context>(
  factories: readonly ((context: Context) => Worker)[],
  context: Context,
  { logger, metrics }: WorkerObservers,
): RunningWorkers {
  const workers = factories.map((factory) => factory(context));
  const { jobs } = metrics;
  for (const worker of workers) {
    worker.on('error', (error) => logger.error({ queue: worker.name, err: error }, 'worker error'));
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
