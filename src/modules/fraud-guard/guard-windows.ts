import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { FraudRule } from '../../errors.js';
import { Batcher } from '../../lib/batcher.js';

const HOUR_MS = 60 * 60 * 1000;
const DAY_MS = 24 * HOUR_MS;

/** The windows a message is counted in, in the order of the script's keys and limits. */
const WINDOW_RULES = [
  'flood_identical',
  'flood_number',
  'velocity_range',
  'country_hourly',
  'country_daily',
] as const;

/** Arguments of one message in the script: KEYS and ARGV. */
const KEYS_PER_MESSAGE = 6;
const ARGS_PER_MESSAGE = 10;

/**
 * Messages of one account against its windows, one after the other in one atomic script, so
 * that however many sends arrive at once through however many processes, no window admits more
 * than its limit.
 *
 * Per message, 6 KEYS: sorted sets of the messages counted in the last hour to the number with
 * this text, to the number, to its range, to its country, and in the last day to its country;
 * then the account's blocked countries (a hash of country → end of the block, ms). And 10 ARGV:
 * now (Tern's clock, ms), the message's id, the five limits (0: none), the country ('' when no
 * cap applies), the cool-off (ms), and '1' in monitor mode.
 *
 * Each window first drops what left it. A message that would pass a limit is refused and counted
 * nowhere, so a window holds at most its limit; in block mode a country cap reached also blocks
 * the country (once: the hash field is set only when no block is running), which the answer's
 * second element says. In monitor mode the message is counted in every window not full and
 * nothing is blocked, so a monitored window holds at most its limit too. The answer, three
 * elements per message: the first rule refused ('' for none), 1 when this message started a
 * block, the block's end.
 */
const CHECK_MESSAGES = `
local windows = {${HOUR_MS}, ${HOUR_MS}, ${HOUR_MS}, ${HOUR_MS}, ${DAY_MS}}
local rules = {${WINDOW_RULES.map((rule) => `'${rule}'`).join(', ')}}
local function check(k, a)
  local now = tonumber(ARGV[a + 1])
  local monitor = ARGV[a + 10] == '1'
  local refused = ''
  if ARGV[a + 8] ~= '' then
    local untilMs = tonumber(redis.call('HGET', KEYS[k + 6], ARGV[a + 8]) or '0')
    if untilMs > now then refused = 'country_blocked' end
  end
  local full = {}
  for i = 1, 5 do
    local limit = tonumber(ARGV[a + 2 + i])
    if limit > 0 then
      redis.call('ZREMRANGEBYSCORE', KEYS[k + i], '-inf', now - windows[i])
      if redis.call('ZCARD', KEYS[k + i]) >= limit then
        full[i] = true
        if refused == '' then refused = rules[i] end
      end
    end
  end
  if refused == '' or monitor then
    for i = 1, 5 do
      if tonumber(ARGV[a + 2 + i]) > 0 and not full[i] then
        redis.call('ZADD', KEYS[k + i], now, ARGV[a + 2])
        redis.call('PEXPIRE', KEYS[k + i], windows[i])
      end
    end
    return refused, 0, 0
  end
  if (refused == 'country_hourly' or refused == 'country_daily') then
    local coolOff = tonumber(ARGV[a + 9])
    local untilMs = now + coolOff
    redis.call('HSET', KEYS[k + 6], ARGV[a + 8], untilMs)
    if redis.call('PTTL', KEYS[k + 6]) < coolOff then redis.call('PEXPIRE', KEYS[k + 6], coolOff) end
    return refused, 1, untilMs
  end
  return refused, 0, 0
end
local answers = {}
for m = 0, #KEYS / ${KEYS_PER_MESSAGE} - 1 do
  local refused, started, untilMs = check(m * ${KEYS_PER_MESSAGE}, m * ${ARGS_PER_MESSAGE})
  answers[#answers + 1] = refused
  answers[#answers + 1] = started
  answers[#answers + 1] = untilMs
end
return answers`;
const CHECK_MESSAGES_SHA = createHash('sha1').update(CHECK_MESSAGES).digest('hex');

/**
 * A 53-bit fingerprint of a text (cyrb53), for the key of its identical-text window. Not a
 * cryptographic hash, and need not be: two texts that collide only share one number's window of
 * one account, which at most refuses that account's own message early. SHA-1 cost several times
 * more per send than the rest of the key.
 */
export function textFingerprint(text: string): string {
  let h1 = 0xdeadbeef;
  let h2 = 0x41c6ce57;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    h1 = Math.imul(h1 ^ code, 2654435761);
    h2 = Math.imul(h2 ^ code, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return (4294967296 * (2097151 & h2) + (h1 >>> 0)).toString(36);
}

/** Redis lost its script cache (a restart, SCRIPT FLUSH): the script goes again in full. */
const isNoScript = (error: unknown) => error instanceof Error && error.message.startsWith('NOSCRIPT');

/** The limits that apply to one message; 0 for none. */
export interface MessageLimits {
  floodIdentical: number;
  floodAny: number;
  velocity: number;
  countryHourly: number;
  countryDaily: number;
  /** The number's country when a cap of the account may apply to it, else ''. */
  country: string;
  coolOffMs: number;
  monitor: boolean;
}

export interface WindowVerdict {
  rule: FraudRule | null;
  /** When this message started a block of its country: its end. */
  blockedUntil: Date | null;
}

/** The part of a number that names its range: the number less its last 4 digits. */
export function numberRange(to: string): string {
  return to.slice(0, Math.max(1, to.length - 4));
}

interface GuardedCheck {
  message: { id: string; accountId: string; to: string; text: string };
  limits: MessageLimits;
  now: Date;
}

/** The fraud guard's counters in Redis: the checks made at once, one script per account. */
export class GuardWindows {
  // Concurrent checks share a script call: its own cost in the client is most of a check's.
  private readonly checks = new Batcher((checks: GuardedCheck[]) => this.checkAll(checks), {
    maxBatch: 100,
    maxInFlight: 2,
  });

  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
  ) {}

  /** Counts the message, or says the rule that refuses it. Rejects when Redis cannot answer. */
  check(message: GuardedCheck['message'], limits: MessageLimits, now: Date): Promise<WindowVerdict> {
    return this.checks.add({ message, limits, now });
  }

  private async checkAll(checks: GuardedCheck[]): Promise<WindowVerdict[]> {
    // One call per account: its keys share a hash slot ({account}), which Redis Cluster needs.
    const byAccount = new Map<string, number[]>();
    for (const [index, { message }] of checks.entries()) {
      const indexes = byAccount.get(message.accountId);
      if (indexes) indexes.push(index);
      else byAccount.set(message.accountId, [index]);
    }
    const verdicts: WindowVerdict[] = new Array(checks.length);
    await Promise.all(
      [...byAccount.values()].map(async (indexes) => {
        const answers = await this.runScript(indexes.map((index) => checks[index]!));
        for (const [n, index] of indexes.entries()) {
          const rule = answers[3 * n] as string;
          verdicts[index] = {
            rule: rule === '' ? null : (rule as FraudRule),
            blockedUntil: answers[3 * n + 1] === 1 ? new Date(answers[3 * n + 2] as number) : null,
          };
        }
      }),
    );
    return verdicts;
  }

  /** The script for checks of one account: its keys, then its arguments, message after message. */
  private runScript(checks: GuardedCheck[]): Promise<(string | number)[]> {
    const keys: string[] = [];
    const args: (string | number)[] = [];
    for (const { message, limits, now } of checks) {
      const base = `${this.prefix}:fraud:{${message.accountId}}`;
      const country = limits.country;
      keys.push(
        `${base}:text:${message.to}:${textFingerprint(message.text)}`,
        `${base}:number:${message.to}`,
        `${base}:range:${numberRange(message.to)}`,
        `${base}:country-hour:${country}`,
        `${base}:country-day:${country}`,
        `${base}:blocked`,
      );
      args.push(
        now.getTime(),
        message.id,
        limits.floodIdentical,
        limits.floodAny,
        limits.velocity,
        country ? limits.countryHourly : 0,
        country ? limits.countryDaily : 0,
        country,
        limits.coolOffMs,
        limits.monitor ? '1' : '0',
      );
    }
    // By its digest: the 2 kB script is not sent, nor hashed by Redis, with every call.
    return this.redis.evalsha(CHECK_MESSAGES_SHA, keys.length, ...keys, ...args).catch((error: unknown) => {
      if (!isNoScript(error)) throw error;
      return this.redis.eval(CHECK_MESSAGES, keys.length, ...keys, ...args);
    }) as Promise<(string | number)[]>;
  }

  /** The countries blocked for the account now, with the end of each block. */
  async blocked(accountId: string, now: Date): Promise<Record<string, Date>> {
    const blocks = await this.redis.hgetall(`${this.prefix}:fraud:{${accountId}}:blocked`);
    return Object.fromEntries(
      Object.entries(blocks)
        .filter(([, until]) => Number(until) > now.getTime())
        .map(([country, until]) => [country, new Date(Number(until))]),
    );
  }

  /**
   * Lifts a country's block and forgets what its caps counted, so the next message does not
   * block it again at once; says whether a block was running.
   */
  async unblock(accountId: string, country: string): Promise<boolean> {
    const base = `${this.prefix}:fraud:{${accountId}}`;
    const [[, removed] = []] =
      (await this.redis
        .multi()
        .hdel(`${base}:blocked`, country)
        .del(`${base}:country-hour:${country}`, `${base}:country-day:${country}`)
        .exec()) ?? [];
    return removed === 1;
  }
}
