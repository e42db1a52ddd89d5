import type { Logger } from 'pino';
import smpp, { type PDU, type PduFields } from 'smpp';
import { CarrierRejectedError, CarrierUnavailableError } from './carrier.js';
import type { SubmitBody } from './smpp-segments.js';
import type { SmppSession } from './smpp-session.js';
import { backoffMs, sleep, STATUS, statusName, type SmppErrorCounts } from './smpp-status.js';

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
      const timer = setTimeout(() => {
        this.waiting.splice(this.waiting.indexOf(take), 1);
        resolve(false);
      }, Math.max(0, timeoutMs));
      this.waiting.push(take);
    });
  }

  release(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.inUse -= 1;
  }
}

/**
 * submit_sm as the SMSC can take them: through the window, at the carrier's pace, and again
 * after a pause while the SMSC says it is throttled or its queue is full. A send that cannot
 * be made before its deadline gives the message back (CarrierUnavailableError).
 */
export class SmppSubmitter {
  readonly window: SubmitWindow;
  private nextSubmitAt = 0;

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
      if (!(await this.window.acquire(deadline - Date.now()))) {
        throw new CarrierUnavailableError(`the submit window stayed full (${this.window.size} outstanding); the message goes back to the queue`);
      }
      let response: PDU;
      try {
        await this.pace(deadline);
        response = await this.session.requestBound(new smpp.PDU('submit_sm', { ...fields }));
      } finally {
        this.window.release();
      }
      const status = response.command_status;
      if (status === STATUS.ESME_ROK && response.message_id) return response.message_id;
      if (RETRY_LATER_STATUSES.has(status)) {
        this.errors.throttled += 1;
        const pause = backoffMs(this.options.throttleBackoffMs, attempt - 1);
        this.logger.warn({ status: statusName(status), part: body.part, attempt, pauseMs: pause, window: this.window.inUse }, 'SMSC asks to slow down');
        if (attempt >= THROTTLE_ATTEMPTS || Date.now() + pause > deadline) {
          throw new CarrierUnavailableError(`SMSC still throttling after ${attempt} attempts (${statusName(status)})`);
        }
        await sleep(pause);
        continue;
      }
      this.errors.rejected += 1;
      const name = statusName(status);
      this.session.lastError = `submit_sm refused: ${name}`;
      throw new CarrierRejectedError(
        `smpp_0x${status.toString(16).padStart(8, '0')}`,
        status === STATUS.ESME_ROK ? 'The SMSC accepted the message without a message id' : `The SMSC refused the message: ${name}`,
      );
    }
  }

  /** Spaces submit_sm PDUs evenly at CARRIER_MAX_PER_SECOND, across all the sends of this process. */
  private async pace(deadline: number): Promise<void> {
    if (!this.options.maxPerSecond) return;
    const now = Date.now();
    const at = Math.max(now, this.nextSubmitAt);
    if (at > deadline) throw new CarrierUnavailableError('the carrier\'s pace leaves no slot in time; the message goes back to the queue');
    this.nextSubmitAt = at + 1000 / this.options.maxPerSecond;
    if (at > now) await sleep(at - now);
  }
}
