import { Redis } from 'ioredis';

/**
 * BullMQ wants two kinds of connection (its production guide): workers block and must wait
 * for Redis forever, while producers on the request path must fail fast so that a request
 * is never held by a missing Redis.
 */
export function createWorkerConnection(redisUrl: string): Redis {
  return new Redis(redisUrl, { maxRetriesPerRequest: null });
}

export function createProducerConnection(redisUrl: string): Redis {
  return new Redis(redisUrl, { lazyConnect: true, enableOfflineQueue: false, maxRetriesPerRequest: 1, connectTimeout: 5_000 });
}
