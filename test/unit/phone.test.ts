import { describe, expect, it } from 'vitest';
import { ValidationError } from '../../src/errors.js';
import { e164, normalizedPhone } from '../../src/lib/phone.js';
import { parseInput } from '../../src/lib/validation.js';

function issueOf(schema: typeof e164 | typeof normalizedPhone, value: unknown) {
  try {
    parseInput(schema, value);
    return null;
  } catch (error) {
    if (!(error instanceof ValidationError)) throw error;
    return error.details[0]?.issue;
  }
}

describe('phone rules', () => {
  it('takes E.164 digits with or without the plus: 7 to 15 digits, the first not 0', () => {
    for (const valid of ['1234567', '5511999998888', '+5511999998888', '123456789012345'])
      expect(issueOf(e164, valid), valid).toBeNull();
    for (const invalid of [
      '123456',
      '1234567890123456',
      '0511999998888',
      '++5511999998888',
      '55 11 99999 8888',
      '55119999a8888',
      '',
    ]) {
      expect(issueOf(e164, invalid), invalid).toBe('invalid_e164');
    }
  });

  it('makes a phone as people write it E.164 digits, then applies the same rule', () => {
    expect(parseInput(normalizedPhone, ' +55 (11) 99999-8888 ')).toBe('5511999998888');
    expect(parseInput(normalizedPhone, '55.11.99999.8888')).toBe('5511999998888');
    expect(issueOf(normalizedPhone, '+0 11 9999')).toBe('invalid_e164');
    expect(issueOf(normalizedPhone, '++5511999998888')).toBe('invalid_e164');
  });
});
