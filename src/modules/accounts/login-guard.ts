import type { Redis } from 'ioredis';
import { RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
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
 * Brute-force protection for login. Attempts are counted per (e-mail, address) *before* the
 * password is checked, each in one atomic Redis script, so however many attempts arrive at once
 * (in parallel, batched, through several processes) at most FAILURES_BEFORE_LOCK passwords are
 * checked: the attempts beyond are refused (429) unchecked. After a few failures answers slow
 * down; after FAILURES_BEFORE_LOCK the pair is locked for LOCK_SECONDS. One address can
 * therefore never lock the account for anyone else, and the lock always ends. A much higher
 * count per e-mail over every address catches a distributed attack. A success clears the pair's
 * count and gives its attempt back to the e-mail's. Unknown e-mails are counted exactly like
 * known ones, so the answers reveal nothing.
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

  /**
   * Counts the attempt, then refuses it unchecked when the pair or the e-mail is locked (or
   * the attempt is one more than a lock allows), or waits the slowdown. Redis out of reach
   * leaves login unguarded rather than refused, as with the request rate limit.
   */
  async beforeAttempt(email: string, address: string): Promise<void> {
    const pair = await this.count(this.byEmailAndAddress, `${email}|${address}`);
    await this.count(this.byEmail, email);
    const failures = (pair?.consumedPoints ?? 1) - 1;
    if (failures >= FAILURES_BEFORE_SLOWDOWN) {
      await new Promise((resolve) =>
        setTimeout(resolve, Math.min(MAX_SLOWDOWN_MS, 250 * 2 ** (failures - FAILURES_BEFORE_SLOWDOWN))),
      );
    }
  }

  /** The attempt was counted already; the failure that reaches the lock starts it. */
  async failed(email: string, address: string): Promise<void> {
    const pairKey = `${email}|${address}`;
    const pair = await this.byEmailAndAddress.get(pairKey).catch(() => null);
    if (pair && pair.consumedPoints >= FAILURES_BEFORE_LOCK)
      await this.byEmailAndAddress.block(pairKey, LOCK_SECONDS).catch(() => undefined);
  }

  async succeeded(email: string, address: string): Promise<void> {
    await Promise.all([
      this.byEmailAndAddress.delete(`${email}|${address}`),
      this.byEmail.reward(email, 1),
    ]).catch(() => undefined);
  }

  /** One more attempt on `key`; RateLimitedError past the limiter's points or while it is blocked. */
  private async count(limiter: RateLimiterRedis, key: string): Promise<RateLimiterRes | undefined> {
    try {
      return await limiter.consume(key);
    } catch (outcome) {
      if (outcome instanceof RateLimiterRes)
        throw new RateLimitedError(Math.max(1, Math.ceil(outcome.msBeforeNext / 1000)));
      return undefined;
    }
  }
}
