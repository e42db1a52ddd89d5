import { describe, expect, it } from 'vitest';
import type { RouteRecord } from '../../src/carriers/carrier-catalog.js';
import { splitCarrierUrl } from '../../src/carriers/carrier-url.js';
import { Circuit } from '../../src/carriers/routing/circuit.js';
import { parseRouteChoice } from '../../src/carriers/routing/route-input.js';
import { carrierOrder, RouteTable } from '../../src/carriers/routing/route-table.js';

const route = (
  id: string,
  prefix: string,
  carriers: string[],
  accountId: string | null = null,
): RouteRecord => ({
  id,
  prefix,
  accountId,
  carriers,
  split: null,
});

describe('the route table', () => {
  const table = new RouteTable([
    route('any', '*', ['cheap']),
    route('uk', '44', ['uk', 'cheap']),
    route('uk-mobile', '447', ['uk-mobile']),
    route('acme-uk', '44', ['acme'], 'acc_acme'),
    route('acme-any', '*', ['acme-any'], 'acc_acme'),
  ]);

  it('takes the longest matching prefix, and * when none matches', () => {
    expect(table.find('447700900123', null)?.route.id).toBe('uk-mobile');
    expect(table.find('442071234567', null)?.route.id).toBe('uk');
    expect(table.find('33612345678', null)?.route.id).toBe('any');
  });

  it("puts an account's own route before a global one, even a global one with a longer prefix", () => {
    expect(table.find('447700900123', 'acc_acme')?.route.id).toBe('acme-uk');
    expect(table.find('33612345678', 'acc_acme')?.route.id).toBe('acme-any');
    expect(table.find('447700900123', 'acc_other')?.route.id).toBe('uk-mobile');
  });

  it('covers nothing without a matching route', () => {
    expect(new RouteTable([route('uk', '44', ['uk'])]).find('33612345678', 'acc_acme')).toBeNull();
  });

  it('says why', () => {
    expect(table.find('447700900123', 'acc_other')?.reason).toMatch(/no route of its own.*prefix 447/);
  });
});

describe('the carrier order', () => {
  it('keeps an ordered list as it is', () => {
    expect(carrierOrder(route('r', '*', ['a', 'b', 'c']))).toEqual(['a', 'b', 'c']);
  });

  it('draws a split by weight, every carrier once', () => {
    const split = { ...route('r', '*', ['a', 'b']), split: { a: 70, b: 30 } };
    expect(carrierOrder(split, () => 0.69)).toEqual(['a', 'b']);
    expect(carrierOrder(split, () => 0.71)).toEqual(['b', 'a']);
  });
});

describe('route and carrier input', () => {
  it('reads --carriers and --split, exactly one of them', () => {
    expect(parseRouteChoice({ carriers: 'a,b' })).toEqual({ carriers: ['a', 'b'], split: null });
    expect(parseRouteChoice({ split: 'a=70,b=30' })).toEqual({
      carriers: ['a', 'b'],
      split: { a: 70, b: 30 },
    });
    expect(() => parseRouteChoice({})).toThrow(/either/);
    expect(() => parseRouteChoice({ carriers: 'a', split: 'a=1' })).toThrow(/either/);
    expect(() => parseRouteChoice({ split: 'a=0' })).toThrow(/split/);
    expect(() => parseRouteChoice({ carriers: 'a,a' })).toThrow(/carriers/);
  });

  it('keeps the password out of the URL it stores', () => {
    expect(splitCarrierUrl('smpp://tern:s3cret@smsc.example.com:2775?window=20')).toEqual({
      url: 'smpp://tern@smsc.example.com:2775?window=20',
      password: 's3cret',
      secretOptions: {},
    });
    expect(splitCarrierUrl('simulator://?delay_ms=50')).toEqual({
      url: 'simulator://?delay_ms=50',
      password: null,
      secretOptions: {},
    });
    expect(() => splitCarrierUrl('ftp://x')).toThrow(/scheme/);
  });
});

describe('the circuit', () => {
  it('opens after repeated failures, lets one trial through once open long enough, and closes on success', () => {
    const circuit = new Circuit({ threshold: 3, openMs: 1000 });
    for (let failure = 0; failure < 3; failure += 1) circuit.failed(0);
    expect(circuit.state(500)).toBe('open');
    expect(circuit.allows(500)).toBe(false);
    expect(circuit.allows(1500)).toBe(true);
    expect(circuit.allows(1500)).toBe(false);
    circuit.failed(1500);
    expect(circuit.allows(2000)).toBe(false);
    expect(circuit.allows(2600)).toBe(true);
    circuit.succeeded();
    expect(circuit.state(2600)).toBe('closed');
  });
});
