import { open } from 'node:fs/promises';
import { csvRows } from './csv-rows.js';
import { ImportFileError, type SheetRow } from './import-file-error.js';
import type { FileFormat } from './import-options.js';
import { checkInflatedSize, xlsxRows } from './xlsx-rows.js';

export interface SheetLimits {
  /** The most bytes an XLSX's parts may inflate to, all together. */
  maxInflatedBytes: number;
}

const ZIP_SIGNATURE = Buffer.from([0x50, 0x4b, 0x03, 0x04]);
const SNIFF_BYTES = 4096;

/**
 * The rows of an uploaded file, streamed: CSV through csv-parse, XLSX through exceljs's
 * streaming reader (first worksheet only). Every row is bounded (IMPORT_MAX_COLUMNS values,
 * IMPORT_MAX_ROW_BYTES) before it is handed on, and an XLSX's parts may not inflate beyond
 * `limits.maxInflatedBytes`. Whatever else goes wrong while reading is the file's fault and
 * becomes `unreadable_file`.
 */
export async function* readSheetRows(
  path: string,
  format: FileFormat,
  delimiter: string,
  limits: SheetLimits,
): AsyncGenerator<SheetRow> {
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
    throw new ImportFileError(
      'unreadable_file',
      `The file could not be read as ${format.toUpperCase()}: ${error instanceof Error ? error.message : String(error)}`,
    );
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
    throw new ImportFileError(
      'unreadable_file',
      'The file is not CSV text (an XLSX file needs file_format xlsx)',
    );
  }
}
