import { z } from 'zod';
import { issue } from '../../lib/validation.js';

/** The bounds of one upload: 10 MB (10 × 1024 × 1024 bytes) and 100,000 data rows per file. */
export const IMPORT_MAX_FILE_BYTES = 10 * 1024 * 1024;
export const IMPORT_MAX_ROWS = 100_000;
export const IMPORT_MAX_ROW_ERRORS = 100;
/** A row's values with the delimiters between them (CSV), or one cell (XLSX), as UTF-8. */
export const IMPORT_MAX_ROW_BYTES = 64 * 1024;
export const IMPORT_MAX_COLUMNS = 100;

export const FILE_FORMATS = ['csv', 'xlsx'] as const;
export type FileFormat = (typeof FILE_FORMATS)[number];
export type ContactColumn = 'phone' | 'name' | 'email' | 'document' | 'tags' | 'timezone';

/** What the worker needs to read a file, stored with the job. */
export interface ImportOptions {
  hasHeader: boolean;
  delimiter: string;
  /** A header name when the file has a header, otherwise a 1-based column number. */
  columns: Partial<Record<ContactColumn, string | number>>;
}

// A tab is awkward to type in a form field, so its usual spellings are taken too.
const DELIMITERS: Record<string, string> = {
  ',': ',',
  ';': ';',
  '|': '|',
  '\t': '\t',
  '\\t': '\t',
  tab: '\t',
};
// The widest sheet XLSX allows.
const MAX_COLUMN_NUMBER = 16_384;

const COLUMN_FIELDS = [
  'phoneColumn',
  'nameColumn',
  'emailColumn',
  'documentColumn',
  'tagsColumn',
  'timezoneColumn',
] as const;

const columnName = (description: string) => z.string().trim().min(1).max(200).meta({ description }).nullish();
const OTHER_COLUMN = 'A header name, or a 1-based column number without a header';

function isColumnNumber(value: string): boolean {
  return /^[1-9][0-9]{0,4}$/.test(value) && Number(value) <= MAX_COLUMN_NUMBER;
}

/** The fields of the import form (GraphQL names); `phoneColumn` is required when the file has a header. */
export const importInput = z
  .strictObject({
    fileFormat: z
      .enum(FILE_FORMATS)
      .meta({
        description:
          'Defaults from the file name (.csv, .txt, .xlsx); required when the name ends in none of them',
      })
      .nullish(),
    phoneColumn: columnName(
      'Required when the file has a header; without one, a 1-based column number, 1 when left out',
    ),
    nameColumn: columnName(OTHER_COLUMN),
    emailColumn: columnName(OTHER_COLUMN),
    documentColumn: columnName(OTHER_COLUMN),
    tagsColumn: columnName(`${OTHER_COLUMN}; its tags are split on ; or |`),
    timezoneColumn: columnName(`${OTHER_COLUMN}; an IANA time zone per contact, for its send window`),
    delimiter: z
      .string()
      .refine((value) => Object.hasOwn(DELIMITERS, value), issue('invalid_value'))
      .meta({
        description: 'CSV only: , (default), ;, | or a tab (also written \\t or tab)',
        enum: Object.keys(DELIMITERS),
      })
      .nullish(),
    hasHeader: z
      .boolean()
      .meta({ description: 'Whether the first row names the columns; true when left out' })
      .nullish(),
  })
  .meta({
    description: 'How to read the file (the form fields of POST /v1/campaigns/{campaign}/contacts/import)',
    // phoneColumn is required unless hasHeader is false.
    if: { properties: { hasHeader: { const: false } }, required: ['hasHeader'] },
    else: { required: ['phoneColumn'] },
  })
  .superRefine((input, context) => {
    const hasHeader = input.hasHeader ?? true;
    if (hasHeader && !input.phoneColumn) {
      context.addIssue({
        code: 'custom',
        path: ['phoneColumn'],
        message: 'phoneColumn is required when the file has a header',
        ...issue('required'),
      });
    }
    if (hasHeader) return;
    for (const field of COLUMN_FIELDS) {
      const value = input[field];
      if (value && !isColumnNumber(value)) {
        context.addIssue({
          code: 'custom',
          path: [field],
          message: 'Without a header, columns are 1-based numbers',
          ...issue('invalid_value'),
        });
      }
    }
  });

export type ImportInput = z.output<typeof importInput>;

/**
 * The job's options from a valid input. Without a header the phone is in the first column
 * unless told otherwise, since no name can be required of a file that has none.
 */
export function importOptions(input: ImportInput): ImportOptions {
  const hasHeader = input.hasHeader ?? true;
  const columns: ImportOptions['columns'] = {};
  for (const field of COLUMN_FIELDS) {
    const value = input[field];
    if (value) columns[field.replace('Column', '') as ContactColumn] = hasHeader ? value : Number(value);
  }
  if (!hasHeader) columns.phone ??= 1;
  return { hasHeader, delimiter: DELIMITERS[input.delimiter ?? ','] ?? ',', columns };
}

/** `file_format` defaults from the file name; null when the name says neither. */
export function formatFromName(filename: string): FileFormat | null {
  const extension = /\.([A-Za-z0-9]+)$/.exec(filename)?.[1]?.toLowerCase();
  if (extension === 'csv' || extension === 'txt') return 'csv';
  if (extension === 'xlsx') return 'xlsx';
  return null;
}
