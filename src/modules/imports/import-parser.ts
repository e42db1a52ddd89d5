import { on } from 'node:events';
import { Worker } from 'node:worker_threads';
import type { ContactRow, RowError } from './contact-rows.js';
import { type ImportFailureCode, ImportFileError } from './import-file-error.js';
import type { FileFormat, ImportOptions } from './import-options.js';

/** What the parser thread is given. */
export interface ParserInput {
  path: string;
  format: FileFormat;
  options: ImportOptions;
  maxInflatedBytes: number;
  /** The time zones PostgreSQL knows, for the thread's check of a timezone column (src/lib/time-zone.ts). */
  databaseTimeZones: string[] | null;
}

/** What a file holds once read: the counts only the file decides, and the first row errors. */
export interface ParsedFile {
  rows: number;
  invalid: number;
  /** Phones repeated within the file. */
  duplicates: number;
  errors: RowError[];
}

/** Messages of the parser thread, in order: batches and progress, then `done` or `refused`. */
export type ParserMessage =
  | { kind: 'batch'; contacts: ContactRow[] }
  | { kind: 'progress'; rows: number }
  | { kind: 'done'; file: ParsedFile }
  | { kind: 'refused'; code: ImportFailureCode; message: string };

/** Contacts per batch handed over: large enough to cost few round trips, small enough to stream. */
export const PARSER_BATCH = 2_000;
/** How often (in data rows) the thread tells how far it read. */
export const PARSER_PROGRESS_EVERY = 5_000;
/**
 * The parser thread's heap. A 100,000-row XLSX needs a few tens of MB (exceljs keeps the
 * workbook's shared strings); past this, V8 stops the thread, not the process.
 */
const PARSER_HEAP_MB = 128;
const PARSER_YOUNG_GENERATION_MB = 24;

/**
 * Reads an uploaded file in a worker thread of its own and hands its contacts over in batches:
 * whatever a hostile file does to the parser (a heap exhausted by a bomb the bounds did not
 * catch) ends that thread, never the process that serves requests and runs the other jobs. The
 * thread reads ahead by one batch at most, so a slow database holds the file, not memory.
 * Yields batches and progress; returns the file's counts; throws ImportFileError when the file
 * is refused.
 */
export async function* parseInThread(
  input: ParserInput,
): AsyncGenerator<Extract<ParserMessage, { kind: 'batch' | 'progress' }>, ParsedFile> {
  const worker = startThread(input);
  // The thread's own failure (out of memory) comes before its exit; the exit ends the messages.
  let failure: unknown;
  worker.once('error', (error) => (failure ??= error));
  const stopped = new AbortController();
  worker.once('exit', () => stopped.abort());
  try {
    for await (const [message] of on(worker, 'message', { signal: stopped.signal }) as AsyncIterable<
      [ParserMessage]
    >) {
      switch (message.kind) {
        case 'done':
          return message.file;
        case 'refused':
          throw new ImportFileError(message.code, message.message);
        case 'batch':
          yield message;
          // Taken: the thread may hand over the next one.
          worker.postMessage('next');
          break;
        default:
          yield message;
      }
    }
  } catch (error) {
    const cause = failure ?? error;
    if ((cause as { code?: string }).code === 'ERR_WORKER_OUT_OF_MEMORY') {
      throw new ImportFileError(
        'unreadable_file',
        `The file needs more than the ${PARSER_HEAP_MB} MB of memory an import may use to be read`,
      );
    }
    if (failure) throw failure;
    if (stopped.signal.aborted)
      throw new Error('The import parser thread stopped before the end of the file');
    throw error;
  } finally {
    await worker.terminate();
  }
  // The messages only end when the thread does, which the catch above reports.
  throw new Error('The import parser thread stopped before the end of the file');
}

/**
 * Built (dist/), the thread is plain JavaScript. Run from the sources (tests, `tsx`), it is
 * TypeScript: the thread registers tsx first, since a worker does not take loader hooks from
 * `--import` on this Node.
 */
function startThread(input: ParserInput): Worker {
  const options = {
    workerData: input,
    // Heap limits come from resourceLimits alone, not from the process's own V8 flags.
    execArgv: [],
    resourceLimits: {
      maxOldGenerationSizeMb: PARSER_HEAP_MB,
      maxYoungGenerationSizeMb: PARSER_YOUNG_GENERATION_MB,
    },
  };
  if (import.meta.url.endsWith('.js'))
    return new Worker(new URL('./import-parser.thread.js', import.meta.url), options);
  const tsx = import.meta.resolve('tsx/esm/api');
  const thread = new URL('./import-parser.thread.ts', import.meta.url).href;
  return new Worker(
    `import(${JSON.stringify(tsx)}).then((tsx) => { tsx.register(); return import(${JSON.stringify(thread)}); })`,
    { ...options, eval: true },
  );
}
