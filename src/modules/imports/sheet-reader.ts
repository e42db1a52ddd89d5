import { createReadStream } from 'node:fs';
import { open } from 'node:fs/promises';
import { Transform } from 'node:stream';
import { parse } from 'csv-parse';
import { IMPORT_MAX_COLUMNS, IMPORT_MAX_ROW_BYTES, type FileFormat } from './import-options.js';

export type ImportFailureCode = 'too_many_rows' | 'unreadable_file' | 'missing_column' | 'row_too_large';

/** Why a whole file is refused: the job ends `failed` with this code and imports nothing. */
export class ImportFileError extends Error {
  constructor(
    readonly code: ImportFailureCode,
    message: string,
  ) {
    super(message);
    this.name = 'ImportFileError';
  }
}

/** One row as a spreadsheet shows it: its 1-based number and its cells as text. */
export interface SheetRow {
  number: number;
  cells: string[];
}

export interface SheetLimits {
  /** The most bytes an XLSX's parts may inflate to, all together. */
  maxInflatedBytes: number;
}

const ZIP_SIGNATURE = Buffer.from([0x50, 0x4b, 0x03, 0x04]);
const SNIFF_BYTES = 4096;
const KIB = 1024;
/**
 * The longest physical line, in bytes, the CSV parser is given. Any longer line makes its row
 * longer than IMPORT_MAX_ROW_BYTES (quoting at most doubles a value and adds two quotes per
 * value), so the row is refused anyway; cutting the file there keeps a line of ten million
 * delimiters from becoming an array of ten million values.
 */
const MAX_CSV_LINE_BYTES = 4 * IMPORT_MAX_ROW_BYTES + 2;

/**
 * The rows of an uploaded file, streamed: CSV through csv-parse, XLSX through exceljs's
 * streaming reader (first worksheet only). Every row is bounded (IMPORT_MAX_COLUMNS values,
 * IMPORT_MAX_ROW_BYTES) before it is handed on, and an XLSX's parts may not inflate beyond
 * `limits.maxInflatedBytes`. Whatever else goes wrong while reading is the file's fault and
 * becomes `unreadable_file`.
 */
export async function* readSheetRows(path: string, format: FileFormat, delimiter: string, limits: SheetLimits): AsyncGenerator<SheetRow> {
  await checkSignature(path, format);
  try {
    if (format === 'csv') {
      yield* csvRows(path, delimiter);
    } else {
      await checkInflatedSize(path, limits.maxInflatedBytes);
      yield* xlsxRows(path);
    }
  } catch (error) {
    if (error instanceof ImportFileError) throw error;
    throw new ImportFileError('unreadable_file', `The file could not be read as ${format.toUpperCase()}: ${error instanceof Error ? error.message : String(error)}`);
  }
}

function rowTooLarge(number: number, why: string): ImportFileError {
  return new ImportFileError('row_too_large', `Row ${number.toLocaleString('en')} ${why}; nothing was imported`);
}

/** An XLSX is a zip and a CSV is text: a file that is neither is refused before parsing it. */
async function checkSignature(path: string, format: FileFormat): Promise<void> {
  const file = await open(path, 'r');
  let head: Buffer;
  try {
    const { buffer, bytesRead } = await file.read(Buffer.alloc(SNIFF_BYTES), 0, SNIFF_BYTES, 0);
    head = buffer.subarray(0, bytesRead);
  } finally {
    await file.close();
  }
  if (format === 'xlsx' && !head.subarray(0, 4).equals(ZIP_SIGNATURE)) {
    throw new ImportFileError('unreadable_file', 'The file is not an XLSX workbook');
  }
  if (format === 'csv' && head.includes(0)) {
    throw new ImportFileError('unreadable_file', 'The file is not CSV text (an XLSX file needs file_format xlsx)');
  }
}

async function* csvRows(path: string, delimiter: string): AsyncGenerator<SheetRow> {
  const input = createReadStream(path);
  const text = input.pipe(strictUtf8Text());
  const lines = text.pipe(lineGuard());
  // Empty lines are kept as records so that row numbers stay those a spreadsheet shows. The
  // record size bounds a quoted value running over many short lines, which the line guard
  // cannot see (it counts the characters of values, never delimiters).
  const parser = lines.pipe(
    parse({ delimiter, bom: true, relax_column_count: true, relax_quotes: true, skip_empty_lines: false, max_record_size: IMPORT_MAX_ROW_BYTES }),
  );
  for (const stage of [input, text, lines]) stage.once('error', (error: Error) => parser.destroy(error));
  const tooLong = (number: number) => rowTooLarge(number, `is longer than ${IMPORT_MAX_ROW_BYTES / KIB} KiB`);
  // Each row is handed on once the next one is read: the last row before a cut is the one cut.
  let held: SheetRow | null = null;
  let parsed = 0;
  try {
    for await (const record of parser as AsyncIterable<string[]>) {
      parsed += 1;
      if (held) yield held;
      held = { number: parsed, cells: record };
      checkCsvRow(held, delimiter);
    }
  } catch (error) {
    // The parser counts the rows it read before the one it fails on; buffered ones may not have arrived here.
    const { code, records } = error as { code?: string; records?: number };
    if (code === 'CSV_MAX_RECORD_SIZE' || (lines.cut && code?.startsWith('CSV_'))) throw tooLong((records ?? parsed) + 1);
    throw error;
  } finally {
    input.destroy();
  }
  if (held && lines.cut) throw tooLong(held.number);
  if (held) yield held;
}

/** A CSV row's number of values, and its values with the delimiters between them, as UTF-8. */
function checkCsvRow({ number, cells }: SheetRow, delimiter: string): void {
  if (cells.length > IMPORT_MAX_COLUMNS) throw rowTooLarge(number, `has ${cells.length.toLocaleString('en')} columns, more than ${IMPORT_MAX_COLUMNS}`);
  let characters = (cells.length - 1) * delimiter.length;
  for (const cell of cells) characters += cell.length;
  // A UTF-16 unit is at most 3 bytes of UTF-8: most rows need no exact count.
  if (characters * 3 <= IMPORT_MAX_ROW_BYTES) return;
  let bytes = (cells.length - 1) * Buffer.byteLength(delimiter);
  for (const cell of cells) bytes += Buffer.byteLength(cell);
  if (bytes > IMPORT_MAX_ROW_BYTES) throw rowTooLarge(number, `is longer than ${IMPORT_MAX_ROW_BYTES / KIB} KiB`);
}

/**
 * Passes the text through until a physical line passes MAX_CSV_LINE_BYTES, then ends it there
 * and says so (`cut`): the parser reads every row before that line whole, and the reader refuses
 * the row that line belongs to, with its number.
 */
function lineGuard(): Transform & { cut: boolean } {
  let sinceNewline = 0;
  const guard = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      if (guard.cut) {
        done();
        return;
      }
      for (let start = 0; ; ) {
        const newline = chunk.indexOf(0x0a, start);
        const end = newline === -1 ? chunk.length : newline;
        if (sinceNewline + end - start > MAX_CSV_LINE_BYTES) {
          guard.cut = true;
          done(null, chunk.subarray(0, start + MAX_CSV_LINE_BYTES - sinceNewline));
          guard.push(null);
          return;
        }
        if (newline === -1) {
          sinceNewline += end - start;
          break;
        }
        sinceNewline = 0;
        start = newline + 1;
      }
      done(null, chunk);
    },
  }) as Transform & { cut: boolean };
  guard.cut = false;
  return guard;
}

/**
 * The file's bytes as text, refused when they are not UTF-8 (decoded leniently, a Latin-1 file
 * would import every accented name with U+FFFD in it) or hold a NUL, which no CSV text has and
 * PostgreSQL cannot store.
 */
function strictUtf8Text(): Transform {
  const decoder = new TextDecoder('utf-8', { fatal: true });
  const refuse = (problem: string) => new ImportFileError('unreadable_file', `The file is not UTF-8 CSV text: ${problem}`);
  const decode = (chunk: Buffer | undefined): string => {
    try {
      return chunk ? decoder.decode(chunk, { stream: true }) : decoder.decode();
    } catch {
      throw refuse('it holds bytes that are not UTF-8 (save it as CSV UTF-8)');
    }
  };
  return new Transform({
    readableObjectMode: false,
    decodeStrings: true,
    transform(chunk: Buffer, _encoding, done) {
      try {
        const decoded = decode(chunk);
        if (decoded.includes('\u0000')) throw refuse('it holds a NUL character');
        done(null, decoded);
      } catch (error) {
        done(error as Error);
      }
    },
    flush(done) {
      try {
        done(null, decode(undefined));
      } catch (error) {
        done(error as Error);
      }
    },
  });
}

/**
 * Inflates every part of the zip once, counting, before exceljs reads it: a workbook whose parts
 * inflate beyond `maxBytes` (a zip bomb: one cell of 600 MB compresses to 0.6 MB) is refused
 * as soon as the count passes it, or at once when a part's header says it would. It reads the
 * file with the parser exceljs itself uses, so both see the same parts.
 */
async function checkInflatedSize(path: string, maxBytes: number): Promise<void> {
  const { default: unzipper } = await import('unzipper');
  const input = createReadStream(path);
  const zip = input.pipe(unzipper.Parse({ forceStream: true }));
  input.once('error', (error) => zip.destroy(error));
  const refuse = () =>
    new ImportFileError('unreadable_file', `The workbook's parts inflate to more than ${Math.round(maxBytes / (KIB * KIB))} MB; it cannot be read as an import`);
  let inflated = 0;
  try {
    for await (const entry of zip as AsyncIterable<import('unzipper').Entry>) {
      if (entry.vars.uncompressedSize > maxBytes - inflated) throw refuse();
      for await (const chunk of entry as AsyncIterable<Buffer>) {
        inflated += chunk.length;
        if (inflated > maxBytes) throw refuse();
      }
    }
  } finally {
    input.destroy();
    zip.destroy();
  }
}

async function* xlsxRows(path: string): AsyncGenerator<SheetRow> {
  // Loaded on first use: it weighs some 20 MB, which a process that never reads XLSX is spared.
  const { default: ExcelJS } = await import('exceljs');
  const input = createReadStream(path);
  const workbook = new ExcelJS.stream.xlsx.WorkbookReader(input, {
    worksheets: 'emit',
    sharedStrings: 'cache',
    hyperlinks: 'ignore',
    styles: 'ignore',
    entries: 'ignore',
  });
  try {
    for await (const worksheet of workbook) {
      if (!isFirstWorksheet(workbook, worksheet)) continue;
      for await (const row of worksheet) {
        const values = row.values as unknown[];
        // `values` is 1-based; position 0 is always empty.
        if (values.length - 1 > IMPORT_MAX_COLUMNS) throw rowTooLarge(row.number, `has ${(values.length - 1).toLocaleString('en')} columns, more than ${IMPORT_MAX_COLUMNS}`);
        const cells = values.slice(1).map(cellText);
        if (cells.some((cell) => cell.length * 3 > IMPORT_MAX_ROW_BYTES && Buffer.byteLength(cell) > IMPORT_MAX_ROW_BYTES)) {
          throw rowTooLarge(row.number, `has a cell longer than ${IMPORT_MAX_ROW_BYTES / KIB} KiB`);
        }
        yield { number: row.number, cells };
      }
      return;
    }
    throw new ImportFileError('unreadable_file', 'The workbook has no worksheet');
  } finally {
    input.destroy();
  }
}

interface WorkbookModel {
  model?: { sheets?: { name?: string }[] };
}

/** The first sheet in the workbook's own order, which need not be the first part of the zip. */
function isFirstWorksheet(workbook: unknown, worksheet: unknown): boolean {
  const first = (workbook as WorkbookModel).model?.sheets?.[0]?.name;
  return first === undefined || (worksheet as { name?: string }).name === first;
}

/** A cell as text: numbers keep every digit, formulas give their cached result. */
function cellText(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'string') return value;
  // String() of an integer below 1e21 writes every digit (5511999990002, never 5.5119e12).
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (value instanceof Date) return value.toISOString();
  if (typeof value === 'object') {
    const cell = value as { richText?: { text: string }[]; result?: unknown; text?: unknown; error?: unknown };
    if (cell.richText) return cell.richText.map((run) => run.text).join('');
    if ('result' in cell) return cellText(cell.result);
    if (cell.text !== undefined) return cellText(cell.text);
  }
  return '';
}
