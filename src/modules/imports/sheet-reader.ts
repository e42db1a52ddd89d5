import { createReadStream } from 'node:fs';
import { open } from 'node:fs/promises';
import { Transform } from 'node:stream';
import { parse } from 'csv-parse';
import type { FileFormat } from './import-options.js';

type ImportFailureCode = 'too_many_rows' | 'unreadable_file' | 'missing_column';

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

const ZIP_SIGNATURE = Buffer.from([0x50, 0x4b, 0x03, 0x04]);
const SNIFF_BYTES = 4096;

/**
 * The rows of an uploaded file, streamed: CSV through csv-parse, XLSX through exceljs's
 * streaming reader (first worksheet only). Whatever goes wrong while reading is the file's
 * fault and becomes `unreadable_file`.
 */
export async function* readSheetRows(path: string, format: FileFormat, delimiter: string): AsyncGenerator<SheetRow> {
  await checkSignature(path, format);
  try {
    yield* format === 'csv' ? csvRows(path, delimiter) : xlsxRows(path);
  } catch (error) {
    if (error instanceof ImportFileError) throw error;
    throw new ImportFileError('unreadable_file', `The file could not be read as ${format.toUpperCase()}: ${error instanceof Error ? error.message : String(error)}`);
  }
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
  // Empty lines are kept as records so that row numbers stay those a spreadsheet shows.
  const parser = text.pipe(parse({ delimiter, bom: true, relax_column_count: true, relax_quotes: true, skip_empty_lines: false }));
  input.once('error', (error) => parser.destroy(error));
  text.once('error', (error) => parser.destroy(error));
  let number = 0;
  try {
    for await (const record of parser as AsyncIterable<string[]>) {
      number += 1;
      yield { number, cells: record };
    }
  } finally {
    input.destroy();
  }
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
        yield { number: row.number, cells: values.slice(1).map(cellText) };
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
