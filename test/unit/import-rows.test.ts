import { describe, expect, it } from 'vitest';
import { ContactRowMapper } from '../../src/modules/imports/contact-rows.js';
import { ImportFileError, type SheetRow } from '../../src/modules/imports/import-file-error.js';
import type { ImportOptions } from '../../src/modules/imports/import-options.js';

const rows = (...cells: string[][]): SheetRow[] =>
  cells.map((row, index) => ({ number: index + 1, cells: row }));

function mapAll(options: ImportOptions, sheet: SheetRow[]) {
  const mapper = new ContactRowMapper(options);
  const contacts = sheet.map((row) => mapper.accept(row)).filter((contact) => contact !== null);
  mapper.finish();
  return { contacts, mapper };
}

const withHeader: ImportOptions = {
  hasHeader: true,
  delimiter: ',',
  columns: { phone: 'Phone', name: 'name', tags: 'Tags' },
};

describe('import row rules', () => {
  it('names columns by the header, whatever its case and spaces, and normalises each contact', () => {
    const { contacts, mapper } = mapAll(
      withHeader,
      rows([' PHONE ', 'Name', 'tags'], ['+55 (11) 99999-0001', ' Ana ', 'vip; sp|vip']),
    );
    expect(contacts).toEqual([{ phone: '5511999990001', name: 'Ana', tags: ['vip', 'sp'] }]);
    expect(mapper.rows).toBe(1);
  });

  it('skips empty rows without counting them, counts invalid rows with their spreadsheet row number', () => {
    const { contacts, mapper } = mapAll(
      withHeader,
      rows(
        ['phone', 'name', 'tags'],
        ['5511999990001', 'Ana', ''],
        ['', ' ', ''],
        ['12', 'Bob', ''],
        ['5511999990003', 'x'.repeat(201), ''],
      ),
    );
    expect(contacts.map((contact) => contact.phone)).toEqual(['5511999990001']);
    expect({ rows: mapper.rows, invalid: mapper.invalid }).toEqual({ rows: 3, invalid: 2 });
    expect(mapper.errors).toEqual([
      { row: 4, field: 'phone', issue: 'invalid_e164' },
      { row: 5, field: 'name', issue: 'too_long' },
    ]);
  });

  it('counts a phone seen earlier in the file as a duplicate, however it was written', () => {
    const { contacts, mapper } = mapAll(
      withHeader,
      rows(['phone', 'name', 'tags'], ['5511999990001', 'Ana', ''], ['+55 11 99999 0001', 'Ana again', '']),
    );
    expect(contacts).toHaveLength(1);
    expect(mapper.duplicates).toBe(1);
  });

  it('refuses a file whose header lacks a named column', () => {
    const mapper = new ContactRowMapper(withHeader);
    expect(() => mapper.accept(rows(['phone', 'name'])[0]!)).toThrow(ImportFileError);
    expect(() => new ContactRowMapper(withHeader).finish()).toThrow(/no column named "Phone"/);
  });

  it('reads numbered columns without a header, and refuses a column no row reaches', () => {
    const numbered: ImportOptions = { hasHeader: false, delimiter: ',', columns: { phone: 2, name: 1 } };
    expect(mapAll(numbered, rows(['Ana', '5511999990001'])).contacts).toEqual([
      { phone: '5511999990001', name: 'Ana' },
    ]);
    const beyond: ImportOptions = { hasHeader: false, delimiter: ',', columns: { phone: 1, email: 3 } };
    expect(() => mapAll(beyond, rows(['5511999990001', 'Ana']))).toThrow(
      expect.objectContaining({ code: 'missing_column' }),
    );
  });
});
