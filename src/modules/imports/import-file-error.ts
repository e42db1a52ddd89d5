export const KIB = 1024;

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

export function rowTooLarge(number: number, why: string): ImportFileError {
  return new ImportFileError(
    'row_too_large',
    `Row ${number.toLocaleString('en')} ${why}; nothing was imported`,
  );
}
