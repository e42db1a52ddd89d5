import { Redis } from 'ioredis';

/**
 * BullMQ wants two kinds of connection (its production guide): workers block and must wait
 * for Redis forever, while producers on the request path must fail fast so that a request
 * is never held by a missing Redis. A Redis that is gone refuses at once; one that hangs
 * (stopped, overloaded, a network that drops packets) answers nothing, so every command on the
 * request path also gives up after `commandTimeoutMs`.
 */
export function createWorkerConnection(redisUrl: string): Redis {
  return new Redis(redisUrl, { maxRetriesPerRequest: null });
}

export function createProducerConnection(redisUrl: string, commandTimeoutMs: number): Redis {
  return new Redis(redisUrl, {
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    connectTimeout: 5_000,
    commandTimeout: commandTimeoutMs,
    // Commands issued in the same tick (each request's rate-limit check, each batch's jobs) go
    // to Redis in one write: a socket write costs more here than the command does.
    enableAutoPipelining: true,
  });
}

/**
 * A subscriber waits for messages as long as the process lives, like a worker, and subscribes
 * again by itself after a reconnect; it connects on its first SUBSCRIBE.
 */
export function createSubscriberConnection(redisUrl: string): Redis {
  return new Redis(redisUrl, { lazyConnect: true, maxRetriesPerRequest: null });
}
