import type { Clock } from '../../src/lib/clock.js';

/** A clock the test moves by hand, so time-dependent behaviour is tested without sleeping. */
export class ManualClock implements Clock {
  private offsetMs = 0;
  /** Every delay Tern asked this clock for (the login slowdown), in order. */
  readonly waits: number[] = [];

  now(): Date {
    return new Date(Date.now() + this.offsetMs);
  }

  advance(ms: number): void {
    this.offsetMs += ms;
  }

  /**
   * Ends at once, recorded in `waits`: a test asserts the delay Tern chose instead of sitting
   * through it. The clock does not move, so codes and windows a test computed stay valid.
   */
  wait(ms: number): Promise<void> {
    this.waits.push(ms);
    return Promise.resolve();
  }
}
