import type { z } from 'zod';
import { ValidationError, type FieldIssue, type Issue } from './errors.js';

/**
 * Parses an operation's input with its zod schema and turns every problem into the
 * `{ field, issue }` details of Tern's error body, one per field, so a client sees all its
 * mistakes at once.
 */
export function parseInput<Schema extends z.ZodType>(schema: Schema, input: unknown): z.output<Schema> {
  const result = schema.safeParse(input, { reportInput: true });
  if (result.success) return result.data;
  throw new ValidationError(toFieldIssues(result.error.issues));
}

/** A zod refinement's params: the `issue` code it stands for. */
export function issue(name: Issue): { params: { issue: Issue } } {
  return { params: { issue: name } };
}

function toFieldIssues(issues: readonly z.core.$ZodIssue[]): FieldIssue[] {
  const byField = new Map<string, Issue>();
  for (const problem of issues) {
    const fields =
      problem.code === 'unrecognized_keys'
        ? problem.keys.map((key) => [...problem.path, key].join('.'))
        : [problem.path.join('.')];
    for (const field of fields) {
      if (!byField.has(field)) byField.set(field, issueOf(problem));
    }
  }
  return [...byField].map(([field, name]) => ({ field, issue: name }));
}

function issueOf(problem: z.core.$ZodIssue): Issue {
  switch (problem.code) {
    case 'invalid_type':
      return problem.input === undefined || problem.input === null ? 'required' : 'invalid_value';
    case 'too_small':
      return problem.origin === 'string' || problem.origin === 'array' ? 'too_short' : 'invalid_value';
    case 'too_big':
      return problem.origin === 'string' || problem.origin === 'array' ? 'too_long' : 'invalid_value';
    case 'invalid_format':
      return 'invalid_format';
    case 'unrecognized_keys':
      return 'unknown_field';
    case 'custom':
      return (problem.params?.issue as Issue | undefined) ?? 'invalid_value';
    default:
      return 'invalid_value';
  }
}

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/**
 * Text that cannot be stored as sent: PostgreSQL refuses NUL in text, and a lone surrogate is
 * not a character (UTF-8 cannot encode it, so it would silently become U+FFFD).
 */
export function isUnstorableText(text: string): boolean {
  return text.includes('\u0000') || LONE_SURROGATE.test(text);
}

interface PathStep {
  key: string;
  parent: PathStep | null;
}

function pathOf(step: PathStep | null): string[] {
  const path: string[] = [];
  for (let current = step; current; current = current.parent) path.unshift(current.key);
  return path;
}

/**
 * The path of every string inside a request's values that isUnstorableText. Iterative, with
 * shared path steps: a hostile body may nest deeper than the call stack reaches.
 */
export function unstorableTextPaths(value: unknown): string[][] {
  const found: string[][] = [];
  const pending: { value: unknown; step: PathStep | null }[] = [{ value, step: null }];
  while (pending.length > 0) {
    const { value: current, step } = pending.pop()!;
    if (typeof current === 'string') {
      if (isUnstorableText(current)) found.push(pathOf(step));
    } else if (current !== null && typeof current === 'object') {
      for (const [key, inner] of Object.entries(current)) {
        const next = { key, parent: step };
        if (isUnstorableText(key)) found.push(pathOf(next));
        pending.push({ value: inner, step: next });
      }
    }
  }
  return found;
}
