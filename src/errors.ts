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
    description: 'The request is malformed: not JSON, a wrong content type, an unreadable upload',
  },
  invalid_credentials: {
    status: 401,
    level: 'field',
    type: 'InvalidCredentialsError',
    description: 'Wrong e-mail, password or two-factor code',
  },
  unauthorized: {
    status: 401,
    level: 'request',
    description: 'No valid bearer token: missing, expired, revoked, or its account is gone',
  },
  otp_required: {
    status: 401,
    level: 'field',
    type: 'OtpRequiredError',
    description: 'Two-factor login is on for the account: send `otp` too',
  },
  forbidden: {
    status: 403,
    level: 'request',
    description: 'The credential may not do this (an API key managing API keys or two-factor login)',
  },
  not_found: {
    status: 404,
    level: 'field',
    type: 'NotFoundError',
    description: 'No such item in the account',
  },
  method_not_allowed: {
    status: 405,
    level: 'request',
    description: 'The path exists, but not with this method',
  },
  invalid_state: {
    status: 409,
    level: 'field',
    type: 'InvalidStateError',
    description: 'Not allowed in the item’s current status',
  },
  conflict: {
    status: 409,
    level: 'field',
    type: 'ConflictError',
    description: 'The change clashes with what exists, e.g. a name in use',
  },
  payload_too_large: {
    status: 413,
    level: 'request',
    description: 'The body or the upload is over its limit',
  },
  validation_error: {
    status: 422,
    level: 'field',
    type: 'ValidationError',
    description: 'The input was refused: `details` names each bad field and its issue',
  },
  rate_limited: {
    status: 429,
    level: 'request',
    description: 'Over a rate limit: try again after `Retry-After` seconds',
  },
  internal_error: {
    status: 500,
    level: 'request',
    description: 'A failure of the service itself; quote the request id when reporting it',
  },
  service_unavailable: {
    status: 503,
    level: 'request',
    description:
      'A store the service needs is unavailable, or it is shutting down: try again after `Retry-After`',
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
  required: 'The field is missing',
  invalid_e164: 'Not a phone number: 7 to 15 digits, with an optional leading +',
  too_short: 'Shorter than allowed',
  too_long: 'Longer than allowed',
  invalid_format: 'Not in the expected format (an e-mail, a URL, a date)',
  not_found: 'It names nothing of the account',
  invalid_value: 'Not one of the allowed values, or out of range',
  unknown_field: 'The operation takes no such field',
  reused: 'The Idempotency-Key was used with another request',
  unreachable: 'The URL did not answer the signed ping with a 2xx',
  opted_out: 'The number opted out of the account (STOP)',
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
  constructor(details: FieldIssue[], message = describeIssues(details)) {
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
  constructor(readonly retryAfterSeconds: number) {
    super('rate_limited', 'Too many requests');
  }
}

/** PostgreSQL cannot be reached: nothing is lost by refusing, and the client should try again soon. */
export class DatabaseUnavailableError extends AppError {
  readonly retryAfterSeconds = 5;
  constructor() {
    super('service_unavailable', 'The database is unavailable; try again in a few seconds');
  }
}

/** The seconds a client should wait before trying again, for the refusals that say (429, 503). */
export function retryAfterOf(error: AppError): number | undefined {
  return error instanceof RateLimitedError || error instanceof DatabaseUnavailableError
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
} as const satisfies Record<FieldErrorCode, abstract new (...args: never[]) => AppError>;
