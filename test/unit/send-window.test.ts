import { describe, expect, it } from 'vitest';
import { type SendWindow, sendWindowInput, windowOpening } from '../../src/modules/settings/send-window.js';

const EVERY_DAY = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'] as SendWindow['days'];
const nineToEight: SendWindow = { days: EVERY_DAY, start: '09:00', end: '20:00' };

function opening(at: string, window: SendWindow | null, zone: string): string {
  return windowOpening(new Date(at), window, zone).toISOString();
}

describe('a send window read in the recipient’s time zone', () => {
  it('lets a message go at once inside the window, and at the next local opening outside it', () => {
    // 15:00 in New York (EST, UTC-5) is inside 09:00-20:00.
    expect(opening('2026-01-15T20:00:00Z', nineToEight, 'America/New_York')).toBe('2026-01-15T20:00:00.000Z');
    // 21:00 in New York: tomorrow 09:00 EST, 14:00 UTC.
    expect(opening('2026-01-16T02:00:00Z', nineToEight, 'America/New_York')).toBe('2026-01-16T14:00:00.000Z');
    // The same instant is 11:00 in Tokyo (inside) and 02:00 in London (before the opening).
    expect(opening('2026-01-16T02:00:00Z', nineToEight, 'Asia/Tokyo')).toBe('2026-01-16T02:00:00.000Z');
    expect(opening('2026-01-16T02:00:00Z', nineToEight, 'Europe/London')).toBe('2026-01-16T09:00:00.000Z');
  });

  it('waits for the next listed day', () => {
    const weekdays: SendWindow = { days: ['mon', 'tue', 'wed', 'thu', 'fri'], start: '09:00', end: '17:00' };
    // Saturday 2026-01-17 12:00 UTC in London: Monday 09:00.
    expect(opening('2026-01-17T12:00:00Z', weekdays, 'Europe/London')).toBe('2026-01-19T09:00:00.000Z');
  });

  it('crosses midnight when start is after end: open from the listed day’s start to the next day’s end', () => {
    const night: SendWindow = { days: ['fri'], start: '22:00', end: '06:00' };
    // Saturday 05:00 UTC (London, winter): still Friday's window.
    expect(opening('2026-01-17T05:00:00Z', night, 'Europe/London')).toBe('2026-01-17T05:00:00.000Z');
    // Saturday 07:00: next Friday 22:00.
    expect(opening('2026-01-17T07:00:00Z', night, 'Europe/London')).toBe('2026-01-23T22:00:00.000Z');
    // Friday 23:00: open.
    expect(opening('2026-01-16T23:00:00Z', night, 'Europe/London')).toBe('2026-01-16T23:00:00.000Z');
  });

  it('opens at the first minute that exists when the clocks go forward over the start', () => {
    const early: SendWindow = { days: EVERY_DAY, start: '02:30', end: '05:00' };
    // 2026-03-08 in New York: 02:00 EST becomes 03:00 EDT (07:00 UTC); 02:30 does not exist.
    expect(opening('2026-03-08T06:00:00Z', early, 'America/New_York')).toBe('2026-03-08T07:00:00.000Z');
    // 2026-03-29 in London: 01:00 GMT becomes 02:00 BST; a 01:30 start opens at 02:00 BST (01:00 UTC).
    const london: SendWindow = { days: EVERY_DAY, start: '01:30', end: '05:00' };
    expect(opening('2026-03-29T00:10:00Z', london, 'Europe/London')).toBe('2026-03-29T01:00:00.000Z');
  });

  it('opens at the first of the two when the clocks go back over the start', () => {
    const early: SendWindow = { days: EVERY_DAY, start: '01:30', end: '05:00' };
    // 2026-11-01 in New York: 01:30 happens at 05:30 UTC (EDT) and again at 06:30 UTC (EST).
    expect(opening('2026-11-01T04:00:00Z', early, 'America/New_York')).toBe('2026-11-01T05:30:00.000Z');
    // 2026-10-25 in London: 01:30 BST is 00:30 UTC, then 01:30 GMT is 01:30 UTC.
    expect(opening('2026-10-24T23:00:00Z', early, 'Europe/London')).toBe('2026-10-25T00:30:00.000Z');
  });

  it('keeps 09:00 local across the change of offset', () => {
    // 21:00 on the Saturday before the spring change: Sunday 09:00 EDT is 13:00 UTC, not 14:00.
    expect(opening('2026-03-08T02:00:00Z', nineToEight, 'America/New_York')).toBe('2026-03-08T13:00:00.000Z');
    // The autumn change: Sunday 09:00 EST is 14:00 UTC.
    expect(opening('2026-11-01T01:00:00Z', nineToEight, 'America/New_York')).toBe('2026-11-01T14:00:00.000Z');
  });

  it('refuses a window it cannot read', () => {
    expect(sendWindowInput.safeParse({ days: [], start: '09:00', end: '20:00' }).success).toBe(false);
    expect(sendWindowInput.safeParse({ days: ['mon', 'mon'], start: '09:00', end: '20:00' }).success).toBe(
      false,
    );
    expect(sendWindowInput.safeParse({ days: ['mon'], start: '9:00', end: '20:00' }).success).toBe(false);
    expect(sendWindowInput.safeParse({ days: ['mon'], start: '24:00', end: '20:00' }).success).toBe(false);
    expect(sendWindowInput.safeParse({ days: ['mon'], start: '09:00', end: '09:00' }).success).toBe(false);
    expect(sendWindowInput.safeParse({ days: ['funday'], start: '09:00', end: '10:00' }).success).toBe(false);
    expect(windowOpening(new Date('2026-01-01T00:00:00Z'), null, 'UTC').toISOString()).toBe(
      '2026-01-01T00:00:00.000Z',
    );
  });
});
