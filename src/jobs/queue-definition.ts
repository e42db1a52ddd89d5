import type { BulkJobOptions, DefaultJobOptions, Queue } from 'bullmq';
import type { Logger } from 'pino';

/** A BullMQ queue of the service: its name, and the options every job added to it gets. */
export interface QueueDefinition<Payload> {
  readonly name: string;
  readonly defaultJobOptions: DefaultJobOptions;
  /** Never set: it carries the type of the queue's job payloads to the producers and workers. */
  readonly payload?: Payload;
}

export type PayloadOf<Definition> = Definition extends QueueDefinition<infer Payload> ? Payload : never;

// PostgreSQL holds the state of every job's work; a finished job only needs to be gone, so that
// the same job id can be added again (by a retry, or the recovery sweep).
export const FORGET_FINISHED_JOBS = { removeOnComplete: true, removeOnFail: true } as const;

export interface NewJob<Payload> {
  name: string;
  data: Payload;
  /** `jobId` always: the id scheme is what makes adding the same work twice add it once. */
  opts: BulkJobOptions & { jobId: string };
}

/** What adds jobs to one queue; each queue's job module says which jobs, with which ids. */
export class JobProducer<Payload> {
  constructor(
    protected readonly queue: Queue<Payload>,
    private readonly logger: Logger,
  ) {}

  /**
   * Adds the jobs in one round trip. A failure is logged, not raised: the work is in PostgreSQL
   * already, and the recovery sweep enqueues it again.
   */
  protected async add(
    jobs: readonly NewJob<Payload>[],
    failure: string,
    context: Record<string, unknown>,
  ): Promise<void> {
    if (jobs.length === 0) return;
    try {
      // BullMQ types the jobs through conditional types that a generic payload cannot resolve.
      await this.queue.addBulk([...jobs] as Parameters<Queue<Payload>['addBulk']>[0]);
    } catch (error) {
      this.logger.warn({ err: error, ...context }, failure);
    }
  }
}
