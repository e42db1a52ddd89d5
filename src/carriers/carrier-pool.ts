import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { BindLeases } from './bind-leases.js';
import {
  type Carrier,
  type CarrierEventSink,
  type CarrierHealth,
  CarrierRejectedError,
  CarrierUnavailableError,
  type OutboundSms,
} from './carrier.js';
import type { CarrierRecord } from './carrier-catalog.js';
import type { CarrierDirectory } from './carrier-directory.js';
import { Circuit, type CircuitOptions } from './circuit.js';
import { ClusterPace } from './cluster-pace.js';
import { type CarrierDependencies, carrierBinds, carrierFromRecord } from './index.js';
import { carrierOrder } from './route-table.js';

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
  /** No carrier could take it now; `pinnedTo` when one may have taken part of it. */
  | { outcome: 'unavailable'; pinnedTo: string | null };

interface Pooled {
  record: CarrierRecord;
  /** What a change of rebinds the carrier. */
  signature: string;
  /** Null while this process holds no bind of it. */
  carrier: Carrier | null;
  circuit: Circuit;
  pace: ClusterPace | null;
  binds: boolean;
  /** The carrier's start, settled once it bound or gave up waiting. */
  starting: Promise<void>;
}

export interface CarrierPoolOptions {
  directory: CarrierDirectory;
  deps: CarrierDependencies;
  redis: Redis;
  redisPrefix: string;
  worker: string;
  sinkFor(carrier: string): CarrierEventSink;
  /** How often binds are renewed and taken; a dead holder's lease lapses after three of these. */
  tickMs: number;
  circuit: CircuitOptions;
  /** How long a hand-over may wait for a carrier's pace before trying the next carrier. */
  paceWaitMs: number;
}

/**
 * The carriers of a worker process, kept as the directory says: a carrier is started when this
 * process holds one of its binds (leases in Redis, see BindLeases) and stopped when it loses it,
 * a changed URL rebinds, a disabled carrier stays bound for its receipts but takes nothing new.
 * Each message is routed at hand-over and failed over on a temporary refusal.
 */
export class CarrierPool {
  private readonly pooled = new Map<string, Pooled>();
  private readonly leases: BindLeases;
  private timer: NodeJS.Timeout | null = null;
  private reconciling: Promise<void> = Promise.resolve();
  private stopped = false;
  private readonly logger: Logger;
  private readonly usableListeners = new Set<(usable: boolean) => void>();
  private lastUsable: boolean | null = null;
  private reconcileRunning = false;
  private reconcileAgain = false;
  /** Carriers still stopping; shutdown waits for them. */
  private readonly stopping = new Set<Promise<void>>();

  constructor(private readonly options: CarrierPoolOptions) {
    this.logger = options.deps.logger.child({ module: 'carriers' });
    this.leases = new BindLeases(options.redis, options.redisPrefix, options.worker, options.tickMs * 3);
  }

  /** Takes up the carriers and waits a short while for their first binds, as a carrier's start does. */
  async start(): Promise<void> {
    await this.options.directory.ready();
    this.options.directory.onChange(() => this.schedule());
    await this.reconciling;
    await Promise.all([...this.pooled.values()].map((entry) => entry.starting));
    this.timer = setInterval(() => this.schedule(), this.options.tickMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    await this.reconciling;
    for (const name of [...this.pooled.keys()]) this.retire(name, true);
    await Promise.all(this.stopping);
  }

  /** Called now and whenever this process starts or stops holding a carrier it may send through. */
  onUsableChange(listener: (usable: boolean) => void): void {
    this.usableListeners.add(listener);
    if (this.lastUsable !== null) listener(this.lastUsable);
  }

  /**
   * Brings the carriers up to date with the directory and renews the binds; one round at a time,
   * and a change or tick during a round makes one more round after it rather than a queue of them.
   */
  private schedule(): void {
    if (this.reconcileRunning) {
      this.reconcileAgain = true;
      return;
    }
    this.reconcileRunning = true;
    this.reconciling = (async () => {
      do {
        this.reconcileAgain = false;
        await this.reconcile(this.options.directory.carriers);
      } while (this.reconcileAgain && !this.stopped);
    })()
      .catch((error: unknown) => this.logger.warn({ err: error }, 'carriers not brought up to date; retried'))
      .finally(() => {
        this.reconcileRunning = false;
      });
  }

  private async reconcile(records: readonly CarrierRecord[]): Promise<void> {
    if (this.stopped) return;
    const wanted = new Map(records.map((record) => [record.name, record]));
    for (const [name, entry] of this.pooled) {
      const record = wanted.get(name);
      // A carrier with a new URL keeps its bind for the new session; one removed gives it back.
      if (!record) this.retire(name, true);
      else if (signatureOf(record) !== entry.signature) this.retire(name, false);
    }
    for (const record of records) await this.keep(record);
    this.noteUsable();
  }

  private async keep(record: CarrierRecord): Promise<void> {
    let entry = this.pooled.get(record.name);
    if (!entry) {
      entry = {
        record,
        signature: signatureOf(record),
        carrier: null,
        circuit: new Circuit(this.options.circuit),
        pace: null,
        binds: carrierBinds(record),
        starting: Promise.resolve(),
      };
      this.pooled.set(record.name, entry);
    }
    if (entry.record.maxPerSecond !== record.maxPerSecond || (record.maxPerSecond && !entry.pace)) {
      entry.pace = record.maxPerSecond
        ? new ClusterPace(this.options.redis, this.options.redisPrefix, record.name, record.maxPerSecond)
        : null;
    }
    entry.record = record;
    const holds = !entry.binds || (await this.leases.hold(record.name, record.binds));
    if (holds && !entry.carrier) this.bring(entry);
    else if (!holds && entry.carrier) this.drop(entry);
  }

  /**
   * Starts the carrier without waiting for its bind: a round must not outlast the leases it
   * renews, whatever an SMSC does.
   */
  private bring(entry: Pooled): void {
    const carrier = carrierFromRecord(entry.record, this.options.deps);
    entry.carrier = carrier;
    this.logger.info({ carrier: carrier.name }, 'carrier taken up by this process');
    entry.starting = carrier
      .start(this.options.sinkFor(carrier.name))
      .catch((error: unknown) =>
        this.logger.error({ err: error, carrier: carrier.name }, 'carrier did not start'),
      );
  }

  /** Stops the carrier in the background; `then` runs once it has (its session closed). */
  private drop(entry: Pooled, then: () => Promise<void> = async () => undefined): void {
    const carrier = entry.carrier;
    entry.carrier = null;
    if (!carrier) return void then();
    this.logger.info({ carrier: carrier.name }, 'carrier given up by this process');
    const stopped = entry.starting
      .then(() => carrier.stop())
      .then(then)
      .catch((error: unknown) =>
        this.logger.warn({ err: error, carrier: carrier.name }, 'carrier did not stop cleanly'),
      )
      .finally(() => this.stopping.delete(stopped));
    this.stopping.add(stopped);
  }

  /** A bind given back is given back once the session is closed, so that no other process's overlaps it. */
  private retire(name: string, giveBackBind: boolean): void {
    const entry = this.pooled.get(name);
    this.pooled.delete(name);
    if (!entry) return;
    this.drop(entry, () => (entry.binds && giveBackBind ? this.leases.release(name) : Promise.resolve()));
  }

  private noteUsable(): void {
    const usable = [...this.pooled.values()].some((entry) => entry.carrier && entry.record.enabled);
    if (usable === this.lastUsable) return;
    this.lastUsable = usable;
    for (const listener of this.usableListeners) listener(usable);
  }

  /** Whether a hand-over interrupted mid-call may be made again without a risk of sending twice. */
  deduplicates(sms: Pick<RoutedSms, 'to' | 'accountId' | 'pinned'>): boolean {
    const names = sms.pinned
      ? [sms.pinned]
      : (this.options.directory.find(sms.to, sms.accountId)?.route.carriers ?? []);
    return names.every((name) => this.pooled.get(name)?.carrier?.deduplicatesByReference === true);
  }

  /**
   * Routes the message and hands it to the first carrier of the route's order that takes it: a
   * carrier that is disabled, not bound here, or whose circuit is open is skipped, a temporary
   * refusal moves on to the next, a permanent one ends the hand-over, and one whose outcome is
   * unknown keeps the message on that carrier.
   */
  async handOver(sms: RoutedSms): Promise<HandOverResult> {
    const match = this.options.directory.find(sms.to, sms.accountId);
    if (!match && !sms.pinned) return { outcome: 'no_route' };
    const names = sms.pinned ? [sms.pinned] : carrierOrder(match!.route);
    for (const name of names) {
      const entry = this.pooled.get(name);
      if (!entry || !this.usable(entry)) continue;
      const result = await this.tryCarrier(entry, sms);
      if (result) return result;
    }
    return { outcome: 'unavailable', pinnedTo: sms.pinned };
  }

  private usable(entry: Pooled): boolean {
    if (!entry.record.enabled || !entry.carrier) return false;
    const state = entry.carrier.health().state;
    if (state !== 'ready' && state !== 'bound') return false;
    return entry.circuit.allows(Date.now());
  }

  /** The carrier's answer; null when it could not take the message now and the next may. */
  private async tryCarrier(entry: Pooled, sms: RoutedSms): Promise<HandOverResult | null> {
    const carrier = entry.carrier!;
    if (entry.pace && !(await entry.pace.take(Date.now() + this.options.paceWaitMs))) {
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
      this.logger.debug({ carrier: carrier.name, err: error }, 'carrier could not take a message');
      return error.outcomeUnknown ? { outcome: 'unavailable', pinnedTo: carrier.name } : null;
    }
  }

  /** Every configured carrier as this process sees it, bound here or not. */
  health(): CarrierHealth[] {
    const now = Date.now();
    return [...this.pooled.values()].map((entry) => {
      const own = entry.carrier?.health();
      return {
        ...(own ?? { carrier: entry.record.name, state: 'standby' }),
        enabled: entry.record.enabled,
        bindsOpen: own && entry.binds && own.state === 'bound' ? 1 : 0,
        binds: entry.record.binds,
        maxPerSecond: entry.record.maxPerSecond,
        circuit: entry.circuit.state(now),
      };
    });
  }
}

function signatureOf(record: CarrierRecord): string {
  return JSON.stringify([record.url, record.password]);
}
