/**
 * A Redis script that takes one of an account's `max` slots (KEYS[1], a sorted set of leases
 * scored by when they end), atomically across processes: it drops expired leases, refuses when
 * the account holds `max` (answering 0), else adds the lease ARGV[3] for ARGV[2] ms (answering 1).
 * Redis's own clock dates the leases, so the processes' clocks need not agree, and a process that
 * dies without giving its slots back loses them when their leases run out.
 * ARGV: max, lease in ms, the lease's id.
 */
export const TAKE_LEASED_SLOT = `
local now = redis.call('TIME')
local nowMs = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', nowMs)
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[1]) then return 0 end
redis.call('ZADD', KEYS[1], nowMs + tonumber(ARGV[2]), ARGV[3])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1`;
