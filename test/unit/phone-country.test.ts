import { describe, expect, it } from 'vitest';
import { countryOf } from '../../src/lib/phone.js';

describe('countryOf', () => {
  it('names the main country of a shared calling code', () => {
    expect(countryOf('447700900123')).toBe('GB');
    expect(countryOf('15555550100')).toBe('US');
  });

  it('names the country of a range inside a shared calling code', () => {
    expect(countryOf('447911123456')).toBe('GG');
    expect(countryOf('12025550123')).toBe('US');
  });

  it('reads single-country calling codes', () => {
    expect(countryOf('353871234567')).toBe('IE');
    expect(countryOf('5511987654321')).toBe('BR');
  });

  it('has no country for a calling code that does not exist', () => {
    expect(countryOf('999123456789')).toBeNull();
  });
});
