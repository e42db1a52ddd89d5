import type { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { CarrierEventSink, CarrierHealth } from '../carrier.js';
import type { CarrierRecord } from '../carrier-catalog.js';
import type { CarrierDependencies } from '../index.js';
import { BindLeases } from './bind-leases.js';
import type { CarrierDirectory } from './carrier-directory.js';
import type { WorkerCarrierHealth } from './carrier-health.js';
import type { CircuitOptions } from './circuit.js';
import { ClusterPace } from './cluster-pace.js';
import { type HandOverResult, type RoutedSms, takingElsewhere, tryCarrier } from './hand-over.js';
import { type ForwardedHandler, HandOverQueues, type ResumedRoute } from './hand-over-queues.js';
import { PooledCarrier, signatureOf } from './pooled-carrier.js';
import { carrierOrder } from './route-table.js';

export type { ResumedRoute } from './hand-over-queues.js';

export interface CarrierPoolOptions {
  directory: CarrierDirectory;
  deps: CarrierDependencies;
  redis: Redis;
  redisPrefix: string;
  worker: string;
  sinkFor(carrier: string): CarrierEventSink;
  /** What the other worker processes publish of their carriers (see CarrierHealthBoard). */
  cluster(): Promise<WorkerCarrierHealth[]>;
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
  private readonly pooled = new Map<string, PooledCarrier>();
  private readonly leases: BindLeases;
  private timer: NodeJS.Timeout | null = null;
  private reconciling: Promise<void> = Promise.resolve();
  private stopped = false;
  private readonly logger: Logger;
  private readonly usableListeners = new Set<(usable: boolean) => void>();
  private lastUsable: boolean | null = null;
  private reconcileRunning = false;
  private reconcileAgain = false;
  /** Sessions still closing, by carrier and slot; shutdown waits for them. */
  private readonly closing = new Map<string, Promise<void>>();
  private readonly handOvers: HandOverQueues;
  /** The carriers another worker process can take a message for now, as it published lately. */
  private elsewhere = new Set<string>();

  constructor(private readonly options: CarrierPoolOptions) {
    this.logger = options.deps.logger.child({ module: 'carriers' });
    this.leases = new BindLeases(options.redis, options.redisPrefix, options.worker, options.tickMs * 3);
    this.handOvers = new HandOverQueues({
      redis: options.redis,
      config: options.deps.config,
      logger: this.logger,
    });
  }

  /** Takes up the carriers and waits a short while for their first binds, as a carrier's start does. */
  async start(): Promise<void> {
    await this.options.directory.ready();
    this.options.directory.onChange(() => this.schedule());
    await this.reconciling;
    await Promise.all([...this.pooled.values()].map((entry) => entry.started()));
    this.timer = setInterval(() => this.schedule(), this.options.tickMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    await this.reconciling;
    await this.handOvers.close();
    for (const name of [...this.pooled.keys()]) this.retire(name, true);
    await Promise.all(this.closing.values());
  }

  /** What takes the messages other processes forward to this one's binds. */
  consumeForwarded(handler: ForwardedHandler): void {
    this.handOvers.consumeWith(handler);
  }

  /** The queue of each carrier with binds through which processes hand messages to its binds' holders. */
  handOverQueues(): Queue[] {
    return this.handOvers.queuesOf(
      [...this.pooled.values()].filter((entry) => entry.binds).map((entry) => entry.name),
    );
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
      // A carrier with a new URL keeps its binds for the new sessions; one removed gives them back.
      if (!record) this.retire(name, true);
      else if (signatureOf(record) !== entry.signature) this.retire(name, false);
    }
    const cluster = await this.options.cluster();
    const peers = 1 + new Set(cluster.map((entry) => entry.worker)).size;
    this.elsewhere = takingElsewhere(cluster, Date.now() - this.options.tickMs * 3);
    for (const record of records) await this.keep(record, peers);
    this.handOvers.keepConsuming(this.consumable());
    this.noteUsable();
  }

  /**
   * The carriers whose hand-over queue this process consumes: those it holds a bind of, while its
   * session is up or no other process has one up (then it moves the waiting messages on to their
   * next carrier). A holder whose session is down leaves the queue to one whose session is up.
   */
  private consumable(): Set<string> {
    const names = [...this.pooled.values()]
      .filter((entry) => entry.binds && entry.held() && (entry.ready() || !this.elsewhere.has(entry.name)))
      .map((entry) => entry.name);
    return new Set(names);
  }

  private async keep(record: CarrierRecord, peers: number): Promise<void> {
    const entry = this.pooled.get(record.name) ?? this.adopt(record);
    this.keepPace(entry, record);
    entry.record = record;
    if (!entry.binds) {
      if (!entry.held()) entry.open(0);
      return;
    }
    await this.keepShareOfBinds(entry, record, peers);
  }

  private keepPace(entry: PooledCarrier, record: CarrierRecord): void {
    if (entry.record.maxPerSecond === record.maxPerSecond && (!record.maxPerSecond || entry.pace)) return;
    entry.pace = record.maxPerSecond
      ? new ClusterPace(this.options.redis, this.options.redisPrefix, record.name, record.maxPerSecond)
      : null;
  }

  /** This process's share of the carrier's binds: those it holds the leases of open, the others closed. */
  private async keepShareOfBinds(entry: PooledCarrier, record: CarrierRecord, peers: number): Promise<void> {
    const share = Math.ceil(record.binds / peers);
    const held = await this.leases.hold(record.name, record.binds, share);
    const kept = held.filter((slot) => slot < record.binds).slice(0, share);
    for (const slot of held) if (!kept.includes(slot)) this.closeSlot(entry, slot, true);
    for (const slot of entry.slots()) if (!held.includes(slot)) this.closeSlot(entry, slot, false);
    for (const slot of kept)
      if (!entry.slots().includes(slot) && !this.isClosing(entry, slot)) entry.open(slot);
  }

  private adopt(record: CarrierRecord): PooledCarrier {
    const entry = new PooledCarrier(
      record,
      { ...this.options.deps, sink: this.options.sinkFor(record.name), logger: this.logger },
      this.options.circuit,
    );
    this.pooled.set(record.name, entry);
    return entry;
  }

  private isClosing(entry: PooledCarrier, slot: number): boolean {
    return this.closing.has(`${entry.name}:${slot}`);
  }

  /**
   * Closes a session in the background (a round must not wait on an SMSC), then gives its bind
   * back when asked: only once the session is closed, so that no other process's overlaps it.
   */
  private closeSlot(entry: PooledCarrier, slot: number, giveBack: boolean): void {
    const key = `${entry.name}:${slot}`;
    if (this.closing.has(key)) return;
    const closed = entry
      .close(slot)
      .then(() => (giveBack && entry.binds ? this.leases.giveBack(entry.name, slot) : undefined))
      .catch((error: unknown) =>
        this.logger.warn({ err: error, carrier: entry.name }, 'session did not close cleanly'),
      )
      .finally(() => this.closing.delete(key));
    this.closing.set(key, closed);
  }

  private retire(name: string, giveBack: boolean): void {
    const entry = this.pooled.get(name);
    this.pooled.delete(name);
    if (!entry) return;
    for (const slot of entry.slots()) this.closeSlot(entry, slot, giveBack);
  }

  private noteUsable(): void {
    const usable = [...this.pooled.values()].some((entry) => entry.held() && entry.record.enabled);
    if (usable === this.lastUsable) return;
    this.lastUsable = usable;
    for (const listener of this.usableListeners) listener(usable);
  }

  /** Whether a hand-over interrupted mid-call may be made again without a risk of sending twice. */
  deduplicates(sms: Pick<RoutedSms, 'to' | 'accountId' | 'pinned'>): boolean {
    const names = sms.pinned
      ? [sms.pinned]
      : (this.options.directory.find(sms.to, sms.accountId)?.route.carriers ?? []);
    return names.every((name) => this.pooled.get(name)?.deduplicates() === true);
  }

  /**
   * Routes the message and hands it to the first carrier of the route's order that takes it. A
   * carrier this process cannot send through now but another process can (it holds the bind) gets
   * the message forwarded there; one that is disabled, taken nowhere, or whose circuit is open is
   * skipped; a temporary refusal moves on to the next, a permanent one ends the hand-over, and one
   * whose outcome is unknown keeps the message on that carrier. A forwarded message resumes with
   * the carriers left, the first tried here and never forwarded again, so a forward cannot loop.
   */
  async handOver(sms: RoutedSms, resumed: ResumedRoute | null = null): Promise<HandOverResult> {
    const names = resumed?.carriers ?? this.carriersFor(sms);
    if (!names) return { outcome: 'no_route' };
    for (const [index, name] of names.entries()) {
      const entry = this.pooled.get(name);
      if (!entry?.record.enabled) continue;
      const carrier = entry.pick();
      if (carrier && entry.circuit.allows(Date.now())) {
        const result = await tryCarrier(entry, carrier, sms, {
          paceWaitMs: this.options.paceWaitMs,
          logger: this.logger,
        });
        if (result) return result;
      } else if (this.elsewhere.has(name) && !(resumed && index === 0)) {
        const left = names.slice(index);
        return { outcome: 'forwarded', forward: () => this.handOvers.forward(left, sms.reference) };
      }
    }
    return { outcome: 'unavailable', pinnedTo: sms.pinned };
  }

  /** The carriers to try in order: the one it is pinned to, else its route's; null when no route covers it. */
  private carriersFor(sms: RoutedSms): string[] | null {
    if (sms.pinned) return [sms.pinned];
    const match = this.options.directory.find(sms.to, sms.accountId);
    return match ? carrierOrder(match.route) : null;
  }

  /**
   * Every configured carrier as this process sees it, bound here or not: `forwarding` when this
   * process holds no session of it and hands its messages to another that does.
   */
  health(): CarrierHealth[] {
    const now = Date.now();
    return [...this.pooled.values()].map((entry) => {
      const health = entry.health(now);
      return health.state === 'standby' && this.elsewhere.has(entry.name)
        ? { ...health, state: 'forwarding' }
        : health;
    });
  }
}
