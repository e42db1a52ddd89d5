import type { Redis } from 'ioredis';

// Renews a lease only while this process still holds it.
const RENEW = `if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('pexpire', KEYS[1], ARGV[2]) else return 0 end`;
const RELEASE = `if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end`;

/**
 * The cluster's binds to each carrier as leases in Redis: slot i of carrier c is one key, held by
 * one process and renewed every tick. A carrier with `binds` N has slots 0..N-1, so never more
 * than N sessions are open across the processes. A process holds up to its share of them (the
 * binds divided among the live worker processes, rounded up), taking one more per tick while it
 * is under its share and giving back its highest beyond it; a slot whose holder died expires
 * after `ttlMs` for another process to take.
 */
export class BindLeases {
  private readonly held = new Map<string, Set<number>>();

  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    private readonly worker: string,
    private readonly ttlMs: number,
  ) {}

  /**
   * Renews this process's slots of the carrier and, while it holds fewer than `share` of the
   * `binds`, takes one more; the slots it holds. Slots beyond the share (or the binds) stay held
   * until the caller closed their sessions and gives them back (giveBack).
   */
  async hold(carrier: string, binds: number, share: number): Promise<number[]> {
    const mine = this.held.get(carrier) ?? new Set<number>();
    this.held.set(carrier, mine);
    for (const slot of [...mine]) {
      const renewed = await this.redis.eval(RENEW, 1, this.key(carrier, slot), this.worker, this.ttlMs);
      if (renewed !== 1) mine.delete(slot);
    }
    if (mine.size < share) await this.takeOne(carrier, mine, binds);
    return [...mine].sort((a, b) => a - b);
  }

  /** Gives back one slot, once its session is closed. */
  async giveBack(carrier: string, slot: number): Promise<void> {
    this.held.get(carrier)?.delete(slot);
    await this.redis.eval(RELEASE, 1, this.key(carrier, slot), this.worker).catch(() => undefined);
  }

  /** Gives back every slot of the carrier this process holds. */
  async release(carrier: string): Promise<void> {
    for (const slot of [...(this.held.get(carrier) ?? [])]) await this.giveBack(carrier, slot);
    this.held.delete(carrier);
  }

  private async takeOne(carrier: string, mine: Set<number>, binds: number): Promise<void> {
    for (let slot = 0; slot < binds; slot += 1) {
      if (mine.has(slot)) continue;
      if ((await this.redis.set(this.key(carrier, slot), this.worker, 'PX', this.ttlMs, 'NX')) === 'OK') {
        mine.add(slot);
        return;
      }
    }
  }

  private key(carrier: string, slot: number): string {
    return `${this.prefix}:carrier-bind:${carrier}:${slot}`;
  }
}
