/**
 * The /v1 REST compatibility layer, as data: each route names the GraphQL operation
 * (schema/operations/*.graphql) that implements it and where its variables come from.
 * The operation's aliases give the response its /v1 field names; the success body is the
 * operation's single root field plus `request`. No rule of the service belongs here.
 */
export type HttpMethod = 'GET' | 'POST' | 'PATCH' | 'DELETE';

export interface RestRoute {
  method: HttpMethod;
  /** Path with `:name` parameters. */
  path: string;
  operation: string;
  status: number;
  summary: string;
  /** Reachable without a bearer token (documentation only: the schema enforces it). */
  public?: boolean;
  /** Path parameter → variable. */
  params?: Record<string, string>;
  /** Query parameter → variable. */
  query?: Record<string, string>;
  /** Variable that receives the JSON body, its keys turned from snake_case into camelCase. */
  body?: string;
  /** Request header → variable. */
  headers?: Record<string, string>;
  /** Response fields left out when null (the spec shows them only when they have a value). */
  omitNull?: readonly string[];
}

const sendMessage = {
  operation: 'SendMessage',
  body: 'input',
  headers: { 'Idempotency-Key': 'idempotencyKey' },
  status: 202,
  omitNull: ['campaign'],
} as const;

const page = { page: 'page', per_page: 'perPage' };

export const routes: readonly RestRoute[] = [
  {
    method: 'POST',
    path: '/v1/auth/login',
    operation: 'Login',
    body: 'input',
    status: 200,
    public: true,
    summary: 'Log in with e-mail and password and receive a bearer token valid for 24 hours',
  },
  {
    method: 'GET',
    path: '/v1/settings',
    operation: 'Settings',
    status: 200,
    summary: 'Read the account settings',
  },
  {
    method: 'PATCH',
    path: '/v1/settings',
    operation: 'UpdateSettings',
    body: 'input',
    status: 200,
    summary: 'Change the time zone or the default sender',
  },
  {
    method: 'POST',
    path: '/v1/messages/send',
    ...sendMessage,
    summary: 'Send one SMS; answers 202 once the message is stored. Idempotency-Key makes a retry safe for 24 hours',
  },
  {
    method: 'POST',
    path: '/v1/messages',
    ...sendMessage,
    summary: 'The same as POST /v1/messages/send',
  },
  {
    method: 'POST',
    path: '/v1/messages/preview',
    operation: 'PreviewMessage',
    body: 'input',
    status: 200,
    summary: 'Encoding, segments and the characters that force UCS-2, for a text; sends nothing',
  },
  {
    method: 'GET',
    path: '/v1/messages',
    operation: 'Messages',
    query: { status: 'status', campaign: 'campaign', to: 'to', ...page },
    status: 200,
    summary: 'List messages, newest first, filtered by status, campaign or destination',
  },
  {
    method: 'GET',
    path: '/v1/messages/:message',
    operation: 'Message',
    params: { message: 'id' },
    status: 200,
    summary: 'Read one message with its status history',
  },
];
