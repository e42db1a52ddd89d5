/**
 * What Tern needs of a carrier. The simulator and SMPP implement it; nothing outside
 * src/carriers knows which one is in use.
 */
export interface OutboundSms {
  /** Our message id: the carrier's client reference. */
  reference: string;
  to: string;
  text: string;
  encoding: 'GSM-7' | 'UCS-2';
  segments: number;
  /** The sender to show, when the account has one. */
  from: string | null;
  /** When the message expires: a carrier that can should stop trying it then. */
  validUntil: Date | null;
}

export interface SubmitResult {
  carrierMessageId: string;
}

export interface DeliveryReport {
  carrierMessageId: string;
  /** Our message id, for carriers that echo it back. */
  reference?: string;
  status: 'delivered' | 'failed';
  at: Date;
  error?: { code: string; message: string };
}

export interface InboundSms {
  carrierMessageId: string;
  from: string;
  to: string | null;
  text: string;
  at: Date;
  /** The outbound message this answers, for carriers that know it. */
  inReplyTo?: string;
}

/** Where a carrier hands what it receives; implemented by the messages domain. */
export interface CarrierEventSink {
  deliveryReport(report: DeliveryReport): Promise<void>;
  inbound(message: InboundSms): Promise<void>;
}

/** What an operator sees of the carrier in GET /health: its connection and, for SMPP, its flow control. */
export interface CarrierHealth {
  carrier: string;
  /** `ready` for the simulator; for SMPP `connecting`, `bound`, `disconnected`, `bind_failed` or `stopped`. */
  state: string;
  window?: { inUse: number; size: number };
  /** Counts of each kind of trouble since the process started. */
  errors?: Record<string, number>;
  lastError?: string | null;
  /** Set by the pool: whether it takes new messages, the binds open here and configured, its pace and circuit. */
  enabled?: boolean;
  bindsOpen?: number;
  binds?: number;
  maxPerSecond?: number | null;
  circuit?: 'closed' | 'open' | 'half_open';
}

export interface Carrier {
  readonly name: string;
  /**
   * True when submitting the same reference twice transmits it once. Only then may a send
   * whose outcome is unknown (the worker died during the call) be retried.
   */
  readonly deduplicatesByReference: boolean;
  start(sink: CarrierEventSink): Promise<void>;
  send(message: OutboundSms): Promise<SubmitResult>;
  health(): CarrierHealth;
  stop(): Promise<void>;
}

/** The carrier refused the message for good: it is failed, not retried. */
export class CarrierRejectedError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'CarrierRejectedError';
  }
}

/**
 * The carrier could not take the message now: retry later. `outcomeUnknown` when it may have
 * taken some of it (a submit went out and its answer never came, or some parts were taken):
 * the message is then retried on this carrier only, never given to a second one.
 */
export class CarrierUnavailableError extends Error {
  constructor(
    message: string,
    readonly outcomeUnknown = false,
  ) {
    super(message);
    this.name = 'CarrierUnavailableError';
  }
}
