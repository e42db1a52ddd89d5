import type { ImportStatus } from '../../generated/prisma/enums.js';

/**
 * Where an import job may go from each status. A job is created `processing` and ends once:
 * `completed` by the run that imported its rows, or `failed` when the file was refused or its
 * runs gave up. An ended job never moves again, so a late run (a worker thought dead that was
 * not) finds its work done.
 */
export const IMPORT_JOB_TRANSITIONS = {
  processing: ['completed', 'failed'],
  completed: [],
  failed: [],
} as const satisfies Record<ImportStatus, readonly ImportStatus[]>;

/** What each status means, as the API describes it. */
export const IMPORT_STATUS_MEANINGS = {
  processing: 'Accepted, or being read',
  completed: 'Read to the end: the counts are final',
  failed: 'The whole file was refused: `error` says why',
} as const satisfies Record<ImportStatus, string>;

/** A status an import job can be moved to. */
export type ImportJobTarget = (typeof IMPORT_JOB_TRANSITIONS)[ImportStatus][number];

/** Whether the table lets a job in status `from` move to `to`. */
export function importJobMayMove(from: string | undefined, to: ImportJobTarget): boolean {
  const targets: readonly string[] | undefined = IMPORT_JOB_TRANSITIONS[from as ImportStatus];
  return targets?.includes(to) ?? false;
}

/**
 * The statuses a job may move to `to` from: what the statement that moves it puts in its
 * `WHERE`, so the move and the check are one statement and a move the table does not list
 * changes no row.
 */
export function importJobSourcesOf(to: ImportJobTarget): ImportStatus[] {
  return (Object.keys(IMPORT_JOB_TRANSITIONS) as ImportStatus[]).filter((from) => importJobMayMove(from, to));
}
