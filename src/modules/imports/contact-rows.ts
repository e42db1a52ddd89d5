import { z } from 'zod';
import { type Issue, ValidationError } from '../../errors.js';
import { parseInput } from '../../lib/validation.js';
import { contactFields } from '../contacts/contact-fields.js';
import { ImportFileError, type SheetRow } from './import-file-error.js';
import {
  type ContactColumn,
  IMPORT_MAX_ROW_ERRORS,
  IMPORT_MAX_ROWS,
  type ImportOptions,
} from './import-options.js';

// The single-contact rules; only its strictness is dropped, the row is built here.
const contactRow = z.object(contactFields);

export type ContactRow = z.output<typeof contactRow>;

export interface RowError {
  row: number;
  field: string;
  issue: Issue;
}

/**
 * Turns the rows of a sheet into contacts, by the import's rules (docs/imports.md): the header
 * (when there is one) names the columns, empty rows are skipped, invalid rows are counted and
 * the first errors kept, and a phone seen earlier in the file is a duplicate. Everything the
 * job reports that the file alone decides is counted here.
 */
export class ContactRowMapper {
  /** Data rows: neither the header nor empty rows. */
  rows = 0;
  invalid = 0;
  /** Phones repeated within the file; those already in the campaign are counted by the database. */
  duplicates = 0;
  readonly errors: RowError[] = [];

  private indexes: Map<ContactColumn, number> | null;
  private widest = 0;
  private readonly phones = new Set<string>();

  constructor(private readonly options: ImportOptions) {
    this.indexes = options.hasHeader ? null : numberedColumns(options.columns);
  }

  /** The contact a row holds, or null for a header, empty, invalid or duplicate row. */
  accept(row: SheetRow): ContactRow | null {
    if (row.cells.every((cell) => cell.trim() === '')) return null;
    if (!this.indexes) {
      this.indexes = namedColumns(this.options.columns, row.cells);
      return null;
    }
    this.rows += 1;
    if (this.rows > IMPORT_MAX_ROWS) {
      throw new ImportFileError(
        'too_many_rows',
        `The file has more than ${IMPORT_MAX_ROWS.toLocaleString('en')} data rows`,
      );
    }
    this.widest = Math.max(this.widest, row.cells.length);
    const contact = this.validate(row);
    if (!contact) return null;
    if (this.phones.has(contact.phone)) {
      this.duplicates += 1;
      return null;
    }
    this.phones.add(contact.phone);
    return contact;
  }

  /** Checks what can only be known at the end: a header that never came, a column no row reached. */
  finish(): void {
    if (!this.indexes) this.indexes = namedColumns(this.options.columns, []);
    if (this.options.hasHeader || this.rows === 0) return;
    for (const [column, index] of this.indexes) {
      if (index >= this.widest) {
        throw new ImportFileError(
          'missing_column',
          `No row has a column ${index + 1} (the ${column} column); the widest row has ${this.widest}`,
        );
      }
    }
  }

  private validate(row: SheetRow): ContactRow | null {
    const value = (column: ContactColumn) => {
      const index = this.indexes!.get(column);
      const text = index === undefined ? '' : (row.cells[index] ?? '').trim();
      return text === '' ? undefined : text;
    };
    const tags = value('tags');
    try {
      return parseInput(contactRow, {
        phone: value('phone'),
        name: value('name'),
        email: value('email'),
        document: value('document'),
        timezone: value('timezone'),
        tags:
          tags === undefined
            ? undefined
            : [
                ...new Set(
                  tags
                    .split(/[;|]/)
                    .map((tag) => tag.trim())
                    .filter(Boolean),
                ),
              ],
      });
    } catch (error) {
      if (!(error instanceof ValidationError)) throw error;
      this.invalid += 1;
      for (const { field, issue } of error.details) {
        if (this.errors.length < IMPORT_MAX_ROW_ERRORS) this.errors.push({ row: row.number, field, issue });
      }
      return null;
    }
  }
}

function numberedColumns(columns: ImportOptions['columns']): Map<ContactColumn, number> {
  return new Map(
    Object.entries(columns).map(([column, number]) => [column as ContactColumn, Number(number) - 1]),
  );
}

/** Header names match without regard to case or surrounding spaces. */
function namedColumns(columns: ImportOptions['columns'], header: string[]): Map<ContactColumn, number> {
  const positions = new Map<string, number>();
  header.forEach((name, index) => {
    const key = name.trim().toLowerCase();
    if (!positions.has(key)) positions.set(key, index);
  });
  const indexes = new Map<ContactColumn, number>();
  for (const [column, name] of Object.entries(columns) as [ContactColumn, string][]) {
    const index = positions.get(name.trim().toLowerCase());
    if (index === undefined)
      throw new ImportFileError(
        'missing_column',
        `The header has no column named "${name}" (the ${column} column)`,
      );
    indexes.set(column, index);
  }
  return indexes;
}
