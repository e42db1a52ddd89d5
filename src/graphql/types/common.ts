import { GraphQLUpload } from 'graphql-upload-minimal';
import { z } from 'zod';
import {
  type AppError,
  ERRORS,
  FIELD_ERROR_CLASSES,
  FIELD_ERROR_CODES,
  type FieldIssue,
  FraudBlockedError,
  ISSUES,
  type Issue,
  QuotaExceededError,
  ValidationError,
} from '../../errors.js';
import type { Builder } from '../builder.js';

const isoInstant = z.iso.datetime({ offset: true });

export type CommonTypeRefs = ReturnType<typeof addCommonTypes>;

export function addCommonTypes(builder: Builder) {
  builder.scalarType('DateTime', {
    description:
      'An ISO 8601 timestamp: answered in UTC with milliseconds (2026-11-21T10:00:00.000Z), taken with any offset (2026-11-21T11:00:00+01:00)',
    serialize: (value) => value.toISOString(),
    parseValue: (value) => {
      // Only with an offset: a time without one would be read in the server's zone.
      const date = isoInstant.safeParse(value).success ? new Date(value as string) : null;
      if (!date || Number.isNaN(date.getTime()))
        throw new ValidationError(
          [{ field: 'DateTime', issue: 'invalid_format' }],
          'Not an ISO 8601 date-time with an offset (2026-11-21T10:00:00Z)',
        );
      return date;
    },
  });

  builder.addScalarType('Upload', GraphQLUpload, {});

  const errorInterface = builder.interfaceRef<AppError>('Error').implement({
    description: 'An expected failure: `code` is the machine-readable code of the REST error body.',
    fields: (t) => ({
      code: t.exposeString('code', {
        description: `Machine-readable: ${FIELD_ERROR_CODES.join(', ')}`,
      }),
      message: t.exposeString('message', { description: 'For people; may change between versions' }),
    }),
  });

  const issueCode = builder.enumType('IssueCode', {
    description: 'What is wrong with one input field',
    values: Object.fromEntries(
      Object.entries(ISSUES).map(([issue, description]) => [issue, { description }]),
    ) as Record<Issue, { description: string }>,
  });

  const fieldIssue = builder.objectRef<FieldIssue>('FieldIssue').implement({
    description: 'One bad input field and what is wrong with it',
    fields: (t) => ({
      field: t.exposeString('field', { description: 'Dotted path of the field, e.g. `to` or `events.0`' }),
      issue: t.expose('issue', { type: issueCode, description: 'What is wrong with it' }),
    }),
  });

  for (const code of FIELD_ERROR_CODES) {
    const { type, status, description } = ERRORS[code];
    builder.objectType(FIELD_ERROR_CLASSES[code], {
      name: type,
      description: `${description} (HTTP ${status} in /v1)`,
      interfaces: [errorInterface],
    });
  }
  // One entry per bad input field: bounded by the request's own input, not by stored rows.
  builder.objectFields(ValidationError, (t) => ({
    details: t.field({
      type: [fieldIssue],
      description: 'One entry per bad field',
      complexity: { field: 20, multiplier: 20 },
      resolve: (error) => error.details,
    }),
  }));

  builder.objectFields(FraudBlockedError, (t) => ({
    details: t.field({
      type: [fieldIssue],
      description: 'The rule that refused the send, as an issue on `to`: one entry',
      complexity: { field: 1, multiplier: 1 },
      resolve: (error) => error.details,
    }),
  }));

  builder.objectFields(QuotaExceededError, (t) => ({
    retryAfter: t.exposeInt('retryAfterSeconds', {
      description:
        'Seconds until the day or month of the quota ends, when a send may fit again (`Retry-After` in /v1)',
    }),
  }));

  return { issueCode };
}

export function addRootTypes(builder: Builder) {
  builder.queryType({
    description: 'Reads; each needs a token (a login token or an API key)',
    authScopes: { account: true },
  });
  builder.mutationType({
    description: 'Changes; every one but `login` needs a token (a login token or an API key)',
    authScopes: { account: true },
  });
}
