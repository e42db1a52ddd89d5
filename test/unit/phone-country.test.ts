import { describe, expect, it } from 'vitest';
import { claimingCountry, countryOf } from '../../src/lib/phone.js';
import { isAllowedDestination } from '../../src/modules/quotas/account-quotas.js';

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

describe('claimingCountry', () => {
  it('names the country whose numbering plan has the number', () => {
    expect(claimingCountry('12025550123')).toBe('US');
    expect(claimingCountry('16135550123')).toBe('CA');
    expect(claimingCountry('74951234567')).toBe('RU');
    expect(claimingCountry('77011234567')).toBe('KZ');
    expect(claimingCountry('447911123456')).toBe('GG');
  });

  it('names no country for a number of a shared calling code in no country’s range', () => {
    for (const digits of [
      '10005550100',
      '11235550100',
      '19115550100',
      '19765550100',
      '19995550100',
      '18805550100',
    ])
      expect(claimingCountry(digits), digits).toBeNull();
    expect(claimingCountry('73001234567')).toBeNull();
    expect(claimingCountry('70001234567')).toBeNull();
  });
});

describe('isAllowedDestination', () => {
  it('with a list, refuses a number no country claims; without one, allows it', () => {
    expect(isAllowedDestination(['US'], '19115550100')).toBe(false);
    expect(isAllowedDestination(['RU'], '73001234567')).toBe(false);
    expect(isAllowedDestination(['US'], '12025550123')).toBe(true);
    expect(isAllowedDestination([], '19115550100')).toBe(true);
  });
});
