import type { FieldIssue } from '../errors.js';
import type { VariableProblem } from './operations.js';

/** Names people reach for that are not Tern's, and the /v1 field they mean. */
const ALIASES: Record<string, string> = {
  phone: 'to',
  number: 'to',
  recipient: 'to',
  text: 'message',
  body: 'message',
  content: 'message',
};

/** What the message says after a field's issue: the allowed values, or the known field it is close to. */
export function hintOf(problem: VariableProblem, field: string, toName: (name: string) => string) {
  if (problem.allowed) return `one of: ${problem.allowed.join(', ')}`;
  if (problem.known) {
    const name = field.split('.').at(-1) ?? field;
    const match = closestField(name, problem.known.map(toName));
    return match ? `did you mean \`${match}\`?` : undefined;
  }
}

export function closestField(name: string, known: readonly string[]): string | undefined {
  const lower = name.toLowerCase();
  const alias = ALIASES[lower];
  if (alias && known.includes(alias)) return alias;
  let best: { field: string; distance: number } | undefined;
  for (const field of known) {
    const distance = editDistance(lower, field.toLowerCase());
    if (distance <= Math.min(2, Math.floor(field.length / 3)) && (!best || distance < best.distance))
      best = { field, distance };
  }
  return best?.field;
}

function editDistance(a: string, b: string): number {
  if (Math.abs(a.length - b.length) > 2 || a.length > 64 || b.length > 64) return Number.POSITIVE_INFINITY;
  let previous = Array.from({ length: b.length + 1 }, (_, index) => index);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(
        previous[j]! + 1,
        current[j - 1]! + 1,
        previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1),
      );
    }
    previous = current;
  }
  return previous[b.length]!;
}

/**
 * An error raised below the /v1 layer names fields the GraphQL way (`perPage`); the /v1 client
 * sent `per_page`, so both the details and the message say that.
 */
export function withRestNames(
  message: string,
  details: FieldIssue[] | undefined,
  toName: (field: string) => string,
): { message: string; details: FieldIssue[] | undefined } {
  if (!details) return { message, details };
  let renamed = message;
  for (const { field } of details) {
    const escaped = field.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    renamed = renamed.replace(new RegExp(`(?<![\\w.])${escaped}(?![\\w])`, 'g'), toName(field));
  }
  return { message: renamed, details: details.map((d) => ({ ...d, field: toName(d.field) })) };
}
