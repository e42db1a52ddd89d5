import type { DefaultJobOptions } from 'bullmq';

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
