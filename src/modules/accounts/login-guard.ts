import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import { RateLimitedError } from '../../errors.js';
import type { Clock } from '../../lib/clock.js';

/** Failures for one e-mail from one address before the pair is locked, and for how long. */
export const FAILURES_BEFORE_LOCK = 10;
export const LOCK_SECONDS = 15 * 60;
/** Failures for one e-mail from every address together, in any window of this length, before the e-mail is locked everywhere. */
const FAILURES_BEFORE_GLOBAL_LOCK = 100;
const GLOBAL_WINDOW_MS = 60 * 60 * 1000;
/** Failures after which each further attempt is answered more slowly. */
const FAILURES_BEFORE_SLOWDOWN = 3;
const MAX_SLOWDOWN_MS = 3_000;

/** How long an address that logged in to an account stays one the e-mail's lock does not refuse. */
export const KNOWN_ADDRESS_DAYS = 30;
const KNOWN_ADDRESS_MS = KNOWN_ADDRESS_DAYS * 24 * 60 * 60 * 1000;
/** The addresses remembered per e-mail, the most recent kept: a bound on the key, whatever the owner does. */
const MAX_KNOWN_ADDRESSES = 50;

/**
 * The attempts of one e-mail in the window, a sorted set dated by Tern's clock (ARGV[1]): an
 * attempt from an address that logged in to the e-mail's account since ARGV[6] (KEYS[2], the
 * addresses by their last success) is neither counted nor refused, and answers -1; else those
 * that left the window are dropped; with `max` (ARGV[3]) left the attempt is refused, answering
 * the milliseconds until the oldest leaves; else it is added (ARGV[4], unique) and 0 answered.
 * One atomic script, so however many attempts arrive at once through however many processes, no
 * more than `max` are admitted in any window.
 */
const COUNT_EMAIL_ATTEMPT = `
local known = redis.call('ZSCORE', KEYS[2], ARGV[5])
if known and tonumber(known) >= tonumber(ARGV[6]) then return -1 end
local now = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[3]) then
  local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
  return tonumber(oldest[2]) + window - now
end
redis.call('ZADD', KEYS[1], now, ARGV[4])
redis.call('PEXPIRE', KEYS[1], window)
return 0`;

/** One login attempt, counted: what its outcome is reported with. */
export interface LoginAttempt {
  email: string;
  address: string;
  /** Its entry among the e-mail's attempts, which a success takes back. */
  id: string;
}

/**
 * Brute-force protection for login. Attempts are counted per (e-mail, address) *before* the
 * password is checked, each in one atomic Redis script, so however many attempts arrive at once
 * (in parallel, batched, through several processes) at most FAILURES_BEFORE_LOCK passwords are
 * checked: the attempts beyond are refused (429) unchecked. After a few failures answers slow
 * down; after FAILURES_BEFORE_LOCK the pair is locked for LOCK_SECONDS. One address can
 * therefore never lock the account for anyone else, and the lock always ends. A success clears
 * the pair's count. Unknown e-mails are counted exactly like known ones, so the answers reveal
 * nothing.
 *
 * A distributed attack, a few attempts from each of many addresses, is caught per e-mail over
 * every address: at most FAILURES_BEFORE_GLOBAL_LOCK attempts in any hour, the window sliding
 * with each attempt, so the e-mail is locked until the oldest of them is an hour old. A lock of a
 * fixed length would open a fresh hundred each time it ended (ten addresses could try a hundred
 * passwords every 15 minutes). Attempts refused while locked are not counted and do not make the
 * lock longer; a success takes its own attempt back. The pair's window is Redis's; the e-mail's
 * is dated by Tern's clock, an hour being long enough for the processes' clocks to agree.
 *
 * So that a stranger cannot lock the owner out, the e-mail's lock never refuses an address that
 * logged in to the account in the last KNOWN_ADDRESS_DAYS days: each success remembers its
 * address (per e-mail, dated by Tern's clock, the most recent MAX_KNOWN_ADDRESSES kept), and
 * attempts from such an address meet only the lock of their own (e-mail, address) pair.
 */
export class LoginGuard {
  private readonly byEmailAndAddress: RateLimiterRedis;

  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    private readonly clock: Clock,
  ) {
    this.byEmailAndAddress = new RateLimiterRedis({
      storeClient: redis,
      keyPrefix: `${prefix}:login-fail-pair`,
      points: FAILURES_BEFORE_LOCK,
      duration: LOCK_SECONDS,
      blockDuration: LOCK_SECONDS,
    });
  }

  /**
   * Counts the attempt, then refuses it unchecked when the pair or the e-mail is locked (or
   * the attempt is one more than a lock allows), or waits the slowdown. Redis out of reach
   * leaves login unguarded rather than refused, as with the request rate limit.
   */
  async beforeAttempt(email: string, address: string): Promise<LoginAttempt> {
    const attempt = { email, address, id: randomUUID() };
    const pair = await this.countPair(`${email}|${address}`);
    await this.countForEmail(attempt);
    const failures = (pair?.consumedPoints ?? 1) - 1;
    if (failures >= FAILURES_BEFORE_SLOWDOWN) {
      await new Promise((resolve) =>
        setTimeout(resolve, Math.min(MAX_SLOWDOWN_MS, 250 * 2 ** (failures - FAILURES_BEFORE_SLOWDOWN))),
      );
    }
    return attempt;
  }

  /** The attempt was counted already; the failure that reaches the pair's lock starts it. */
  async failed({ email, address }: LoginAttempt): Promise<void> {
    const pairKey = `${email}|${address}`;
    const pair = await this.byEmailAndAddress.get(pairKey).catch(() => null);
    if (pair && pair.consumedPoints >= FAILURES_BEFORE_LOCK)
      await this.byEmailAndAddress.block(pairKey, LOCK_SECONDS).catch(() => undefined);
  }

  async succeeded({ email, address, id }: LoginAttempt): Promise<void> {
    const now = this.clock.now().getTime();
    const known = this.knownKey(email);
    await Promise.all([
      this.byEmailAndAddress.delete(`${email}|${address}`),
      this.redis.zrem(this.emailKey(email), id),
      this.redis
        .multi()
        .zadd(known, now, address)
        .zremrangebyscore(known, '-inf', now - KNOWN_ADDRESS_MS)
        .zremrangebyrank(known, 0, -(MAX_KNOWN_ADDRESSES + 1))
        .pexpire(known, KNOWN_ADDRESS_MS)
        .exec(),
    ]).catch(() => undefined);
  }

  /** One more attempt of the pair; RateLimitedError past its points or while it is blocked. */
  private async countPair(key: string): Promise<RateLimiterRes | undefined> {
    try {
      return await this.byEmailAndAddress.consume(key);
    } catch (outcome) {
      if (outcome instanceof RateLimiterRes)
        throw new RateLimitedError(Math.max(1, Math.ceil(outcome.msBeforeNext / 1000)));
      return undefined;
    }
  }

  /** The attempt among the e-mail's; RateLimitedError, until the oldest leaves the window, when it is full. */
  private async countForEmail({ email, address, id }: LoginAttempt): Promise<void> {
    let waitMs: unknown;
    const now = this.clock.now().getTime();
    try {
      waitMs = await this.redis.eval(
        COUNT_EMAIL_ATTEMPT,
        2,
        this.emailKey(email),
        this.knownKey(email),
        now,
        GLOBAL_WINDOW_MS,
        FAILURES_BEFORE_GLOBAL_LOCK,
        id,
        address,
        now - KNOWN_ADDRESS_MS,
      );
    } catch {
      return;
    }
    if (typeof waitMs === 'number' && waitMs > 0) throw new RateLimitedError(Math.ceil(waitMs / 1000));
  }

  private emailKey(email: string): string {
    return `${this.prefix}:login-attempts:${email}`;
  }

  /** The addresses that logged in to the e-mail's account, scored by their last success. */
  private knownKey(email: string): string {
    return `${this.prefix}:login-known:${email}`;
  }
}
