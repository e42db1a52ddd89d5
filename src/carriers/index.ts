import type { Logger } from 'pino';
import type { Config } from '../config.js';
import type { PrismaClient } from '../generated/prisma/client.js';
import type { Clock } from '../lib/clock.js';
import type { Carrier } from './carrier.js';
import type { CarrierCatalog, CarrierRecord } from './carrier-catalog.js';
import { endpointOf, numberOption } from './carrier-url.js';
import { carrierCallsBack, createHttpCarrier } from './http/http-carriers.js';
import { SimulatorCarrier } from './simulator-carrier.js';
import { SmppCarrier } from './smpp/smpp-carrier.js';

// A receipt that overtook its submit_sm_resp in another process is looked at again this often.
const SMPP_RECEIPT_POLL_MS = 500;

/** What a carrier is made with; the process's dependencies have these and more. */
export interface CarrierDependencies {
  prisma: PrismaClient;
  clock: Clock;
  logger: Logger;
  config: Config;
}

/**
 * The address messages are sent from when an account has no default sender (SMPP_SOURCE_ADDR);
 * null when the carrier leaves it to the network.
 */
export function carrierDefaultSender(config: Config): string | null {
  return config.carrier === 'smpp' ? (config.smpp?.sourceAddr ?? null) : null;
}

/** The URL of carrier `default`, made from CARRIER/SMPP_URL when no carrier is configured. */
export function defaultCarrierUrl(config: Config): string {
  return config.carrier === 'smpp' && config.smppUrl ? config.smppUrl : 'simulator://';
}

/**
 * Once carrier `default` exists, carriers change through the CLI only: an SMPP_URL (with
 * CARRIER=smpp) that no longer matches it stops start-up, rather than being ignored while the
 * operator believes a rotated password applied. Null when it matches or is not set.
 */
export async function defaultCarrierConflict(
  config: Config,
  catalog: Pick<CarrierCatalog, 'defaultDiffersFrom'>,
): Promise<string | null> {
  if (config.carrier !== 'smpp' || !config.smppUrl) return null;
  if (!(await catalog.defaultDiffersFrom(config.smppUrl))) return null;
  return 'SMPP_URL (CARRIER=smpp) differs from carrier default, which was made from it at the first start and is now changed through the CLI only: apply the new URL with `npm run cli -- carriers update default --url …`, or unset SMPP_URL and CARRIER';
}

/**
 * PUBLIC_URL is needed once an HTTP carrier whose provider calls back exists: without it the
 * provider is told no callback URL and every callback is refused. The line that stops start-up
 * then, naming the variable and the carriers; null when nothing is missing.
 */
export function publicUrlMissing(config: Config, records: readonly CarrierRecord[]): string | null {
  if (config.publicUrl) return null;
  const needing = records.filter((record) => carrierCallsBack(record.url)).map((record) => record.name);
  if (needing.length === 0) return null;
  return `PUBLIC_URL is not set, and the HTTP carrier${needing.length === 1 ? '' : 's'} ${needing.join(', ')} send${needing.length === 1 ? 's' : ''} delivery reports and replies to PUBLIC_URL/carriers/NAME/events: set PUBLIC_URL to the address the providers reach Tern at`;
}

/** A carrier as its record describes it; the only place that knows the kinds. */
export function carrierFromRecord(record: CarrierRecord, deps: CarrierDependencies): Carrier {
  const { config } = deps;
  const endpoint = endpointOf(record.url);
  const logger = deps.logger.child({ carrier: record.name });
  if (endpoint.kind === 'simulator') {
    const delayMs = numberOption(endpoint.options, 'delay_ms', config.simulatorDelayMs);
    return new SimulatorCarrier(deps.prisma, deps.clock, logger, {
      name: record.name,
      delayMs,
      submitLatencyMs: numberOption(endpoint.options, 'submit_latency_ms', config.simulatorSubmitLatencyMs),
      pollMs: Math.min(100, Math.max(10, delayMs)),
    });
  }
  if (endpoint.kind === 'http') {
    const { prisma, clock } = deps;
    return createHttpCarrier(record, { prisma, clock, logger, ...config })!;
  }
  const { options } = endpoint;
  const defaults = config.smppDefaults;
  const concat = options.get('concat');
  return new SmppCarrier(deps.prisma, deps.clock, logger, {
    ...defaults,
    name: record.name,
    host: endpoint.host,
    port: endpoint.port,
    tls: endpoint.tls,
    systemId: endpoint.systemId,
    password: record.password ?? '',
    systemType: options.get('system_type') ?? defaults.systemType,
    sourceAddr: options.get('source_addr') ?? defaults.sourceAddr,
    window: numberOption(options, 'window', defaults.window) || defaults.window,
    concatenation: concat === 'payload' || concat === 'udh' ? concat : defaults.concatenation,
    // The cluster-wide pace is kept by the pool; the bind keeps its own learned pace only.
    maxPerSecond: null,
    receiptPollMs: SMPP_RECEIPT_POLL_MS,
    sendDeadlineMs: Math.floor(config.claimLeaseMs / 2),
  });
}

/** Whether the carrier holds sessions that count against its binds (SMPP); an HTTP carrier holds none. */
export function carrierBinds(record: CarrierRecord): boolean {
  return endpointOf(record.url).kind === 'smpp';
}

/** The receiver of HTTP providers' callbacks, for the API's POST /carriers/{name}/events. */
export { CarrierCallbacks } from './http/carrier-callbacks.js';
