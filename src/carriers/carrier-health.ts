import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { Carrier, CarrierHealth } from './carrier.js';

/** One worker process's carrier, as GET /health lists it. */
export interface WorkerCarrierHealth extends CarrierHealth {
  worker: string;
  updatedAt: string;
}

const PUBLISH_MS = 5_000;
// A worker that has not published for this long has stopped or lost Redis: it is left out.
const STALE_MS = 3 * PUBLISH_MS;

/**
 * The carriers' health where every API process can read it: each worker process writes its
 * carrier's state to one Redis hash (a field per process) every few seconds and on stop
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

  /** Publishes `carrier`'s health now and every few seconds until stop(). */
  start(carrier: Carrier): void {
    const publish = () =>
      void this.redis
        .hset(this.key, this.worker, JSON.stringify(this.entry(carrier)))
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

  /** Every live worker's carrier; `local`, this process's own, as it is this instant. */
  async read(local: Carrier | null): Promise<WorkerCarrierHealth[]> {
    const fields = await this.redis.hgetall(this.key).catch(() => ({}) as Record<string, string>);
    const oldest = Date.now() - STALE_MS;
    const published = Object.values(fields)
      .map((value) => JSON.parse(value) as WorkerCarrierHealth)
      .filter((entry) => entry.worker !== this.worker && Date.parse(entry.updatedAt) >= oldest);
    const own = local ? [this.entry(local)] : [];
    return [...own, ...published].sort((a, b) => a.worker.localeCompare(b.worker));
  }

  private entry(carrier: Carrier): WorkerCarrierHealth {
    return { ...carrier.health(), worker: this.worker, updatedAt: new Date().toISOString() };
  }
}
