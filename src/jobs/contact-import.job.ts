import { FORGET_FINISHED_JOBS, JobProducer, type QueueDefinition } from './queue-definition.js';

/** An uploaded file to import (import_jobs.id, also the job id). */
export interface ContactImportJob {
  importJobId: string;
}

export const contactImportQueue: QueueDefinition<ContactImportJob> = {
  name: 'contact-import',
  defaultJobOptions: { attempts: 3, backoff: { type: 'exponential', delay: 2_000 }, ...FORGET_FINISHED_JOBS },
};

/** The job id is the import job's id: one BullMQ job per upload, however often it is enqueued. */
export class ContactImportJobs extends JobProducer<ContactImportJob> {
  async enqueue(importJobId: string): Promise<void> {
    await this.add(
      [{ name: 'import', data: { importJobId }, opts: { jobId: importJobId } }],
      'could not enqueue the import; the recovery sweep will',
      {
        job: importJobId,
      },
    );
  }

  async isQueued(importJobId: string): Promise<boolean> {
    return Boolean(await this.queue.getJob(importJobId));
  }
}
