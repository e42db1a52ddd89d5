import { GraphQLUpload } from 'graphql-upload-minimal';
import {
  type AppError,
  ConflictError,
  type FieldIssue,
  InvalidCredentialsError,
  InvalidStateError,
  NotFoundError,
  OtpRequiredError,
  ValidationError,
} from '../../errors.js';
import type { Builder } from '../builder.js';

export function addCommonTypes(builder: Builder) {
  builder.scalarType('DateTime', {
    description: 'An ISO 8601 UTC timestamp with milliseconds, e.g. 2026-11-21T10:00:00.000Z',
    serialize: (value) => value.toISOString(),
    parseValue: (value) => {
      const date = typeof value === 'string' ? new Date(value) : null;
      if (!date || Number.isNaN(date.getTime()))
        throw new ValidationError([{ field: 'DateTime', issue: 'invalid_format' }]);
      return date;
    },
  });

  builder.addScalarType('Upload', GraphQLUpload, {});

  const errorInterface = builder.interfaceRef<AppError>('Error').implement({
    description: 'An expected failure: `code` is the machine-readable code of the REST error body.',
    fields: (t) => ({
      code: t.exposeString('code', {
        description:
          'Machine-readable: validation_error, not_found, conflict, invalid_state, invalid_credentials, otp_required',
      }),
      message: t.exposeString('message', { description: 'For people; may change between versions' }),
    }),
  });

  const fieldIssue = builder.objectRef<FieldIssue>('FieldIssue').implement({
    description: 'One bad input field and what is wrong with it',
    fields: (t) => ({
      field: t.exposeString('field', { description: 'Dotted path of the field, e.g. `to` or `events.0`' }),
      issue: t.exposeString('issue', {
        description:
          'required, invalid_value, invalid_format, invalid_e164, too_short, too_long, unknown_field, not_found, reused, unreachable or opted_out',
      }),
    }),
  });

  builder.objectType(ValidationError, {
    name: 'ValidationError',
    description: 'The input was refused: `details` names each bad field (HTTP 422 in /v1)',
    interfaces: [errorInterface],
    // One entry per bad input field: bounded by the request's own input, not by stored rows.
    fields: (t) => ({
      details: t.field({
        type: [fieldIssue],
        description: 'One entry per bad field',
        complexity: { field: 20, multiplier: 20 },
        resolve: (error) => error.details,
      }),
    }),
  });
  for (const [errorClass, name, description] of [
    [NotFoundError, 'NotFoundError', 'No such item in the account (HTTP 404 in /v1)'],
    [
      ConflictError,
      'ConflictError',
      'The change clashes with the current state, e.g. a name in use (HTTP 409)',
    ],
    [InvalidStateError, 'InvalidStateError', 'Not allowed in the item’s current status (HTTP 409)'],
    [InvalidCredentialsError, 'InvalidCredentialsError', 'Wrong email or password (HTTP 401)'],
    [OtpRequiredError, 'OtpRequiredError', 'Two-factor login is on: send `otp` too (HTTP 401)'],
  ] as const) {
    builder.objectType(errorClass, { name, description, interfaces: [errorInterface] });
  }

  builder.queryType({
    description: 'Reads; each needs a token (a login token or an API key)',
    authScopes: { account: true },
  });
  builder.mutationType({
    description: 'Changes; every one but `login` needs a token (a login token or an API key)',
    authScopes: { account: true },
  });
}
