import type { Logger } from 'pino';
import { type Carrier, CarrierRejectedError, CarrierUnavailableError, type OutboundSms } from '../carrier.js';
import type { WorkerCarrierHealth } from './carrier-health.js';
import { type PooledCarrier, READY_STATES } from './pooled-carrier.js';

// A message's hand-over to a carrier of its route (CarrierPool.handOver): what it answers, one
// carrier's try, and which carriers another worker process can take it for.

/** A message on its way out, with what routing needs. */
export interface RoutedSms extends OutboundSms {
  accountId: string;
  /** The carrier an earlier hand-over of unknown outcome left it with: only that one may take it. */
  pinned: string | null;
}

export type HandOverResult =
  | { outcome: 'sent'; carrier: string; carrierMessageId: string }
  | { outcome: 'rejected'; carrier: string; code: string; message: string }
  | { outcome: 'no_route' }
  /**
   * Another worker process holds the carrier it goes to: once its claim is given back, `forward`
   * hands it to that process's queue, where it resumes the route without a retry's wait.
   */
  | { outcome: 'forwarded'; forward(): Promise<void> }
  /** No carrier could take it now; `pinnedTo` when one may have taken part of it. */
  | { outcome: 'unavailable'; pinnedTo: string | null };

/** What a try at a carrier is given besides the message: how long it may wait for the pace, where it logs. */
export interface CarrierTry {
  paceWaitMs: number;
  logger: Logger;
}

/** The carrier's answer; null when it could not take the message now and the next may. */
export async function tryCarrier(
  entry: PooledCarrier,
  carrier: Carrier,
  sms: RoutedSms,
  { paceWaitMs, logger }: CarrierTry,
): Promise<HandOverResult | null> {
  if (entry.pace && !(await entry.pace.take(Date.now() + paceWaitMs))) {
    entry.circuit.abandoned();
    return null;
  }
  try {
    const { carrierMessageId } = await carrier.send(sms);
    entry.circuit.succeeded();
    return { outcome: 'sent', carrier: carrier.name, carrierMessageId };
  } catch (error) {
    if (error instanceof CarrierRejectedError) {
      entry.circuit.succeeded();
      return { outcome: 'rejected', carrier: carrier.name, code: error.code, message: error.message };
    }
    if (!(error instanceof CarrierUnavailableError)) throw error;
    entry.circuit.failed(Date.now());
    logger.debug({ carrier: carrier.name, err: error }, 'carrier could not take a message');
    return error.outcomeUnknown ? { outcome: 'unavailable', pinnedTo: carrier.name } : null;
  }
}

/**
 * The carriers some other worker process, in what it published since `freshSince`, has a session
 * of ready to take messages, its circuit not open.
 */
export function takingElsewhere(cluster: WorkerCarrierHealth[], freshSince: number): Set<string> {
  return new Set(
    cluster
      .filter(
        (entry) =>
          READY_STATES.has(entry.state) &&
          entry.circuit !== 'open' &&
          entry.enabled !== false &&
          Date.parse(entry.updatedAt) >= freshSince,
      )
      .map((entry) => entry.carrier),
  );
}
