import type { Config } from '../config.js';
import type { Dependencies } from '../deps.js';
import type { Carrier } from './carrier.js';
import { SimulatorCarrier } from './simulator-carrier.js';
import { SmppCarrier } from './smpp-carrier.js';

// A receipt that overtook its submit_sm_resp in another process is looked at again this often.
const SMPP_RECEIPT_POLL_MS = 500;

/**
 * The address the configured carrier sends from when an account has no default sender; null
 * when the carrier leaves it to the network.
 */
export function carrierDefaultSender(config: Config): string | null {
  return config.carrier === 'smpp' ? (config.smpp?.sourceAddr ?? null) : null;
}

/** The carrier named by CARRIER; the only place that knows the choice. */
export function createCarrier(
  config: Config,
  deps: Pick<Dependencies, 'prisma' | 'clock' | 'logger'>,
): Carrier {
  switch (config.carrier) {
    case 'simulator':
      return new SimulatorCarrier(deps.prisma, deps.clock, deps.logger.child({ carrier: 'simulator' }), {
        delayMs: config.simulatorDelayMs,
        submitLatencyMs: config.simulatorSubmitLatencyMs,
        pollMs: Math.min(100, Math.max(10, config.simulatorDelayMs)),
      });
    case 'smpp':
      return new SmppCarrier(deps.prisma, deps.clock, deps.logger.child({ carrier: 'smpp' }), {
        ...config.smpp!,
        maxPerSecond: config.carrierMaxPerSecond,
        receiptPollMs: SMPP_RECEIPT_POLL_MS,
        sendDeadlineMs: Math.floor(config.claimLeaseMs / 2),
      });
  }
}
