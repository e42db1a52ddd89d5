/**
 * The service's error model. Every expected failure is an AppError with one of the codes
 * below; this table is the only place that turns a code into an HTTP status, for /v1
 * responses and GraphQL-over-HTTP alike.
 */
export const HTTP_STATUS_BY_CODE = {
  bad_request: 400,
  invalid_credentials: 401,
  unauthorized: 401,
  otp_required: 401,
  forbidden: 403,
  not_found: 404,
  method_not_allowed: 405,
  invalid_state: 409,
  conflict: 409,
  payload_too_large: 413,
  validation_error: 422,
  rate_limited: 429,
  internal_error: 500,
  service_unavailable: 503,
} as const;

export type ErrorCode = keyof typeof HTTP_STATUS_BY_CODE;

export type Issue =
  | 'required'
  | 'invalid_e164'
  | 'too_short'
  | 'too_long'
  | 'invalid_format'
  | 'not_found'
  | 'invalid_value'
  | 'unknown_field'
  | 'reused'
  | 'unreachable'
  | 'opted_out';

export interface FieldIssue {
  field: string;
  issue: Issue;
}

export function httpStatusFor(code: string): number {
  return (HTTP_STATUS_BY_CODE as Record<string, number>)[code] ?? 500;
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
  return error instanceof RateLimitedError || error instanceof ServiceUnavailableError
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
