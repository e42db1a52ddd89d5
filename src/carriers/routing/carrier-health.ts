import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { CarrierHealth } from '../carrier.js';

/** This process's carriers as they are this instant. */
export type CarrierHealthSource = () => CarrierHealth[];

/** One worker process's carrier, as GET /health lists it. */
export interface WorkerCarrierHealth extends CarrierHealth {
  worker: string;
  updatedAt: string;
}

const PUBLISH_MS = 1_000;
// A worker that has not published for this long has stopped or lost Redis: it is left out.
const STALE_MS = 15 * PUBLISH_MS;

/**
 * The carriers' health where every API process and the CLI can read it: each worker process writes its
 * carriers' state to one Redis hash (a field per process) every few seconds and on stop
 * removes it, so GET /health shows every worker's bind, window and errors, whichever process
 * answers it.
 */
export class CarrierHealthBoard {
  private timer: NodeJS.Timeout | null = null;
  private readonly key: string;

  constructor(
    private readonly redis: Redis,
    prefix: string,
    private readonly logger: Logger,
    readonly worker = `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`,
  ) {
    this.key = `${prefix}:carrier-health`;
  }

  /** Publishes the carriers' health now and every few seconds until stop(). */
  start(carriers: CarrierHealthSource): void {
    const publish = () =>
      void this.redis
        .hset(this.key, this.worker, JSON.stringify(this.entries(carriers)))
        .catch((error: unknown) => this.logger.debug({ err: error }, 'carrier health not published'));
    if (this.redis.status === 'ready') publish();
    else this.redis.once('ready', publish);
    this.timer = setInterval(publish, PUBLISH_MS);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (!this.timer) return;
    clearInterval(this.timer);
    this.timer = null;
    await this.redis.hdel(this.key, this.worker).catch(() => undefined);
  }

  /** Every live worker's carriers; `local`, this process's own, as they are this instant. */
  async read(local: CarrierHealthSource | null): Promise<WorkerCarrierHealth[]> {
    const fields = await this.redis.hgetall(this.key).catch(() => ({}) as Record<string, string>);
    const oldest = Date.now() - STALE_MS;
    const published = Object.values(fields)
      .flatMap((value) => [JSON.parse(value) as WorkerCarrierHealth[] | WorkerCarrierHealth].flat())
      .filter((entry) => entry.worker !== this.worker && Date.parse(entry.updatedAt) >= oldest);
    const own = local ? this.entries(local) : [];
    return [...own, ...published].sort(
      (a, b) => a.carrier.localeCompare(b.carrier) || a.worker.localeCompare(b.worker),
    );
  }

  private entries(carriers: CarrierHealthSource): WorkerCarrierHealth[] {
    const updatedAt = new Date().toISOString();
    return carriers().map((health) => ({ ...health, worker: this.worker, updatedAt }));
  }
}
