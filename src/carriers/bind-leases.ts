import type { Redis } from 'ioredis';

// Renews a lease only while this process still holds it.
const RENEW = `if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('pexpire', KEYS[1], ARGV[2]) else return 0 end`;
const RELEASE = `if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end`;

/**
 * The cluster's binds to each carrier as leases in Redis: slot i of carrier c is one key, held by
 * one process and renewed every tick. A carrier with `binds` N has slots 0..N-1, so never more
 * than N sessions are open across the processes; a process holds at most one slot per carrier,
 * and a slot whose holder died expires after `ttlMs` for another process to take.
 */
export class BindLeases {
  private readonly held = new Map<string, number>();

  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    private readonly worker: string,
    private readonly ttlMs: number,
  ) {}

  /** Renews this process's slot of the carrier, or takes a free one; whether it holds one. */
  async hold(carrier: string, binds: number): Promise<boolean> {
    const slot = this.held.get(carrier);
    if (slot !== undefined && slot < binds) {
      if ((await this.redis.eval(RENEW, 1, this.key(carrier, slot), this.worker, this.ttlMs)) === 1)
        return true;
      this.held.delete(carrier);
    } else if (slot !== undefined) {
      await this.release(carrier);
    }
    for (let next = 0; next < binds; next += 1) {
      if ((await this.redis.set(this.key(carrier, next), this.worker, 'PX', this.ttlMs, 'NX')) === 'OK') {
        this.held.set(carrier, next);
        return true;
      }
    }
    return false;
  }

  async release(carrier: string): Promise<void> {
    const slot = this.held.get(carrier);
    if (slot === undefined) return;
    this.held.delete(carrier);
    await this.redis.eval(RELEASE, 1, this.key(carrier, slot), this.worker).catch(() => undefined);
  }

  holds(carrier: string): boolean {
    return this.held.has(carrier);
  }

  private key(carrier: string, slot: number): string {
    return `${this.prefix}:carrier-bind:${carrier}:${slot}`;
  }
}
