/** A dependency that does not answer at start-up: reported in one line, naming its URL. */
export class UnreachableError extends Error {
  constructor(service: 'PostgreSQL' | 'Redis', where: string, cause: unknown) {
    super(`cannot reach ${service} at ${redactUrl(where)}: ${describeError(cause)}`, { cause });
    this.name = 'UnreachableError';
  }
}

// Node reports a refused connection to a name with several addresses (localhost: ::1 and
// 127.0.0.1) as an AggregateError whose own message is empty.
export function describeError(error: unknown): string {
  if (error instanceof AggregateError && !error.message) {
    return error.errors.map((inner: unknown) => describeError(inner)).join('; ');
  }
  return error instanceof Error ? error.message || error.name : String(error);
}

/** A URL as it may be printed: without its password. */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    parsed.password = '';
    parsed.searchParams.delete('password');
    return parsed.toString();
  } catch {
    return url;
  }
}
