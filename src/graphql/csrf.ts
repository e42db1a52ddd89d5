import { useCSRFPrevention } from '@graphql-yoga/plugin-csrf-prevention';
import { createGraphQLError, type Plugin } from 'graphql-yoga';

export const CSRF_HEADER = 'X-Tern-CSRF';

/**
 * A browser can send a form or a GET cross-site without a preflight; only JSON, or a request
 * carrying the header, is taken as a deliberate API call. The refusal names the header, so a
 * client knows what to add.
 */
export function csrfPrevention(): Plugin {
  const check = useCSRFPrevention({ requestHeaders: [CSRF_HEADER.toLowerCase()] });
  return {
    onRequestParse(payload) {
      try {
        check.onRequestParse?.(payload);
      } catch {
        throw createGraphQLError(
          `Send the header ${CSRF_HEADER} (any value) with a GET or a non-JSON request to /graphql, or post JSON with Content-Type: application/json`,
          { extensions: { http: { status: 403 } } },
        );
      }
    },
  };
}
