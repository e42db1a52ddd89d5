import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { sendError } from '../rest/error-response.js';
import type { Services } from '../services.js';

/** The most of a provider's callback read: their reports and replies are a few hundred bytes. */
export const MAX_CALLBACK_BYTES = 64 * 1024;
export const CARRIER_CALLBACK_ROUTES = ['/carriers/:name/events', '/carriers/:name/events/:secret'];

/**
 * POST /carriers/{name}/events (and with a secret path segment): the reports and replies HTTP
 * providers call back with. Outside /v1 and its credentials: each call is verified the
 * provider's way (src/carriers/http/carrier-callbacks.ts), and the body is kept raw for the
 * signature.
 */
export function registerCarrierCallbacks(app: FastifyInstance, options: { services: Services }): void {
  void app.register(async (scope) => {
    // Every content type, as bytes: the signature covers the body exactly as sent.
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser(
      '*',
      { parseAs: 'buffer', bodyLimit: MAX_CALLBACK_BYTES },
      (_request, body, done) => done(null, body),
    );
    const handler = async (request: FastifyRequest, reply: FastifyReply) => {
      const { name } = request.params as { name: string };
      const answer = await options.services.carrierCallbacks.receive(
        name,
        {
          path: request.url,
          method: request.method,
          headers: request.headers,
          rawBody: Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0),
        },
        request.ip,
      );
      if (answer.outcome === 'accepted')
        return reply.status(200).send({ received: true, request: request.id });
      if (answer.outcome === 'refused')
        return sendError(reply, 'unauthorized', 'The callback is not verified as coming from this carrier');
      return sendError(
        reply.header('retry-after', String(Math.ceil(answer.retryAfterMs / 1000))),
        'rate_limited',
        'Too many unverified carrier callbacks from this address',
      );
    };
    for (const url of CARRIER_CALLBACK_ROUTES) scope.route({ method: ['POST', 'GET'], url, handler });
  });
}
