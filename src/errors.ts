/**
 * The service's error model: every expected failure is an AppError with one of these codes,
 * and this table is the only place that says what a code means. The HTTP status of /v1 and
 * GraphQL-over-HTTP, the GraphQL error types, and the OpenAPI document's responses are derived
 * from it.
 *
 * `level: 'request'`: the request as a whole is refused; GraphQL answers a top-level error with
 * the code in `extensions.code` and the HTTP status. `level: 'field'`: the field failed and
 * answers its result union's member `type`; the rest of the operation stands.
 */
export const ERRORS = {
  bad_request: {
    status: 400,
    level: 'request',
    description: 'The body is not valid JSON, not an object, or not of the content type the route takes',
  },
  invalid_credentials: {
    status: 401,
    level: 'field',
    type: 'InvalidCredentialsError',
    description: 'A login with a wrong e-mail, password or two-factor code',
  },
  unauthorized: {
    status: 401,
    level: 'request',
    description:
      'The bearer token is missing, malformed, expired, revoked or signed with another key, or its account is gone',
  },
  otp_required: {
    status: 401,
    level: 'field',
    type: 'OtpRequiredError',
    description: 'A login with the right password, for an account with two-factor login on, without `otp`',
  },
  forbidden: {
    status: 403,
    level: 'request',
    description: 'An API key used where only a login token may act (API keys, two-factor login)',
  },
  not_found: {
    status: 404,
    level: 'field',
    type: 'NotFoundError',
    description: 'The item does not exist or belongs to another account (never 403: nothing says it exists)',
  },
  method_not_allowed: {
    status: 405,
    level: 'request',
    description: 'The path exists but not with this method (`Allow` lists those it takes)',
  },
  invalid_state: {
    status: 409,
    level: 'field',
    type: 'InvalidStateError',
    description: 'An action its current state does not allow (a campaign transition, two-factor login)',
  },
  conflict: {
    status: 409,
    level: 'field',
    type: 'ConflictError',
    description:
      'A phone already in the campaign, a name in use, a template a campaign still uses, or an account at its number of API keys',
  },
  payload_too_large: {
    status: 413,
    level: 'request',
    description: 'A JSON body over 1 MB, an import file over 10 MB',
  },
  validation_error: {
    status: 422,
    level: 'field',
    type: 'ValidationError',
    description: '`details` names every bad field or parameter, each with its `issue`',
  },
  fraud_blocked: {
    status: 422,
    level: 'field',
    type: 'FraudBlockedError',
    description:
      'The fraud guard refused the send (`details` names the rule on `to`); nothing was stored and no segment counted against a quota',
  },
  rate_limited: {
    status: 429,
    level: 'request',
    description: 'Over a rate limit; `Retry-After` says in how many seconds to try again',
  },
  quota_exceeded: {
    status: 429,
    level: 'field',
    type: 'QuotaExceededError',
    description:
      'The send would take the account past its daily or monthly segments; `Retry-After` says how many seconds remain until that day or month ends in the time zone of the account’s quotas',
  },
  internal_error: {
    status: 500,
    level: 'request',
    description: 'A failure of the service; the message has nothing of the server, quote the request id',
  },
  service_unavailable: {
    status: 503,
    level: 'request',
    description:
      'PostgreSQL or Redis cannot be reached, or the instance is shutting down; nothing was stored, send again after `Retry-After`',
  },
} as const satisfies Record<
  string,
  { status: number; level: 'request' | 'field'; type?: string; description: string }
>;

export type ErrorCode = keyof typeof ERRORS;

/** The codes answered as a typed member of a field's result union. */
export type FieldErrorCode = {
  [Code in ErrorCode]: (typeof ERRORS)[Code]['level'] extends 'field' ? Code : never;
}[ErrorCode];

export const ERROR_CODES = Object.keys(ERRORS) as ErrorCode[];

export const FIELD_ERROR_CODES = ERROR_CODES.filter(
  (code): code is FieldErrorCode => ERRORS[code].level === 'field',
);

/** What a `details` entry says is wrong with its field. */
export const ISSUES = {
  required: 'The field is missing (or null where a value is needed)',
  invalid_e164: 'Not a phone number: 7 to 15 digits, the first not 0, an optional leading `+`',
  too_short: 'Shorter than the least the field takes',
  too_long: 'Longer than the most the field takes',
  invalid_format: 'Not of the form the field takes (an e-mail, a URL, a time zone, a date-time, …)',
  not_found: 'Names a record that does not exist in the account (a template, a campaign, an event)',
  invalid_value: 'Of the wrong type, out of range or not one of the allowed values (the message says which)',
  unknown_field:
    'A body field or query parameter the operation does not take (the message names a close one)',
  reused: 'An `Idempotency-Key` already used within 24 hours for a different request',
  unreachable: 'A webhook URL that did not answer the signed ping with a 2xx',
  opted_out: 'The number replied STOP to this account and receives nothing more from it',
  impossible_number:
    'A number its country cannot have: too short or too long for the numbering plan of its calling code',
  destination_not_allowed: 'A number in a country the account may not send to (its allowed_countries)',
  sender_not_allowed:
    'A `from` the operator did not approve for the account, or approved for other countries than the number’s',
  no_route: 'No route of the operator covers the number: no carrier would take it',
  no_compliant_sender:
    'No sender the message could go from may reach the number’s country: its `from`, or else the account’s default sender and pool, are of a kind the country refuses (alphanumeric to the US, say)',
  flood_identical: 'The fraud guard: too many identical texts to this number in the last hour',
  flood_number: 'The fraud guard: too many texts to this number in the last hour',
  velocity_range:
    'The fraud guard: too many texts to this number range (the number less its last 4 digits) in the last hour',
  country_hourly:
    'The fraud guard: the account’s hourly cap of the number’s country is reached; the country is blocked',
  country_daily:
    'The fraud guard: the account’s daily cap of the number’s country is reached; the country is blocked',
  country_blocked: 'The fraud guard: the number’s country is blocked for the account until its cool-off ends',
  range_too_long: 'A statistics range longer than 400 days, or one whose `to` is not after its `from`',
  too_many_buckets:
    'A statistics range that would answer more than 1,000 buckets: ask for a shorter range or a longer interval',
} as const;

export type Issue = keyof typeof ISSUES;

export interface FieldIssue {
  field: string;
  issue: Issue;
}

export function httpStatusFor(code: string): number {
  return Object.hasOwn(ERRORS, code) ? ERRORS[code as ErrorCode].status : 500;
}

export function isRequestLevel(code: ErrorCode): boolean {
  return ERRORS[code].level === 'request';
}

export class AppError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
  ) {
    super(message);
    this.name = new.target.name;
  }
}

/**
 * The most fields one error names: more than any request made by hand gets wrong, and a bound on
 * the work and the answer for a body of thousands of bad fields. Collectors stop looking once
 * they have one more than this, so that "and more" can be said without counting them all.
 */
export const MAX_ISSUE_DETAILS = 100;

export class ValidationError extends AppError {
  readonly details: FieldIssue[];
  constructor(
    details: FieldIssue[],
    message = describeIssues(details),
    /** What each field allows, where that can be told ("at least 8 characters"), by field. */
    readonly hints: ReadonlyMap<string, string> = new Map(),
  ) {
    super('validation_error', message);
    this.details = details.slice(0, MAX_ISSUE_DETAILS);
  }
}

export class NotFoundError extends AppError {
  constructor(resource: string) {
    super('not_found', `${resource} not found`);
  }
}

export class ConflictError extends AppError {
  constructor(message: string) {
    super('conflict', message);
  }
}

export class InvalidStateError extends AppError {
  constructor(message: string) {
    super('invalid_state', message);
  }
}

export class InvalidCredentialsError extends AppError {
  constructor(message = 'The e-mail or password is wrong') {
    super('invalid_credentials', message);
  }
}

export class UnauthorizedError extends AppError {
  constructor(message = 'A valid bearer token is required') {
    super('unauthorized', message);
  }
}

/** The password was right, but the account has two-factor login on and no `otp` was given. */
export class OtpRequiredError extends AppError {
  constructor() {
    super(
      'otp_required',
      'Two-factor login is on for this account: send the code of the authenticator app (or a recovery code) as otp',
    );
  }
}

/** A valid credential that may not do this (an API key managing API keys). */
export class ForbiddenError extends AppError {
  constructor(message: string) {
    super('forbidden', message);
  }
}

export class RateLimitedError extends AppError {
  constructor(
    readonly retryAfterSeconds: number,
    message = 'Too many requests',
  ) {
    super('rate_limited', message);
  }
}

/** A send that would pass a segment quota of the account; it may go once its day or month is over. */
export class QuotaExceededError extends AppError {
  constructor(
    readonly retryAfterSeconds: number,
    period: 'daily' | 'monthly',
  ) {
    super('quota_exceeded', `The account has reached its ${period} segments`);
  }
}

/** The fraud guard's rules that refuse a send (src/modules/fraud-guard), each an issue on `to`. */
export const FRAUD_RULES = [
  'flood_identical',
  'flood_number',
  'velocity_range',
  'country_hourly',
  'country_daily',
  'country_blocked',
] as const;
export type FraudRule = (typeof FRAUD_RULES)[number];

/** A send the fraud guard refused: `details` names the rule, as a validation error names an issue. */
export class FraudBlockedError extends AppError {
  readonly details: FieldIssue[];
  constructor(readonly rule: FraudRule) {
    super('fraud_blocked', `Refused by the fraud guard: ${rule.replaceAll('_', ' ')}`);
    this.details = [{ field: 'to', issue: rule }];
  }
}

/** Something the request needs cannot be reached now: nothing is lost by refusing, and the client should try again soon. */
export class ServiceUnavailableError extends AppError {
  readonly retryAfterSeconds = 5;
  constructor(message: string) {
    super('service_unavailable', message);
  }
}

/** PostgreSQL cannot be reached. */
export class DatabaseUnavailableError extends ServiceUnavailableError {
  constructor() {
    super('The database is unavailable; try again in a few seconds');
  }
}

/** The seconds a client should wait before trying again, for the refusals that say (429, 503). */
export function retryAfterOf(error: AppError): number | undefined {
  return error instanceof RateLimitedError ||
    error instanceof ServiceUnavailableError ||
    error instanceof QuotaExceededError
    ? error.retryAfterSeconds
    : undefined;
}

/** "Invalid request: per_page invalid value (an integer from 1 to 100), …": each field, its issue, what is allowed. */
export function describeIssues(
  details: FieldIssue[],
  hints: ReadonlyMap<string, string> = new Map(),
): string {
  if (details.length === 0) return 'The request is invalid';
  const parts = details.slice(0, MAX_ISSUE_DETAILS).map((d) => {
    const hint = hints.get(d.field);
    return `${d.field} ${d.issue.replaceAll('_', ' ')}${hint ? ` (${hint})` : ''}`;
  });
  const more =
    details.length > MAX_ISSUE_DETAILS
      ? `; and more: only the first ${MAX_ISSUE_DETAILS} bad fields are listed`
      : '';
  return `Invalid request: ${parts.join(', ')}${more}`;
}

/** The class of each field-level code, which the GraphQL schema turns into that code's type. */
export const FIELD_ERROR_CLASSES = {
  invalid_credentials: InvalidCredentialsError,
  otp_required: OtpRequiredError,
  not_found: NotFoundError,
  invalid_state: InvalidStateError,
  conflict: ConflictError,
  validation_error: ValidationError,
  quota_exceeded: QuotaExceededError,
  fraud_blocked: FraudBlockedError,
} as const satisfies Record<FieldErrorCode, abstract new (...args: never[]) => AppError>;
