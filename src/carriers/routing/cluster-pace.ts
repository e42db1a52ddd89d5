import type { Redis } from 'ioredis';

/**
 * The next free instant of a carrier's pace (KEYS[1], microseconds of Redis's clock) moves on by
 * one interval (ARGV[1], microseconds) per hand-over. A hand-over that would have to wait longer
 * than ARGV[2] microseconds takes nothing and gets -1; else it gets how long to wait. One clock
 * (Redis's) and one atomic script, so however many processes hand over, no two hand-overs share
 * an interval.
 */
const TAKE_SLOT = `
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000000 + tonumber(time[2])
local interval = tonumber(ARGV[1])
local free = math.max(now, tonumber(redis.call('GET', KEYS[1]) or '0'))
local wait = free - now
if wait > tonumber(ARGV[2]) then return -1 end
redis.call('SET', KEYS[1], tostring(free + interval), 'PX', math.ceil((wait + interval) / 1000) + 1000)
return wait`;

/**
 * A carrier's max_per_second as one pace for every process: hand-overs are spaced evenly, one
 * interval (1/max_per_second) apart, so no second, however it is cut, sees more than
 * max_per_second of them (a count per calendar second would let two seconds' worth through
 * across a boundary). A hand-over waits for its slot, but not past its deadline, when the
 * carrier counts as unable to take the message now.
 */
export class ClusterPace {
  private readonly key: string;
  private readonly intervalMicros: number;

  constructor(
    private readonly redis: Redis,
    prefix: string,
    carrier: string,
    perSecond: number,
  ) {
    this.key = `${prefix}:carrier-pace:${carrier}`;
    this.intervalMicros = Math.ceil(1_000_000 / perSecond);
  }

  /** True once a slot is taken (after waiting for it); false when none comes free before `deadline` (epoch ms). */
  async take(deadline: number): Promise<boolean> {
    const longest = Math.max(0, deadline - Date.now()) * 1000;
    const wait = Number(await this.redis.eval(TAKE_SLOT, 1, this.key, this.intervalMicros, longest));
    if (wait < 0) return false;
    if (wait >= 1000) await new Promise((resolve) => setTimeout(resolve, Math.round(wait / 1000)));
    return true;
  }
}
