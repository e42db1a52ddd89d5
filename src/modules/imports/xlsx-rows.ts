import { createReadStream } from 'node:fs';
import { ImportFileError, KIB, rowTooLarge, type SheetRow } from './import-file-error.js';
import { IMPORT_MAX_COLUMNS, IMPORT_MAX_ROW_BYTES } from './import-options.js';

/**
 * Inflates every part of the zip once, counting, before exceljs reads it: a workbook whose parts
 * inflate beyond `maxBytes` (a zip bomb: one cell of 600 MB compresses to 0.6 MB) is refused
 * as soon as the count passes it, or at once when a part's header says it would. It reads the
 * file with the parser exceljs itself uses, so both see the same parts.
 */
export async function checkInflatedSize(path: string, maxBytes: number): Promise<void> {
  const { default: unzipper } = await import('unzipper');
  const input = createReadStream(path);
  const zip = input.pipe(unzipper.Parse({ forceStream: true }));
  input.once('error', (error) => zip.destroy(error));
  const refuse = () =>
    new ImportFileError(
      'unreadable_file',
      `The workbook's parts inflate to more than ${Math.round(maxBytes / (KIB * KIB))} MB; it cannot be read as an import`,
    );
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

/** The rows of the workbook's first worksheet, each bounded before it is handed on. */
export async function* xlsxRows(path: string): AsyncGenerator<SheetRow> {
  // Loaded on first use: it weighs some 20 MB, which a process that never reads XLSX is spared.
  const { default: ExcelJS } = await import('exceljs');
  const input = createReadStream(path);
  const workbook = new ExcelJS.stream.xlsx.WorkbookReader(input, {
    worksheets: 'emit',
    // Handed over one by one rather than cached by exceljs, which keeps each string as a slice
    // of the XML text it was read from: some 30 MB more at the peak of a 100,000-row workbook.
    sharedStrings: 'emit',
    hyperlinks: 'ignore',
    styles: 'ignore',
    entries: 'ignore',
  });
  const sharedStrings = new SharedStringTable();
  try {
    // Worksheets come after every shared string: exceljs sets them aside until the zip is read.
    for await (const item of (workbook as unknown as { parse(): AsyncIterable<ParsedItem> }).parse()) {
      if (!('eventType' in item)) {
        sharedStrings.add(item.text);
        continue;
      }
      if (item.eventType !== 'worksheet' || !isFirstWorksheet(workbook, item.value)) continue;
      for await (const row of item.value as AsyncIterable<{ number: number; values: unknown }>) {
        const values = row.values as unknown[];
        // `values` is 1-based; position 0 is always empty.
        if (values.length - 1 > IMPORT_MAX_COLUMNS)
          throw rowTooLarge(
            row.number,
            `has ${(values.length - 1).toLocaleString('en')} columns, more than ${IMPORT_MAX_COLUMNS}`,
          );
        const cells = values.slice(1).map((value) => cellText(value, sharedStrings));
        if (
          cells.some(
            (cell) =>
              cell.length * 3 > IMPORT_MAX_ROW_BYTES && Buffer.byteLength(cell) > IMPORT_MAX_ROW_BYTES,
          )
        ) {
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

/** What exceljs's reader yields: a shared string (in order), or a part such as a worksheet. */
type ParsedItem = { index: number; text: unknown } | { eventType: string; value: unknown };

/**
 * The workbook's shared strings, as UTF-8 in one growing buffer with their offsets: a few bytes
 * per string besides its text, outside the JS heap. The inflated-size check bounds the whole.
 */
class SharedStringTable {
  private bytes = Buffer.alloc(64 * KIB);
  private used = 0;
  private ends = new Uint32Array(1_024);
  private count = 0;

  add(text: unknown): void {
    const value = cellText(text, this);
    const needed = this.used + Buffer.byteLength(value);
    if (needed > this.bytes.length) {
      const grown = Buffer.alloc(Math.max(needed, this.bytes.length * 2));
      this.bytes.copy(grown, 0, 0, this.used);
      this.bytes = grown;
    }
    this.used += this.bytes.write(value, this.used);
    if (this.count === this.ends.length) {
      const grown = new Uint32Array(this.ends.length * 2);
      grown.set(this.ends);
      this.ends = grown;
    }
    this.ends[this.count] = this.used;
    this.count += 1;
  }

  /** The string at `index`; '' for an index the workbook never defined. */
  get(index: number): string {
    if (!(index >= 0 && index < this.count)) return '';
    return this.bytes.toString('utf8', index === 0 ? 0 : this.ends[index - 1], this.ends[index]);
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
function cellText(value: unknown, sharedStrings: SharedStringTable): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'string') return value;
  // String() of an integer below 1e21 writes every digit (5511999990002, never 5.5119e12).
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (value instanceof Date) return value.toISOString();
  if (typeof value === 'object') {
    const cell = value as {
      sharedString?: number;
      richText?: { text: string }[];
      result?: unknown;
      text?: unknown;
      error?: unknown;
    };
    if (typeof cell.sharedString === 'number') return sharedStrings.get(cell.sharedString);
    if (cell.richText) return cell.richText.map((run) => run.text ?? '').join('');
    if ('result' in cell) return cellText(cell.result, sharedStrings);
    if (cell.text !== undefined) return cellText(cell.text, sharedStrings);
  }
  return '';
}
