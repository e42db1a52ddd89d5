import { randomBytes } from 'node:crypto';
import { mkdir, readdir, rm, stat } from 'node:fs/promises';
import { basename, join } from 'node:path';
import type pg from 'pg';
import type { Logger } from 'pino';
import { AppError, NotFoundError, ValidationError } from '../../errors.js';
import type { Prisma, PrismaClient } from '../../generated/prisma/client.js';
import type { ContactImportJobs } from '../../jobs/contact-import.job.js';
import type { Clock } from '../../lib/clock.js';
import { newId } from '../../lib/ids.js';
import { parseInput } from '../../lib/validation.js';
import type { IncomingFile } from '../../uploads.js';
import { requireCampaign } from '../campaigns/campaign-lookup.js';
import type { LivePublisher } from '../live/live-events.js';
import { ImportFileError } from './import-file-error.js';
import { importJobSourcesOf } from './import-job-transitions.js';
import { formatFromName, IMPORT_MAX_FILE_BYTES, importInput, importOptions } from './import-options.js';
import { importInOneTransaction, type RunnableJob } from './import-transaction.js';
import type { Uploads } from './uploads.js';

/**
 * Runs of one job. A run that ends neither completed nor failed (its process died, or the
 * database went away) leaves the job to one more run; the run after that fails the job with
 * internal_error instead, so that a file that kills processes cannot do it again and again.
 */
const MAX_RUNS = 2;
/**
 * An upload this old that no job waits for, or a file in IMPORT_DIR this old, was left by a
 * crash: a request lasts a minute at most and an import of the largest file takes seconds.
 */
const ORPHAN_AFTER_MS = 60 * 60_000;

type ImportJobQuery = Pick<Prisma.ImportJobFindFirstArgs, 'select' | 'include'>;

export interface ImportLimits {
  /** The most bytes an XLSX's parts may inflate to. */
  maxInflatedBytes: number;
}

export interface ContactImportsOptions {
  prisma: PrismaClient;
  pool: pg.Pool;
  clock: Clock;
  importJobs: ContactImportJobs;
  live: LivePublisher;
  logger: Logger;
  uploads: Uploads;
  /** Where a worker writes the file it reads, for that read only. */
  importDir: string;
  limits: ImportLimits;
}

/**
 * Bulk contact import (docs/imports.md). The upload is streamed into PostgreSQL (Uploads), so
 * that a worker on any machine can read it, and a BullMQ job imports it in ONE transaction: the
 * worker copies it to a file of its own in IMPORT_DIR for the parser, and its rows are staged
 * in a temporary table while the file is read, then inserted into `contacts` in a single
 * statement whose ON CONFLICT (campaign_id, phone) is the database's guarantee against
 * duplicates. A run that fails or crashes therefore leaves nothing behind, and its retry starts
 * over from the file. That transaction runs on a connection of the pool taken directly: through
 * Prisma's client, 100,000 rows cost twice the CPU and over 100 MB more memory.
 */
export class ContactImports {
  private readonly prisma: PrismaClient;
  private readonly pool: pg.Pool;
  private readonly clock: Clock;
  private readonly importJobs: ContactImportJobs;
  private readonly live: LivePublisher;
  private readonly logger: Logger;
  private readonly uploads: Uploads;
  private readonly importDir: string;
  private readonly limits: ImportLimits;

  constructor(options: ContactImportsOptions) {
    ({
      prisma: this.prisma,
      pool: this.pool,
      clock: this.clock,
      importJobs: this.importJobs,
      live: this.live,
      logger: this.logger,
      uploads: this.uploads,
      importDir: this.importDir,
      limits: this.limits,
    } = options);
  }

  /**
   * Accepts an upload: the campaign and options are checked before the file is read, the file
   * is stored (413 as soon as it passes 10 MB), then the job is created and enqueued.
   */
  async start(
    accountId: string,
    campaignId: string,
    file: Promise<IncomingFile>,
    input: unknown,
    query: ImportJobQuery = {},
  ) {
    await requireCampaign(this.prisma, accountId, campaignId);
    const data = parseInput(importInput, input);
    const upload = await file.catch((error: unknown) => {
      // The request named a file that never came, or broke off before it: a malformed request.
      throw new AppError(
        'bad_request',
        `The file could not be received: ${error instanceof Error ? error.message : String(error)}`,
      );
    });
    const fileFormat = data.fileFormat ?? formatFromName(upload.filename);
    if (!fileFormat)
      throw new ValidationError(
        [{ field: 'fileFormat', issue: 'required' }],
        'fileFormat is required when the file name ends in neither .csv nor .xlsx',
      );

    const id = newId('job');
    await this.uploads.store(id, upload.createReadStream(), IMPORT_MAX_FILE_BYTES);
    const job = await this.prisma.importJob
      .create({
        ...query,
        data: {
          id,
          accountId,
          campaignId,
          receivedFile: basename(upload.filename.replaceAll('\\', '/')).slice(0, 255) || 'upload',
          fileFormat,
          options: importOptions(data) as unknown as Prisma.InputJsonValue,
          createdAt: this.clock.now(),
        },
      })
      .catch(async (error: unknown) => {
        await this.uploads.remove(id);
        throw error;
      });
    await this.importJobs.enqueue(id);
    return job;
  }

  async get(accountId: string, campaignId: string, id: string, query: ImportJobQuery = {}) {
    const job = await this.prisma.importJob.findFirst({
      ...query,
      where: { id, campaignId, accountId, campaign: { deletedAt: null } },
    });
    if (!job) throw new NotFoundError('Import job');
    return job;
  }

  /** A job of the account's by its id alone, as a subscriber names it. */
  async find(accountId: string, id: string, query: ImportJobQuery = {}) {
    const job = await this.prisma.importJob.findFirst({
      ...query,
      where: { id, accountId, campaign: { deletedAt: null } },
    });
    if (!job) throw new NotFoundError('Import job');
    return job;
  }

  /** One run of a job, by the worker. A job no longer `processing` is left as it is. */
  async run(id: string): Promise<void> {
    const { count } = await this.prisma.importJob.updateMany({
      where: { id, status: 'processing' },
      data: { attempts: { increment: 1 }, processed: 0 },
    });
    if (count === 0) return;
    const job = await this.prisma.importJob.findUniqueOrThrow({
      where: { id },
      select: {
        id: true,
        accountId: true,
        campaignId: true,
        fileFormat: true,
        options: true,
        attempts: true,
      },
    });
    if (job.attempts > MAX_RUNS) {
      await this.giveUp(id, `The import stopped ${MAX_RUNS} times without completing`);
      return;
    }
    await mkdir(this.importDir, { recursive: true });
    // Named for this run alone: another run of the job may be reading the same directory.
    const path = join(this.importDir, `${id}-${randomBytes(4).toString('hex')}.${job.fileFormat}`);
    try {
      if (!(await this.uploads.copyToFile(id, path))) {
        await this.end(
          id,
          new ImportFileError('unreadable_file', 'The uploaded file is no longer available to the worker'),
        );
        return;
      }
      await this.importFile(job, path);
    } finally {
      await rm(path, { force: true });
    }
  }

  /** The last attempt failed for a reason of the service's, not of the file's. */
  async giveUp(id: string, reason: string): Promise<void> {
    await this.end(id, { code: 'internal_error', message: `${reason}; upload the file again` });
  }

  /**
   * Jobs still `processing` long after their upload whose BullMQ job is gone (Redis lost it, or
   * it was never added) get it again; uploads no such job waits for, and files in this process's
   * IMPORT_DIR, left by a crash at the wrong moment, are removed. The number of jobs enqueued again.
   */
  async recoverStalled(overdueMs: number): Promise<number> {
    const now = this.clock.now().getTime();
    const stalled = await this.prisma.importJob.findMany({
      where: { status: 'processing', createdAt: { lt: new Date(now - overdueMs) } },
      select: { id: true },
      take: 100,
    });
    let enqueued = 0;
    for (const { id } of stalled) {
      if (await this.importJobs.isQueued(id)) continue;
      await this.importJobs.enqueue(id);
      enqueued += 1;
    }
    const abandoned = await this.uploads.removeAbandoned(new Date(now - ORPHAN_AFTER_MS));
    if (abandoned > 0) this.logger.info({ uploads: abandoned }, 'removed abandoned uploads');
    await this.removeLeftoverFiles();
    return enqueued;
  }

  /** Reads the local copy of the job's file into the campaign, or fails the job when the file is refused. */
  private async importFile(job: RunnableJob, path: string): Promise<void> {
    let outcome: Awaited<ReturnType<typeof importInOneTransaction>>;
    try {
      outcome = await importInOneTransaction({
        pool: this.pool,
        clock: this.clock,
        limits: this.limits,
        job,
        path,
        onProgress: (rows) => this.reportProgress(job.accountId, job.id, rows),
      });
    } catch (error) {
      if (!(error instanceof ImportFileError)) throw error;
      await this.end(job.id, error);
      return;
    }
    // Null: another run of the job completed it while this one read the file.
    if (!outcome) return;
    this.live.importJob(job.accountId, job.id);
    this.logger.info({ job: job.id, ...outcome, errors: outcome.errors.length }, 'import completed');
  }

  /** Written on the service's own connection, outside the import's transaction, so readers see it now. */
  private async reportProgress(accountId: string, id: string, processed: number): Promise<void> {
    await this.prisma.importJob.update({ where: { id }, data: { processed } });
    this.live.importJob(accountId, id);
  }

  /** A failed job reports no counts: none of its rows were imported. */
  private async end(id: string, failure: { code: string; message: string }): Promise<void> {
    const { count } = await this.prisma.importJob.updateMany({
      where: { id, status: { in: importJobSourcesOf('failed') } },
      data: {
        status: 'failed',
        errorCode: failure.code,
        errorMessage: failure.message,
        finishedAt: this.clock.now(),
      },
    });
    if (count > 0) {
      const job = await this.prisma.importJob.findUnique({ where: { id }, select: { accountId: true } });
      if (job) this.live.importJob(job.accountId, id);
    }
    await this.uploads.remove(id);
    this.logger.info({ job: id, code: failure.code }, 'import failed');
  }

  /** Copies of uploads a worker killed mid-import left in its IMPORT_DIR. */
  private async removeLeftoverFiles(): Promise<void> {
    const names = await readdir(this.importDir).catch(() => [] as string[]);
    for (const name of names) {
      const path = join(this.importDir, name);
      const stats = await stat(path).catch(() => null);
      // File times are the machine's, not the service clock's.
      if (stats?.isFile() && Date.now() - stats.mtimeMs > ORPHAN_AFTER_MS) await rm(path, { force: true });
    }
  }
}
