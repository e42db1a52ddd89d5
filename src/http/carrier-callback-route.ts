import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Redis } from 'ioredis';
import { RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import { sendError } from '../rest/error-response.js';
import type { Services } from '../services.js';

/** The most of a provider's callback read: their reports and replies are a few hundred bytes. */
export const MAX_CALLBACK_BYTES = 64 * 1024;
/** Refused (unverified) callbacks one address may make per minute before it is answered 429 unheard. */
const REFUSED_PER_MINUTE = 60;

export const CARRIER_CALLBACK_ROUTES = ['/carriers/:name/events', '/carriers/:name/events/:secret'];

/**
 * POST /carriers/{name}/events (and with a secret path segment): the reports and replies HTTP
 * providers call back with. Outside /v1 and its credentials: each call is verified the
 * provider's way, and the body is kept raw for the signature. Verified calls are not limited
 * (their number follows the messages sent); refused ones are, per client address.
 */
export function registerCarrierCallbacks(
  app: FastifyInstance,
  options: { services: Services; redis: Redis; prefix: string },
): void {
  const refusals = new RateLimiterRedis({
    storeClient: options.redis,
    keyPrefix: `${options.prefix}:callback-refusals`,
    points: REFUSED_PER_MINUTE,
    duration: 60,
  });
  void app.register(async (scope) => {
    // Every content type, as bytes: the signature covers the body exactly as sent.
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser(
      '*',
      { parseAs: 'buffer', bodyLimit: MAX_CALLBACK_BYTES },
      (_request, body, done) => done(null, body),
    );
    const handler = async (request: FastifyRequest, reply: FastifyReply) => {
      const address = request.ip;
      const spent = await refusals.get(address);
      if (spent && spent.consumedPoints >= REFUSED_PER_MINUTE)
        return sendError(
          reply.header('retry-after', String(Math.ceil(spent.msBeforeNext / 1000))),
          'rate_limited',
          'Too many unverified carrier callbacks from this address',
        );
      const { name } = request.params as { name: string };
      const outcome = await options.services.carrierCallbacks.receive(name, {
        path: request.url,
        method: request.method,
        headers: request.headers,
        rawBody: Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0),
      });
      if (outcome === 'accepted') return reply.status(200).send({ received: true, request: request.id });
      await refusals.penalty(address, 1).catch((error: unknown) => {
        if (!(error instanceof RateLimiterRes)) throw error;
      });
      return sendError(reply, 'unauthorized', 'The callback is not verified as coming from this carrier');
    };
    for (const url of CARRIER_CALLBACK_ROUTES) scope.route({ method: ['POST', 'GET'], url, handler });
  });
}
