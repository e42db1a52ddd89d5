import type { Logger } from 'pino';
import type { Carrier, CarrierEventSink, CarrierHealth } from '../carrier.js';
import type { CarrierRecord } from '../carrier-catalog.js';
import { type CarrierDependencies, carrierBinds, carrierFromRecord } from '../index.js';
import { Circuit, type CircuitOptions } from './circuit.js';
import type { ClusterPace } from './cluster-pace.js';

interface Session {
  carrier: Carrier;
  /** Its start, settled once it bound or gave up waiting. */
  starting: Promise<void>;
}

/** The states in which a session takes messages. */
export const READY_STATES: ReadonlySet<string> = new Set(['ready', 'bound']);

/**
 * One configured carrier in a worker process: a session (a Carrier) per bind this process holds,
 * keyed by the bind's slot (one, slot 0, for carriers without binds), with the carrier's circuit
 * and cluster pace. Sends go round the sessions that are up.
 */
export class PooledCarrier {
  readonly signature: string;
  readonly binds: boolean;
  readonly circuit: Circuit;
  pace: ClusterPace | null = null;
  private readonly sessions = new Map<number, Session>();
  private next = 0;

  constructor(
    public record: CarrierRecord,
    private readonly deps: CarrierDependencies & { sink: CarrierEventSink; logger: Logger },
    circuit: CircuitOptions,
  ) {
    this.signature = signatureOf(record);
    this.binds = carrierBinds(record);
    this.circuit = new Circuit(circuit);
  }

  get name(): string {
    return this.record.name;
  }

  /** The slots this process has sessions of. */
  slots(): number[] {
    return [...this.sessions.keys()];
  }

  /** Starts a session for the slot without waiting for its bind. */
  open(slot: number): void {
    const carrier = carrierFromRecord(this.record, this.deps);
    const starting = carrier
      .start(this.deps.sink)
      .catch((error: unknown) =>
        this.deps.logger.error({ err: error, carrier: this.name }, 'carrier did not start'),
      );
    this.sessions.set(slot, { carrier, starting });
    this.deps.logger.info({ carrier: this.name, slot }, 'bind taken up by this process');
  }

  /** Stops the slot's session; resolves once it is closed. */
  async close(slot: number): Promise<void> {
    const session = this.sessions.get(slot);
    this.sessions.delete(slot);
    if (!session) return;
    this.deps.logger.info({ carrier: this.name, slot }, 'bind given up by this process');
    await session.starting;
    await session.carrier.stop();
  }

  /** Resolves once every session's first bind was made or given up on. */
  async started(): Promise<void> {
    await Promise.all([...this.sessions.values()].map((session) => session.starting));
  }

  held(): boolean {
    return this.sessions.size > 0;
  }

  /** Whether some session of this process can take a message now. */
  ready(): boolean {
    return [...this.sessions.values()].some((session) => READY_STATES.has(session.carrier.health().state));
  }

  /** A session that can take a message now, in turn; null when none is up. */
  pick(): Carrier | null {
    const up = [...this.sessions.values()].filter((session) =>
      READY_STATES.has(session.carrier.health().state),
    );
    if (up.length === 0) return null;
    this.next = (this.next + 1) % up.length;
    return up[this.next]!.carrier;
  }

  deduplicates(): boolean {
    const [first] = this.sessions.values();
    return first?.carrier.deduplicatesByReference === true;
  }

  /** The carrier as this process sees it: its sessions' state, window and errors together. */
  health(now: number): CarrierHealth {
    const own = [...this.sessions.values()].map((session) => session.carrier.health());
    const best = own.find((health) => READY_STATES.has(health.state)) ?? own[0];
    const windows = own.flatMap((health) => (health.window ? [health.window] : []));
    return {
      ...(best ?? { carrier: this.name, state: 'standby' }),
      ...(windows.length > 0
        ? { window: { inUse: sum(windows.map((w) => w.inUse)), size: sum(windows.map((w) => w.size)) } }
        : {}),
      ...(own.some((health) => health.errors) ? { errors: summedErrors(own) } : {}),
      enabled: this.record.enabled,
      // Only a carrier of binds has sessions to count; an HTTP provider or the simulator has none.
      ...(this.binds
        ? { bindsOpen: own.filter((health) => health.state === 'bound').length, binds: this.record.binds }
        : {}),
      maxPerSecond: this.record.maxPerSecond,
      circuit: this.circuit.state(now),
    };
  }
}

export function signatureOf(record: CarrierRecord): string {
  return JSON.stringify([
    record.url,
    record.password,
    record.secretOptions,
    record.callbackSecret,
    record.template,
  ]);
}

function sum(values: number[]): number {
  return values.reduce((total, value) => total + value, 0);
}

function summedErrors(healths: CarrierHealth[]): Record<string, number> {
  const errors: Record<string, number> = {};
  for (const health of healths)
    for (const [kind, count] of Object.entries(health.errors ?? {}))
      errors[kind] = (errors[kind] ?? 0) + count;
  return errors;
}
