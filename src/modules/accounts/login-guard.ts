import type { Redis } from 'ioredis';
import { RateLimiterRedis, type RateLimiterRes } from 'rate-limiter-flexible';
import { RateLimitedError } from '../../errors.js';

/** Failures for one e-mail from one address before the pair is locked, and for how long. */
export const FAILURES_BEFORE_LOCK = 10;
export const LOCK_SECONDS = 15 * 60;
/** Failures for one e-mail from every address together before the e-mail is locked everywhere. */
const FAILURES_BEFORE_GLOBAL_LOCK = 100;
/** Failures after which each further attempt is answered more slowly. */
const FAILURES_BEFORE_SLOWDOWN = 3;
const MAX_SLOWDOWN_MS = 3_000;

/**
 * Brute-force protection for login. Failures are counted per (e-mail, address): after a few,
 * answers slow down; after FAILURES_BEFORE_LOCK the pair is locked for LOCK_SECONDS (429). One
 * address can therefore never lock the account for anyone else, and the lock always ends. A
 * much higher count per e-mail over every address catches a distributed attack. Unknown
 * e-mails are counted exactly like known ones, so the answers reveal nothing.
 */
export class LoginGuard {
  private readonly byEmailAndAddress: RateLimiterRedis;
  private readonly byEmail: RateLimiterRedis;

  constructor(redis: Redis, prefix: string) {
    this.byEmailAndAddress = new RateLimiterRedis({
      storeClient: redis,
      keyPrefix: `${prefix}:login-fail-pair`,
      points: FAILURES_BEFORE_LOCK,
      duration: LOCK_SECONDS,
      blockDuration: LOCK_SECONDS,
    });
    this.byEmail = new RateLimiterRedis({
      storeClient: redis,
      keyPrefix: `${prefix}:login-fail-email`,
      points: FAILURES_BEFORE_GLOBAL_LOCK,
      duration: 60 * 60,
      blockDuration: LOCK_SECONDS,
    });
  }

  /** Refuses a locked pair or e-mail before any password is checked; else waits the slowdown. */
  async beforeAttempt(email: string, address: string): Promise<void> {
    const [pair, all] = await Promise.all([this.read(this.byEmailAndAddress, `${email}|${address}`), this.read(this.byEmail, email)]);
    if (pair === undefined || all === undefined) return;
    for (const state of [pair, all]) {
      if (state && state.remainingPoints <= 0) throw new RateLimitedError(Math.max(1, Math.ceil(state.msBeforeNext / 1000)));
    }
    const failures = pair?.consumedPoints ?? 0;
    if (failures >= FAILURES_BEFORE_SLOWDOWN) {
      await new Promise((resolve) => setTimeout(resolve, Math.min(MAX_SLOWDOWN_MS, 250 * 2 ** (failures - FAILURES_BEFORE_SLOWDOWN))));
    }
  }

  async failed(email: string, address: string): Promise<void> {
    const pairKey = `${email}|${address}`;
    await Promise.all([this.byEmailAndAddress.penalty(pairKey), this.byEmail.penalty(email)]).catch(() => undefined);
    const pair = await this.read(this.byEmailAndAddress, pairKey);
    // The lock runs from the failure that caused it, not from the first of the window.
    if (pair && pair.consumedPoints >= FAILURES_BEFORE_LOCK) await this.byEmailAndAddress.block(pairKey, LOCK_SECONDS).catch(() => undefined);
  }

  async succeeded(email: string, address: string): Promise<void> {
    await this.byEmailAndAddress.delete(`${email}|${address}`).catch(() => undefined);
  }

  /**
   * undefined when Redis cannot be read: login then goes unguarded rather than refused, as
   * with the request rate limit.
   */
  private async read(limiter: RateLimiterRedis, key: string): Promise<RateLimiterRes | null | undefined> {
    return limiter.get(key).catch(() => undefined);
  }
}
