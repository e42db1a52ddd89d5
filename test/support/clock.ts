import type { Clock } from '../../src/lib/clock.js';

/** A clock the test moves by hand, so time-dependent behaviour is tested without sleeping. */
export class ManualClock implements Clock {
  private offsetMs = 0;

  now(): Date {
    return new Date(Date.now() + this.offsetMs);
  }

  advance(ms: number): void {
    this.offsetMs += ms;
  }
}
