import { z } from 'zod';
import { AppError } from '../../errors.js';

// The generic HTTP carrier's template (carriers add --template FILE), after Kannel's generic HTTP
// SMSC: how a message becomes a request, how the answer gives the provider's id or a refusal,
// and how a report called back is read. Checked strictly when the carrier is added.

export const MAX_TEMPLATE_BYTES = 16 * 1024;
export const PLACEHOLDERS = [
  'to',
  'to_plus',
  'from',
  'text',
  'reference',
  'callback_url',
  'username',
  'password',
];

const field = z.string().regex(/^[A-Za-z0-9_.-]{1,64}$/, 'a field name: letters, digits, _ . -');
const pattern = z
  .string()
  .min(1)
  .max(200)
  .refine((text) => {
    try {
      new RegExp(text);
      return true;
    } catch {
      return false;
    }
  }, 'not a regular expression');
const pointer = z.string().regex(/^(\/[^/]{1,64}){1,8}$/, 'a JSON pointer such as /messages/0/id');
const values = z.array(z.string().min(1).max(64)).min(1).max(32);

const templateSchema = z.strictObject({
  request: z.strictObject({
    method: z.enum(['GET', 'POST', 'PUT']),
    /** Path and query after the carrier URL's origin, with placeholders (URL-encoded). */
    url: z.string().startsWith('/').max(2000),
    headers: z.record(z.string().regex(/^[A-Za-z0-9-]{1,64}$/), z.string().max(1000)).optional(),
    /** With placeholders: JSON-escaped in a JSON body, URL-encoded in a form, as they are otherwise. */
    body: z.string().max(8000).optional(),
  }),
  answer: z.strictObject({
    /**
     * Where the provider's id is: a JSON pointer into the answer, a regex whose first group is it,
     * or, for a provider that gives none but echoes ours in its reports (Kannel), our reference.
     */
    id: z.union([
      z.strictObject({ json_pointer: pointer }),
      z.strictObject({ regex: pattern }),
      z.strictObject({ use_reference: z.literal(true) }),
    ]),
    /** A 2xx answer whose body matches this is a refusal for good too (providers that answer 200 to errors). */
    rejected_body: pattern.optional(),
    /** A 2xx answer whose body matches this is a refusal for now: the next carrier may take the message. */
    temporary_body: pattern.optional(),
    /** Where the provider's error code is in a refusal: a JSON pointer, or a regex's first group. */
    error_code: z
      .union([z.strictObject({ json_pointer: pointer }), z.strictObject({ regex: pattern })])
      .optional(),
  }),
  report: z
    .strictObject({
      /** The fields of a report (query, form or JSON body) that give the provider's id and status. */
      id: field,
      status: field,
      /** The field that echoes {reference}, when the provider has one. */
      reference: field.optional(),
      error_code: field.optional(),
      /** Status values meaning delivered, and failed; any other status is not final and ignored. */
      delivered: values,
      failed: values,
    })
    .optional(),
});

export type GenericTemplate = z.infer<typeof templateSchema>;

function invalid(why: string): AppError {
  return new AppError(
    'validation_error',
    `invalid --template: ${why} (docs/carriers.md, "The generic template")`,
  );
}

/** The template a carrier was given, checked: bounded, known keys only, known placeholders only. */
export function parseTemplate(text: string | null): GenericTemplate {
  if (text === null) throw invalid('a template is required');
  if (Buffer.byteLength(text) > MAX_TEMPLATE_BYTES) throw invalid(`over ${MAX_TEMPLATE_BYTES} bytes`);
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw invalid('not JSON');
  }
  const parsed = templateSchema.safeParse(json);
  if (!parsed.success) {
    const first = parsed.error.issues[0]!;
    throw invalid(`${first.path.join('.') || 'the template'}: ${first.message}`);
  }
  const { request } = parsed.data;
  for (const text of [request.url, request.body ?? '', ...Object.values(request.headers ?? {})])
    for (const [, name] of text.matchAll(/\{([^{}]*)\}/g))
      if (/^[a-z_]{1,32}$/.test(name!) && !PLACEHOLDERS.includes(name!))
        throw invalid(`unknown placeholder {${name}}; known: ${PLACEHOLDERS.map((p) => `{${p}}`).join(' ')}`);
  return parsed.data;
}
