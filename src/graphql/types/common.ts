import {
  AppError,
  ConflictError,
  InvalidCredentialsError,
  InvalidStateError,
  NotFoundError,
  OtpRequiredError,
  ValidationError,
  type FieldIssue,
} from '../../errors.js';
import { GraphQLUpload } from 'graphql-upload-minimal';
import type { Builder } from '../builder.js';

/** The failures a client is expected to handle, returned as typed members of a field's union. */
export const EXPECTED_ERRORS = [ValidationError, NotFoundError, ConflictError, InvalidStateError];

export function addCommonTypes(builder: Builder) {
  builder.scalarType('DateTime', {
    description: 'An ISO 8601 UTC timestamp with milliseconds, e.g. 2026-11-21T10:00:00.000Z',
    serialize: (value) => value.toISOString(),
    parseValue: (value) => {
      const date = typeof value === 'string' ? new Date(value) : null;
      if (!date || Number.isNaN(date.getTime())) throw new ValidationError([{ field: 'DateTime', issue: 'invalid_format' }]);
      return date;
    },
  });

  builder.addScalarType('Upload', GraphQLUpload, {});

  const errorInterface = builder.interfaceRef<AppError>('Error').implement({
    description: 'An expected failure: `code` is the machine-readable code of the REST error body.',
    fields: (t) => ({
      code: t.exposeString('code'),
      message: t.exposeString('message'),
    }),
  });

  const fieldIssue = builder.objectRef<FieldIssue>('FieldIssue').implement({
    fields: (t) => ({
      field: t.exposeString('field'),
      issue: t.exposeString('issue'),
    }),
  });

  builder.objectType(ValidationError, {
    name: 'ValidationError',
    interfaces: [errorInterface],
    // One entry per bad input field: bounded by the request's own input, not by stored rows.
    fields: (t) => ({ details: t.field({ type: [fieldIssue], complexity: { field: 20, multiplier: 20 }, resolve: (error) => error.details }) }),
  });
  for (const [errorClass, name] of [
    [NotFoundError, 'NotFoundError'],
    [ConflictError, 'ConflictError'],
    [InvalidStateError, 'InvalidStateError'],
    [InvalidCredentialsError, 'InvalidCredentialsError'],
    [OtpRequiredError, 'OtpRequiredError'],
  ] as const) {
    builder.objectType(errorClass, { name, interfaces: [errorInterface] });
  }

  builder.queryType({ authScopes: { account: true } });
  builder.mutationType({ authScopes: { account: true } });
}
