import { createReadStream } from 'node:fs';
import { Transform } from 'node:stream';
import { parse } from 'csv-parse';
import { ImportFileError, KIB, rowTooLarge, type SheetRow } from './import-file-error.js';
import { IMPORT_MAX_COLUMNS, IMPORT_MAX_ROW_BYTES } from './import-options.js';

/**
 * The longest physical line, in bytes, the CSV parser is given. Any longer line makes its row
 * longer than IMPORT_MAX_ROW_BYTES (quoting at most doubles a value and adds two quotes per
 * value), so the row is refused anyway; cutting the file there keeps a line of ten million
 * delimiters from becoming an array of ten million values.
 */
const MAX_CSV_LINE_BYTES = 4 * IMPORT_MAX_ROW_BYTES + 2;

/** The rows of a CSV file, each bounded before it is handed on. */
export async function* csvRows(path: string, delimiter: string): AsyncGenerator<SheetRow> {
  const input = createReadStream(path);
  const text = input.pipe(strictUtf8Text());
  const lines = text.pipe(lineGuard());
  // Empty lines are kept as records so that row numbers stay those a spreadsheet shows. The
  // record size bounds a quoted value running over many short lines, which the line guard
  // cannot see (it counts the characters of values, never delimiters).
  const parser = lines.pipe(
    parse({
      delimiter,
      bom: true,
      relax_column_count: true,
      relax_quotes: true,
      skip_empty_lines: false,
      max_record_size: IMPORT_MAX_ROW_BYTES,
    }),
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
    if (code === 'CSV_MAX_RECORD_SIZE' || (lines.cut && code?.startsWith('CSV_')))
      throw tooLong((records ?? parsed) + 1);
    throw error;
  } finally {
    input.destroy();
  }
  if (held && lines.cut) throw tooLong(held.number);
  if (held) yield held;
}

/** A CSV row's number of values, and its values with the delimiters between them, as UTF-8. */
function checkCsvRow({ number, cells }: SheetRow, delimiter: string): void {
  if (cells.length > IMPORT_MAX_COLUMNS)
    throw rowTooLarge(
      number,
      `has ${cells.length.toLocaleString('en')} columns, more than ${IMPORT_MAX_COLUMNS}`,
    );
  let characters = (cells.length - 1) * delimiter.length;
  for (const cell of cells) characters += cell.length;
  // A UTF-16 unit is at most 3 bytes of UTF-8: most rows need no exact count.
  if (characters * 3 <= IMPORT_MAX_ROW_BYTES) return;
  let bytes = (cells.length - 1) * Buffer.byteLength(delimiter);
  for (const cell of cells) bytes += Buffer.byteLength(cell);
  if (bytes > IMPORT_MAX_ROW_BYTES)
    throw rowTooLarge(number, `is longer than ${IMPORT_MAX_ROW_BYTES / KIB} KiB`);
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
  const refuse = (problem: string) =>
    new ImportFileError('unreadable_file', `The file is not UTF-8 CSV text: ${problem}`);
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
