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
        if (values.length - 1 > IMPORT_MAX_COLUMNS)
          throw rowTooLarge(
            row.number,
            `has ${(values.length - 1).toLocaleString('en')} columns, more than ${IMPORT_MAX_COLUMNS}`,
          );
        const cells = values.slice(1).map(cellText);
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
    const cell = value as {
      richText?: { text: string }[];
      result?: unknown;
      text?: unknown;
      error?: unknown;
    };
    if (cell.richText) return cell.richText.map((run) => run.text).join('');
    if ('result' in cell) return cellText(cell.result);
    if (cell.text !== undefined) return cellText(cell.text);
  }
  return '';
}
