import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { sendError } from './error-response.js';
import type { RestRoute } from './route-table.js';

// Every method Fastify routes; a known path answers 405 to those it does not serve (TRACE and
// OPTIONS included: the API has no CORS preflight to answer, and TRACE only echoes requests).
// QUERY (RFC 10008, a safe method with a body) is one Fastify routes, so it gets its 405 like the others.
const ALL_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'TRACE', 'QUERY'] as const;

/** A 405 with `Allow` for each method a path of the table does not serve. */
export function refuseOtherMethods(app: FastifyInstance, routes: readonly RestRoute[]): void {
  const methodsByPath = new Map<string, Set<string>>();
  for (const route of routes) {
    const methods = methodsByPath.get(route.path) ?? new Set<string>();
    methods.add(route.method);
    methodsByPath.set(route.path, methods);
  }
  for (const [path, methods] of methodsByPath) {
    const allowed = [...methods, ...(methods.has('GET') ? ['HEAD'] : [])].join(', ');
    // Fastify answers HEAD itself wherever GET is served.
    const others = ALL_METHODS.filter(
      (method) => !methods.has(method) && !(method === 'HEAD' && methods.has('GET')),
    );
    if (others.length === 0) continue;
    const refuse = async (_request: FastifyRequest, reply: FastifyReply) =>
      sendError(reply.header('allow', allowed), 'method_not_allowed', `Use one of: ${allowed}`);
    // Refused on arrival, before its body is read: a body the path would not take anyway (a
    // QUERY's, without a content type) must not turn the 405 into a 400.
    app.route({ method: others, url: path, onRequest: refuse, handler: refuse });
  }
}
