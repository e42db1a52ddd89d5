export type CircuitState = 'closed' | 'open' | 'half_open';

export interface CircuitOptions {
  /** Unavailable hand-overs in a row that open the circuit. */
  threshold: number;
  /** How long an open circuit skips the carrier before one trial is let through. */
  openMs: number;
}

/**
 * A carrier that keeps failing is skipped: after `threshold` unavailable hand-overs in a row the
 * circuit opens for `openMs`; then one hand-over at a time is tried (half open) until one goes
 * through, which closes it, or fails, which opens it again.
 */
export class Circuit {
  private failures = 0;
  private openUntil = 0;
  private trialRunning = false;

  constructor(private readonly options: CircuitOptions) {}

  state(now: number): CircuitState {
    if (this.failures < this.options.threshold) return 'closed';
    return now < this.openUntil ? 'open' : 'half_open';
  }

  /** Whether a hand-over may be tried now; a half-open circuit lets one through at a time. */
  allows(now: number): boolean {
    const state = this.state(now);
    if (state === 'closed') return true;
    if (state === 'open' || this.trialRunning) return false;
    this.trialRunning = true;
    return true;
  }

  succeeded(): void {
    this.failures = 0;
    this.trialRunning = false;
  }

  /** A hand-over let through that was not tried after all (the carrier's pace had no slot). */
  abandoned(): void {
    this.trialRunning = false;
  }

  failed(now: number): void {
    this.failures += 1;
    this.trialRunning = false;
    if (this.failures >= this.options.threshold) this.openUntil = now + this.options.openMs;
  }
}
