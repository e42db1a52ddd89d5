import { type ErrorCode, HTTP_STATUS_BY_CODE, type Issue, MAX_ISSUE_DETAILS } from '../errors.js';
import { IDEMPOTENCY_WINDOW_MS, idempotencyKey } from '../modules/messages/message-sending.js';
import { MAX_PER_PAGE } from '../pagination.js';
import type { ApiExamples } from './openapi-examples.js';

/** When each code is answered: the error table of the reference's overview. */
const WHEN: Readonly<Record<ErrorCode, string>> = {
  bad_request: 'the body is not valid JSON, not an object, or not of the content type the route takes',
  invalid_credentials: 'a login with a wrong e-mail or password',
  unauthorized: 'the bearer token is missing, malformed, expired, revoked or signed with another key',
  otp_required: 'a login with the right password, for an account with two-factor login on, without `otp`',
  forbidden: 'an API key used where only a login token may act (API keys, two-factor login)',
  not_found: 'the resource does not exist or belongs to another account (never 403: nothing says it exists)',
  method_not_allowed: 'the path exists but not with this method (`Allow` lists those it takes)',
  invalid_state: 'an action its current state does not allow (a campaign transition, two-factor login)',
  conflict:
    'a phone already in the campaign, a template a campaign still uses, or an account at its number of API keys',
  payload_too_large: 'a JSON body over 1 MB, an import file over 10 MB',
  validation_error: '`details` names every bad field or parameter, each with its `issue`',
  rate_limited: 'over a rate limit; `Retry-After` says in how many seconds to try again',
  internal_error: 'a failure of the service; the message has nothing of the server, quote the request id',
  service_unavailable:
    'PostgreSQL cannot be reached or the instance is shutting down; nothing was stored, send again after `Retry-After`',
};

/** What each `details[].issue` means. */
const ISSUES: Readonly<Record<Issue, string>> = {
  required: 'the field is missing (or null where a value is needed)',
  invalid_e164: 'not a phone number: 7 to 15 digits, the first not 0, an optional leading `+`',
  too_short: 'shorter than the least the field takes',
  too_long: 'longer than the most the field takes',
  invalid_format: 'not of the form the field takes (an e-mail, a URL, a time zone, a date-time, …)',
  not_found: 'names a record that does not exist in the account (a template, a campaign, an event)',
  invalid_value: 'of the wrong type, out of range or not one of the allowed values (the message says which)',
  unknown_field: 'a body field or query parameter the route does not take (the message names a close one)',
  reused: 'an `Idempotency-Key` already used within 24 hours for a different request',
  unreachable: 'a webhook URL that did not answer the signed ping with a 2xx',
  opted_out: 'the number replied STOP to this account and receives nothing more from it',
};

const table = (head: string[], rows: string[][]) =>
  [
    `| ${head.join(' | ')} |`,
    `|${head.map(() => '---').join('|')}|`,
    ...rows.map((row) => `| ${row.join(' | ')} |`),
  ].join('\n');

/** The reference's introduction: what holds for every route, before the routes themselves. */
export function overviewMarkdown(examples: ApiExamples): string {
  const refusal = examples.operations.SendMessage?.errors.validation_error ?? {};
  const codes = (Object.keys(WHEN) as ErrorCode[]).map((code) => [
    String(HTTP_STATUS_BY_CODE[code]),
    `\`${code}\``,
    WHEN[code],
  ]);
  const issues = (Object.keys(ISSUES) as Issue[]).map((issue) => [`\`${issue}\``, ISSUES[issue]]);
  return `The /v1 REST API of Tern, an SMS gateway. Every route runs one operation of Tern's GraphQL API (\`/graphql\`), so both answer alike. JSON in, JSON out; field names are snake_case. The examples on this page are answers of a real Tern, recorded by its test suite.

## Authentication

Every route but \`POST /v1/auth/login\` needs \`Authorization: Bearer <token>\`, where the token is a login token (a JWT from \`POST /v1/auth/login\`, valid 24 hours) or an API key (\`tern_live_…\`, from \`POST /v1/api-keys\`). An API key cannot manage API keys or two-factor login (403 \`forbidden\`).

## Errors

Every failure has the same body, with the request id; this one refused a send:

\`\`\`json
${JSON.stringify(refusal, null, 2)}
\`\`\`

\`details\` comes with \`validation_error\` only: each bad field once, with /v1 names, at most ${MAX_ISSUE_DETAILS}. A field or query parameter the route does not take is refused by name, never ignored.

${table(['Status', 'code', 'When'], codes)}

${table(['issue', 'Meaning'], issues)}

## Paging

Lists take \`page\` (from 1) and \`per_page\` (1 to ${MAX_PER_PAGE}, default 20) and answer \`{ data, page, per_page, total, request }\`, newest first unless the route says otherwise.

## Idempotency

A send (\`POST /v1/messages/send\`, \`POST /v1/messages\`) may carry \`Idempotency-Key\` (${idempotencyKey.minLength} to ${idempotencyKey.maxLength} characters). The same key with the same request within ${IDEMPOTENCY_WINDOW_MS / 3_600_000} hours answers the first message again, 202 with the header \`Idempotent-Replayed: true\`, and sends nothing new; with a different request it is a 422 with the issue \`reused\`.

## Rate limits

Each account (or, without a valid token, each client address) has a budget of requests per window, shared by every Tern process. Every answer carries \`X-RateLimit-Limit\`, \`X-RateLimit-Remaining\` and \`X-RateLimit-Reset\` (Unix time, in seconds, when the window starts again). Over it, and over the narrower limits of sends and logins, the answer is 429 \`rate_limited\` with \`Retry-After\` in seconds.

## Request ids

Every answer carries \`request\` in its body and the same value in \`X-Request-Id\`; quote it when asking about a request. A client may send its own \`X-Request-Id\` (1 to 64 letters, digits, \`-\`, \`_\`, \`.\`, \`:\`).
`;
}
