import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Redis } from 'ioredis';
import { RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import { RateLimitedError } from '../errors.js';
import type { Metrics } from '../metrics/metrics.js';

export interface RateLimitOptions {
  redis: Redis;
  prefix: string;
  max: number;
  windowSeconds: number;
  /** Who a request counts against: its account when the token is valid, else its client address. */
  identify: (request: FastifyRequest) => Promise<string>;
  /** Whether requests of a route (as declared, e.g. `/health`) go uncounted. */
  uncounted: (route: string) => boolean;
  metrics: Metrics;
}

function setHeaders(reply: FastifyReply, limit: number, state: RateLimiterRes, now: number) {
  reply.header('x-ratelimit-limit', String(limit));
  reply.header('x-ratelimit-remaining', String(Math.max(0, state.remainingPoints)));
  reply.header('x-ratelimit-reset', String(Math.ceil((now + state.msBeforeNext) / 1000)));
}

/**
 * The per-account (or, without a valid token, per-address) budget of every request but those of
 * the routes `uncounted` names. Counting is one atomic Redis script shared by every API process, so two
 * processes give one budget and a burst at the edge admits exactly what is left.
 *
 * What is counted is decided by the route the router matched, never by the raw URL: the router
 * decodes the path (`/%761/settings` is `/v1/settings`), so a test of the URL's spelling would
 * let such a request through uncounted. A path no route matches (another case, doubled
 * slashes) is counted too: it is answered, if only with a 404.
 */
export function registerRateLimit(app: FastifyInstance, options: RateLimitOptions) {
  const limiter = new RateLimiterRedis({
    storeClient: options.redis,
    keyPrefix: `${options.prefix}:rate`,
    points: options.max,
    duration: options.windowSeconds,
  });
  app.addHook('onRequest', async (request, reply) => {
    const route = request.routeOptions.url;
    if (route !== undefined && options.uncounted(route)) return;
    const identity = await options.identify(request);
    const now = Date.now();
    try {
      setHeaders(reply, options.max, await limiter.consume(identity), now);
    } catch (outcome) {
      if (!(outcome instanceof RateLimiterRes)) {
        // Redis is away: the budget cannot be counted, and refusing everything would stop
        // acceptance, which PostgreSQL alone still guarantees. Serve, and say so.
        request.log.warn({ err: outcome }, 'rate limit not counted: Redis unavailable');
        return;
      }
      setHeaders(reply, options.max, outcome, now);
      options.metrics.rateLimitRefusals.inc({
        limit: 'request',
        caller: identity.startsWith('account:') ? 'account' : 'address',
      });
      throw new RateLimitedError(Math.max(1, Math.ceil(outcome.msBeforeNext / 1000)));
    }
  });
}
