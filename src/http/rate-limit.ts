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
  /** The account of the request's credential when that is known without a lookup (a login token's subject, an API key seen valid); else null. */
  knownAccount: (request: FastifyRequest) => string | null;
  /** The account of the request's credential once it is looked up; null without a valid one. */
  lookUpAccount: (request: FastifyRequest) => Promise<string | null>;
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
 * Which budget is charged is decided before PostgreSQL is asked anything. A credential whose
 * account is known without a lookup is charged to that account. Every other request is charged
 * to its client address first: one without a credential, one refused on sight, and one whose
 * credential only a lookup can tell (an API key this process has not found valid). Over the
 * address's budget it is refused then, without a lookup, so guessing API keys costs PostgreSQL
 * no more lookups than the address's budget. A credential the lookup then finds valid gives
 * the address its request back and is charged to its account.
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
  /** One request more on the caller's budget; RateLimitedError past it. */
  const charge = async (request: FastifyRequest, reply: FastifyReply, caller: string) => {
    const now = Date.now();
    try {
      setHeaders(reply, options.max, await limiter.consume(caller), now);
    } catch (outcome) {
      if (!(outcome instanceof RateLimiterRes)) {
        // Redis is away: the budget cannot be counted, and refusing everything would stop
        // acceptance, which PostgreSQL alone still guarantees. Serve, and say so.
        request.log.warn({ err: outcome }, 'rate limit not counted: Redis unavailable');
        return false;
      }
      setHeaders(reply, options.max, outcome, now);
      options.metrics.rateLimitRefusals.inc({
        limit: 'request',
        caller: caller.startsWith('account:') ? 'account' : 'address',
      });
      throw new RateLimitedError(Math.max(1, Math.ceil(outcome.msBeforeNext / 1000)));
    }
    return true;
  };
  app.addHook('onRequest', async (request, reply) => {
    const route = request.routeOptions.url;
    if (route !== undefined && options.uncounted(route)) return;
    const known = options.knownAccount(request);
    if (known) {
      await charge(request, reply, `account:${known}`);
      return;
    }
    const address = `address:${request.ip}`;
    const counted = await charge(request, reply, address);
    const account = await options.lookUpAccount(request);
    if (!account) return;
    if (counted) await limiter.reward(address, 1).catch(() => undefined);
    await charge(request, reply, `account:${account}`);
  });
}
