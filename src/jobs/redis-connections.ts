import { Redis, type RedisOptions } from 'ioredis';
import type { RedisTarget } from '../config.js';

/** The longest pause between two attempts of the request path's connection to reconnect. */
const LONGEST_RECONNECT_PAUSE_MS = 1_000;

/**
 * Options every connection to `target` shares. Through Sentinel, each connection asks a
 * sentinel for the master and checks that what it reached is one, so after a failover it
 * reconnects to the new master by itself: Sentinel disconnects the clients of the master it
 * demotes. A connection still on a demoted master (a partition) has its writes refused with
 * READONLY, which also makes it reconnect; `resend` says whether the refused command is sent
 * again on the new connection (it never ran).
 */
function targetOptions(target: RedisTarget, resend: boolean): RedisOptions {
  const reconnectOnError = (error: Error) =>
    error.message.startsWith('READONLY') ? (resend ? 2 : 1) : false;
  if (!target.sentinel) return { reconnectOnError };
  return {
    reconnectOnError,
    sentinels: target.sentinel.sentinels,
    name: target.sentinel.name,
    ...(target.sentinel.password === null ? {} : { sentinelPassword: target.sentinel.password }),
    // rediss:// in REDIS_URL: the master is reached over TLS (the sentinels are not).
    enableTLSForSentinelMode: new URL(target.url).protocol === 'rediss:',
  };
}

/** A connection for one-off commands (start-up checks) that gives up rather than retrying. */
export function createProbeConnection(target: RedisTarget): Redis {
  return new Redis(target.url, {
    ...targetOptions(target, false),
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    connectTimeout: 5_000,
    retryStrategy: () => null,
    sentinelRetryStrategy: () => null,
  });
}

/**
 * BullMQ wants two kinds of connection (its production guide): workers block and must wait
 * for Redis forever, while producers on the request path must fail fast so that a request
 * is never held by a missing Redis. A Redis that is gone refuses at once; one that hangs
 * (stopped, overloaded, a network that drops packets) answers nothing, so every command on the
 * request path also gives up after `commandTimeoutMs`.
 */
export function createWorkerConnection(target: RedisTarget): Redis {
  return new Redis(target.url, { ...targetOptions(target, true), maxRetriesPerRequest: null });
}

/**
 * The request path's connection. Giving up per command would still cost every request that long
 * for each command it sends (a send three, a login five), so the connection is a circuit: when it
 * has waited `commandTimeoutMs` for any answer, it is dropped (ioredis's `socketTimeout`), and
 * until a new connection has shaken hands with Redis every command on it fails at once, as while
 * Redis is refusing. The new connection is tried after 50 ms, then at doubling pauses up to a
 * second, each handshake bounded by the same timeout: once Redis answers, the next attempt closes
 * the circuit by itself. Every user of the request path (the budget, the field limits, the login
 * lock, subscription slots, the queues' producers, `/health`) shares this one connection, so one
 * timeout opens the circuit for all of them in the process. A command cut off with its
 * connection is not sent again on the next one: its caller has been told it failed. Through
 * Sentinel, a failover opens the circuit the same way until the new master has shaken hands.
 */
export function createProducerConnection(target: RedisTarget, commandTimeoutMs: number): Redis {
  return new Redis(target.url, {
    ...targetOptions(target, false),
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    connectTimeout: 5_000,
    commandTimeout: commandTimeoutMs,
    socketTimeout: commandTimeoutMs,
    sentinelCommandTimeout: commandTimeoutMs,
    autoResendUnfulfilledCommands: false,
    retryStrategy: (attempt) => Math.min(50 * 2 ** (attempt - 1), LONGEST_RECONNECT_PAUSE_MS),
    // Commands issued in the same tick (each request's rate-limit check, each batch's jobs) go
    // to Redis in one write: a socket write costs more here than the command does.
    enableAutoPipelining: true,
  });
}

/**
 * A subscriber waits for messages as long as the process lives, like a worker, and subscribes
 * again by itself after a reconnect; it connects on its first SUBSCRIBE.
 */
export function createSubscriberConnection(target: RedisTarget): Redis {
  return new Redis(target.url, {
    ...targetOptions(target, true),
    lazyConnect: true,
    maxRetriesPerRequest: null,
  });
}
