import { z } from 'zod';
import { describeIssues, type Issue, MAX_ISSUE_DETAILS, ValidationError } from '../errors.js';

/**
 * Parses an operation's input with its zod schema and turns every problem into the
 * `{ field, issue }` details of Tern's error body, one per field, so a client sees all its
 * mistakes at once; the message says, per field, what is allowed where that can be told.
 */
export function parseInput<Schema extends z.ZodType>(schema: Schema, input: unknown): z.output<Schema> {
  // zod's fast path first: asking it to report each issue's input halves its speed on valid
  // input too (a spreadsheet import parses 100,000 rows), and only a refusal needs it.
  const valid = schema.safeParse(input);
  if (valid.success) return valid.data;
  const result = schema.safeParse(input, { reportInput: true });
  if (result.success) return result.data;
  const { details, hints } = toFieldIssues(schema, result.error.issues);
  throw new ValidationError(details, describeIssues(details, hints), hints);
}

/** A zod refinement's params: the `issue` code it stands for, and what the field allows, for the message. */
export function issue(name: Issue, hint?: string): { params: { issue: Issue; hint?: string } } {
  return { params: hint === undefined ? { issue: name } : { issue: name, hint } };
}

function toFieldIssues(schema: z.ZodType, issues: readonly z.core.$ZodIssue[]) {
  const byField = new Map<string, Issue>();
  const hints = new Map<string, string>();
  // One past the cap is enough to say there are more (describeIssues).
  const fields = issues.flatMap((problem) => fieldsOf(problem).map((field) => ({ field, problem })));
  for (const { field, problem } of fields) {
    if (byField.size > MAX_ISSUE_DETAILS) break;
    if (byField.has(field)) continue;
    byField.set(field, issueOf(problem));
    const hint = hintFor(schema, problem);
    if (hint) hints.set(field, hint);
  }
  return { details: [...byField].map(([field, name]) => ({ field, issue: name })), hints };
}

/** The dotted fields an issue is about: unrecognized keys name each key, any other its path. */
function fieldsOf(problem: z.core.$ZodIssue): string[] {
  if (problem.code !== 'unrecognized_keys') return [problem.path.join('.')];
  // A body of thousands of unknown keys is cut where the details stop anyway.
  return problem.keys.slice(0, MAX_ISSUE_DETAILS + 1).map((key) => [...problem.path, key].join('.'));
}

// A date-time written without its offset, which a time zone would have to guess.
const LOCAL_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?$/;

/** What the field allows, told from the issue (an enum's values) or from the field's own schema (its bounds). */
function hintFor(schema: z.ZodType, problem: z.core.$ZodIssue): string | undefined {
  if (problem.code === 'invalid_value' && problem.values.length > 0)
    return `one of: ${problem.values.map(String).join(', ')}`;
  if (problem.code === 'custom' && typeof problem.params?.hint === 'string') return problem.params.hint;
  if (
    problem.code === 'invalid_format' &&
    problem.format === 'datetime' &&
    LOCAL_TIME.test(String(problem.input))
  )
    return 'a time needs its offset: Z or ±hh:mm, as in 2026-12-01T09:00:00+01:00';
  if (problem.code !== 'too_small' && problem.code !== 'too_big' && problem.code !== 'invalid_type') return;
  return boundsOf(fieldSchema(schema, problem.path));
}

function boundsOf(field: z.ZodType | undefined): string | undefined {
  if (field instanceof z.ZodNumber) {
    const kind = field.format === 'safeint' ? 'an integer' : 'a number';
    return bounds(kind, field.minValue, field.maxValue);
  }
  if (field instanceof z.ZodString) {
    const length = bounds('', field.minLength, field.maxLength);
    return length ? `${length.trim()} characters` : undefined;
  }
}

function bounds(kind: string, min: number | null, max: number | null): string | undefined {
  const finite = (value: number | null) =>
    value !== null && Number.isFinite(value) && Math.abs(value) < 2 ** 53;
  if (finite(min) && finite(max)) return `${kind} from ${min} to ${max}`;
  if (finite(min)) return `${kind} of at least ${min}`;
  if (finite(max)) return `${kind} of at most ${max}`;
  return kind || undefined;
}

/** The schema of the field at `path`, through optional, nullable, default and pipe wrappers. */
function fieldSchema(schema: z.ZodType, path: readonly PropertyKey[]): z.ZodType | undefined {
  let current: z.ZodType | undefined = unwrap(schema);
  for (const key of path) {
    if (current instanceof z.ZodObject) current = unwrap(current.shape[key as string]);
    else if (current instanceof z.ZodArray) current = unwrap(current.element as z.ZodType);
    else return;
  }
  return current;
}

function unwrap(schema: z.ZodType | undefined): z.ZodType | undefined {
  let current = schema;
  for (let depth = 0; current && depth < 10; depth++) {
    const def = current._zod.def as { innerType?: z.ZodType; in?: z.ZodType };
    const inner = def.innerType ?? def.in;
    if (!inner) return current;
    current = inner;
  }
  return current;
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
    if (typeof current === 'string' && isUnstorableText(current)) found.push(pathOf(step));
    if (current === null || typeof current !== 'object') continue;
    for (const [key, inner] of Object.entries(current)) {
      const next = { key, parent: step };
      if (isUnstorableText(key)) found.push(pathOf(next));
      pending.push({ value: inner, step: next });
    }
  }
  return found;
}
