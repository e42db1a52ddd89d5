import { useCSRFPrevention } from '@graphql-yoga/plugin-csrf-prevention';
import { createGraphQLError, type Plugin } from 'graphql-yoga';

export const CSRF_HEADER = 'X-Tern-CSRF';

/**
 * A browser attaches only the schemes it negotiated itself (Basic, Digest, Negotiate) to a request
 * on its own; a bearer credential is set by a script, and a script of another site can set it only
 * through a CORS preflight, which Tern never grants.
 */
const BEARER = /^Bearer\s/i;

/**
 * A browser can send a form or a GET cross-site without a preflight; only JSON, a request
 * carrying the header, or one carrying a bearer credential is taken as a deliberate API call (the
 * console's subscriptions are GETs with `Accept: text/event-stream` and the Authorization header).
 * The refusal names the header, so a client knows what to add.
 */
export function csrfPrevention(): Plugin {
  const check = useCSRFPrevention({ requestHeaders: [CSRF_HEADER.toLowerCase()] });
  return {
    onRequestParse(payload) {
      if (BEARER.test(payload.request.headers.get('authorization') ?? '')) return;
      try {
        check.onRequestParse?.(payload);
      } catch {
        throw createGraphQLError(
          `Send the header ${CSRF_HEADER} (any value) or an Authorization: Bearer credential with a GET or a non-JSON request to /graphql, or post JSON with Content-Type: application/json`,
          { extensions: { http: { status: 403 } } },
        );
      }
    },
  };
}
