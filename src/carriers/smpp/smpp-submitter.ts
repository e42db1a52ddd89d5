import type { Logger } from 'pino';
import smpp, { type PDU, type PduFields } from 'smpp';
import { CarrierRejectedError, CarrierUnavailableError } from '../carrier.js';
import type { SubmitBody } from './smpp-segments.js';
import type { SmppSession } from './smpp-session.js';
import { backoffMs, type SmppErrorCounts, STATUS, sleep, statusName } from './smpp-status.js';

/** Statuses that mean "not now": the part is submitted again after a pause. */
const RETRY_LATER_STATUSES = new Set([STATUS.ESME_RTHROTTLED, STATUS.ESME_RMSGQFUL]);
const THROTTLE_ATTEMPTS = 8;

export interface SmppSubmitterOptions {
  /** submit_sm waiting for their response at once, at most. */
  window: number;
  /** submit_sm per second at most, the carrier's pace (CARRIER_MAX_PER_SECOND); null for none. */
  maxPerSecond: number | null;
  throttleBackoffMs: number;
}

/** At most `size` submit_sm waiting for their response at once. */
export class SubmitWindow {
  inUse = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(readonly size: number) {}

  /** Takes a slot; false when none came free within `timeoutMs`. */
  async acquire(timeoutMs: number): Promise<boolean> {
    if (this.inUse < this.size) {
      this.inUse += 1;
      return true;
    }
    return new Promise<boolean>((resolve) => {
      const take = () => {
        clearTimeout(timer);
        resolve(true);
      };
      const timer = setTimeout(
        () => {
          this.waiting.splice(this.waiting.indexOf(take), 1);
          resolve(false);
        },
        Math.max(0, timeoutMs),
      );
      this.waiting.push(take);
    });
  }

  release(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.inUse -= 1;
  }
}

// How the bind's own pace follows a throttling SMSC: cut by this factor at each throttle, and
// raised by this many submit_sm/s at each accepted one, so it climbs back by a tenth of itself a second.
const THROTTLE_CUT = 0.7;
const RECOVERY_PER_ACCEPTED = 0.1;
const LOWEST_LEARNED_PER_SECOND = 1;
// SMSCs count their rate per second: the throttles of one such second are one signal, not many.
const CUT_AT_MOST_EVERY_MS = 1_000;

/**
 * submit_sm as the SMSC can take them: through the window, at the carrier's pace, and again
 * after a pause while the SMSC says it is throttled or its queue is full. A throttle slows the
 * whole bind, not only the part it answered: every submit waits out the pause, and the bind
 * keeps a pace of its own, cut at each throttle and raised again with each accepted part, so
 * that it settles near what the SMSC takes instead of every send finding the limit for itself.
 * A send that cannot be made before its deadline gives the message back (CarrierUnavailableError).
 */
export class SmppSubmitter {
  readonly window: SubmitWindow;
  private nextSubmitAt = 0;
  /** submit_sm per second the SMSC was last found to take; null until it first throttles. */
  private learnedPerSecond: number | null = null;
  /** When the learned pace was last cut. */
  private cutAt = Number.NEGATIVE_INFINITY;
  /** The times of the last second's submit_sm, for the pace to cut from at the first throttle. */
  private readonly recentSubmits: number[] = [];

  constructor(
    private readonly session: SmppSession,
    private readonly options: SmppSubmitterOptions,
    private readonly logger: Logger,
    private readonly errors: SmppErrorCounts,
  ) {
    this.window = new SubmitWindow(options.window);
  }

  /** One part; the SMSC's message id for it, or CarrierRejectedError when the SMSC refused it. */
  async submit(body: SubmitBody, deadline: number, fields: PduFields): Promise<string> {
    for (let attempt = 1; ; attempt += 1) {
      const response = await this.submitOnce(deadline, fields);
      const status = response.command_status;
      if (status === STATUS.ESME_ROK && response.message_id) {
        if (this.learnedPerSecond !== null) this.learnedPerSecond += RECOVERY_PER_ACCEPTED;
        return response.message_id;
      }
      if (!RETRY_LATER_STATUSES.has(status)) throw this.rejection(status);
      await this.waitOutThrottle(status, body, attempt, deadline);
    }
  }

  /** One submit_sm through the window, at the pace. */
  private async submitOnce(deadline: number, fields: PduFields): Promise<PDU> {
    if (!(await this.window.acquire(deadline - Date.now()))) {
      throw new CarrierUnavailableError(
        `the submit window stayed full (${this.window.size} outstanding); the message goes back to the queue`,
      );
    }
    try {
      await this.pace(deadline);
      this.noteSubmit(Date.now());
      return await this.session.requestBound(new smpp.PDU('submit_sm', { ...fields }));
    } finally {
      this.window.release();
    }
  }

  /** The SMSC asked to slow down: pause before the next attempt, or give up past the attempts or the deadline. */
  private async waitOutThrottle(status: number, body: SubmitBody, attempt: number, deadline: number) {
    this.errors.throttled += 1;
    const pause = backoffMs(this.options.throttleBackoffMs, attempt - 1);
    this.slowDown();
    this.logger.warn(
      { status: statusName(status), part: body.part, attempt, pauseMs: pause, window: this.window.inUse },
      'SMSC asks to slow down',
    );
    if (attempt >= THROTTLE_ATTEMPTS || Date.now() + pause > deadline) {
      throw new CarrierUnavailableError(
        `SMSC still throttling after ${attempt} attempts (${statusName(status)})`,
      );
    }
    await sleep(pause);
  }

  private rejection(status: number): CarrierRejectedError {
    this.errors.rejected += 1;
    const name = statusName(status);
    this.session.lastError = `submit_sm refused: ${name}`;
    return new CarrierRejectedError(
      `smpp_0x${status.toString(16).padStart(8, '0')}`,
      status === STATUS.ESME_ROK
        ? 'The SMSC accepted the message without a message id'
        : `The SMSC refused the message: ${name}`,
    );
  }

  /**
   * A throttle: the whole bind pauses for the first backoff (the throttled part itself waits as
   * long as its own attempts say), and the pace is cut, once for a burst of throttles.
   */
  private slowDown(): void {
    const now = Date.now();
    this.nextSubmitAt = Math.max(this.nextSubmitAt, now + this.options.throttleBackoffMs);
    if (now - this.cutAt < CUT_AT_MOST_EVERY_MS) return;
    const from = this.learnedPerSecond ?? this.recentSubmits.length;
    this.learnedPerSecond = Math.max(LOWEST_LEARNED_PER_SECOND, from * THROTTLE_CUT);
    this.cutAt = now;
  }

  private noteSubmit(at: number): void {
    if (this.learnedPerSecond !== null) return;
    this.recentSubmits.push(at);
    while (this.recentSubmits[0]! < at - 1000) this.recentSubmits.shift();
  }

  /**
   * Spaces submit_sm PDUs evenly at CARRIER_MAX_PER_SECOND or the pace learned from the SMSC's
   * throttling, whichever is slower, across all the sends of this bind; none goes out during a pause.
   */
  private async pace(deadline: number): Promise<void> {
    const limits = [this.options.maxPerSecond, this.learnedPerSecond].filter(
      (limit): limit is number => limit !== null && limit > 0,
    );
    const now = Date.now();
    if (limits.length === 0 && this.nextSubmitAt <= now) return;
    const at = Math.max(now, this.nextSubmitAt);
    if (at > deadline)
      throw new CarrierUnavailableError(
        "the carrier's pace leaves no slot in time; the message goes back to the queue",
      );
    this.nextSubmitAt = limits.length > 0 ? at + 1000 / Math.min(...limits) : at;
    if (at > now) await sleep(at - now);
  }
}
