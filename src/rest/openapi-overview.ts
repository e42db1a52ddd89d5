import {
  SIMULATED_FAILURE_ENDING,
  SIMULATED_REPLY,
  SIMULATED_REPLY_ENDING,
} from '../carriers/simulator-carrier.js';
import { ERROR_CODES, ERRORS, ISSUES, type Issue, MAX_ISSUE_DETAILS } from '../errors.js';
import { MAX_PER_PAGE } from '../lib/pagination.js';
import { IDEMPOTENCY_WINDOW_MS, idempotencyKeyInput } from '../modules/messages/send-input.js';
import type { ApiExamples } from './openapi-examples.js';

const table = (head: string[], rows: string[][]) =>
  [
    `| ${head.join(' | ')} |`,
    `|${head.map(() => '---').join('|')}|`,
    ...rows.map((row) => `| ${row.join(' | ')} |`),
  ].join('\n');

/** The reference's introduction: what holds for every route, before the routes themselves. */
export function overviewMarkdown(examples: ApiExamples): string {
  const refusal = examples.operations.SendMessage?.errors.validation_error ?? {};
  const codes = ERROR_CODES.map((code) => [
    String(ERRORS[code].status),
    `\`${code}\``,
    ERRORS[code].description,
  ]);
  const issues = (Object.keys(ISSUES) as Issue[]).map((issue) => [`\`${issue}\``, ISSUES[issue]]);
  return `The /v1 REST API of Tern, an SMS gateway. Every route runs one operation of Tern's GraphQL API (\`/graphql\`), so both answer alike. JSON in, JSON out; field names are snake_case. The examples on this page are answers of a real Tern, recorded by its test suite.

${firstRequestMarkdown(examples)}

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

A send (\`POST /v1/messages/send\`, \`POST /v1/messages\`) may carry \`Idempotency-Key\` (${idempotencyKeyInput.minLength} to ${idempotencyKeyInput.maxLength} characters). The same key with the same request within ${IDEMPOTENCY_WINDOW_MS / 3_600_000} hours answers the first message again, 202 with the header \`Idempotent-Replayed: true\`, and sends nothing new; with a different request it is a 422 with the issue \`reused\`.

## Rate limits

Each account (or, without a valid token, each client address) has a budget of requests per window, shared by every Tern process. Every answer carries \`X-RateLimit-Limit\`, \`X-RateLimit-Remaining\` and \`X-RateLimit-Reset\` (Unix time, in seconds, when the window starts again). Over it, and over the narrower limits of sends and logins, the answer is 429 \`rate_limited\` with \`Retry-After\` in seconds.

## Request ids

Every answer carries \`request\` in its body and the same value in \`X-Request-Id\`; quote it when asking about a request. A client may send its own \`X-Request-Id\` (1 to 64 letters, digits, \`-\`, \`_\`, \`.\`, \`:\`).
`;
}

/** A walk-through from nothing to a sent message, in curl, with the simulator's test numbers. */
function firstRequestMarkdown(examples: ApiExamples): string {
  const accepted = examples.operations.SendMessage?.response ?? {};
  const to = `551199999${SIMULATED_REPLY_ENDING}`;
  const outcomes = table(
    ['The number ends in', 'What happens'],
    [
      [`\`${SIMULATED_FAILURE_ENDING}\``, '`failed`, with `error.code` `unreachable`'],
      [`\`${SIMULATED_REPLY_ENDING}\``, `\`delivered\`, then a reply \`${SIMULATED_REPLY}\``],
      ['anything else', '`delivered`'],
    ],
  );
  return `## First request

With Tern running on \`localhost:3000\` and an account (the demo account Tern prints at its first start, or \`npm run cli -- accounts create --email ops@example.com\`), log in for a token, send an SMS and read it back (\`curl\` and \`jq\`):

\`\`\`sh
TOKEN=$(curl -s http://localhost:3000/v1/auth/login -H 'Content-Type: application/json' \\
  -d '{"email":"ops@example.com","password":"a long password"}' | jq -r .token)
MSG=$(curl -s http://localhost:3000/v1/messages/send -H "Authorization: Bearer $TOKEN" \\
  -H 'Content-Type: application/json' -d '{"to":"${to}","message":"Hello from curl"}' | jq -r .message)
curl -s http://localhost:3000/v1/messages/$MSG -H "Authorization: Bearer $TOKEN"
\`\`\`

The send answers 202 at once, before the carrier has it, with the message's id (this answer was recorded with another number):

\`\`\`json
${JSON.stringify(accepted, null, 2)}
\`\`\`

The message then moves from \`queued\` to \`sent\` and \`delivered\` (or \`failed\`), which \`GET /v1/messages/{id}\` shows and a webhook reports; to this number the simulator also replies (the event \`message.replied\`).

## Test numbers

Out of the box Tern sends through its simulator (the carrier \`default\`), which decides by the number's last digits:

${outcomes}`;
}
