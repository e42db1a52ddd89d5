import { ConflictError, NotFoundError, ValidationError } from '../../errors.js';
import { systemClock } from '../../lib/clock.js';
import { type PageRequest, parsePage } from '../../lib/pagination.js';
import {
  apiKeyCreateInput,
  type CreatedApiKey,
  type DeletedApiKey,
} from '../../modules/api-keys/api-keys.js';
import type { Builder } from '../builder.js';
import { inputTypeFromZod } from '../zod-input.js';
import { idArg, inputArg } from './args.js';
import { addPageType, pageArgs } from './page.js';
import { cursorArgs } from './page-info.js';

interface ApiKeyPageShape {
  accountId: string;
  page: PageRequest;
}

export function addApiKeyTypes(builder: Builder) {
  const keyFields = {
    prefix: 'The first characters of the key, to tell keys apart',
    expiresAt: 'When the key stops working; null: never',
    lastUsedAt: 'When the key was last used, to the minute; null: never used',
  };

  builder.prismaObject('ApiKey', {
    description: 'A long-lived credential for server-to-server calls: `Authorization: Bearer tern_live_…`',
    fields: (t) => ({
      id: t.exposeID('id', { description: 'Its id, prefixed by its kind' }),
      name: t.exposeString('name', { description: 'Its name, as given' }),
      prefix: t.exposeString('prefix', { description: keyFields.prefix }),
      createdAt: t.expose('createdAt', { type: 'DateTime', description: 'When it was created' }),
      expiresAt: t.expose('expiresAt', {
        type: 'DateTime',
        nullable: true,
        description: keyFields.expiresAt,
      }),
      lastUsedAt: t.expose('lastUsedAt', {
        type: 'DateTime',
        nullable: true,
        description: keyFields.lastUsedAt,
      }),
    }),
  });

  const created = builder.objectRef<CreatedApiKey>('CreatedApiKey').implement({
    description: 'A new API key, with the key itself: this is the only time it is shown',
    fields: (t) => ({
      id: t.exposeID('id', { description: 'Its id, prefixed by its kind' }),
      name: t.exposeString('name', { description: 'Its name, as given' }),
      key: t.exposeString('key', {
        description: '`tern_live_` and 40 random letters and digits; only a hash of it is stored',
      }),
      prefix: t.exposeString('prefix', { description: keyFields.prefix }),
      createdAt: t.field({
        type: 'DateTime',
        description: 'When it was created',
        resolve: (key) => key.createdAt,
      }),
      expiresAt: t.field({
        type: 'DateTime',
        nullable: true,
        description: keyFields.expiresAt,
        resolve: (key) => key.expiresAt,
      }),
      lastUsedAt: t.field({
        type: 'DateTime',
        nullable: true,
        description: keyFields.lastUsedAt,
        resolve: (key) => key.lastUsedAt,
      }),
    }),
  });

  const deleted = builder.objectRef<DeletedApiKey>('DeletedApiKey').implement({
    description: 'A revoked API key',
    fields: (t) => ({
      id: t.exposeID('id', { description: 'Its id, prefixed by its kind' }),
      deleted: t.exposeBoolean('deleted', { description: 'Always true' }),
    }),
  });

  const apiKeyPage = addPageType(builder, 'ApiKeyPage', 'ApiKey', 'Newest first', {
    nodes: (query, shape: ApiKeyPageShape, { services }) =>
      services.apiKeys.list(shape.accountId, shape.page, query),
    total: (shape, { services }) => services.apiKeys.count(shape.accountId),
  });

  const createInput = inputTypeFromZod(builder, 'CreateApiKeyInput', apiKeyCreateInput(systemClock));

  builder.queryField('apiKeys', (t) =>
    t.withAuth({ account: true }).field({
      type: apiKeyPage,
      description: "The account's API keys (never the keys themselves)",
      errors: { types: [ValidationError] },
      args: { ...pageArgs(t.arg), ...cursorArgs(t) },
      resolve: (_root, args, { accountId }) => ({ accountId, page: parsePage(args) }),
    }),
  );

  builder.mutationField('createApiKey', (t) =>
    t.withAuth({ account: true }).field({
      type: created,
      description: 'A new API key; only with a login token (an API key gets 403 forbidden)',
      errors: { types: [ValidationError, ConflictError] },
      args: {
        input: inputArg(t.arg, createInput),
      },
      resolve: (_root, { input }, { accountId, credential, services }) =>
        services.apiKeys.create(accountId, input, credential),
    }),
  );

  builder.mutationField('revokeApiKey', (t) =>
    t.withAuth({ account: true }).field({
      type: deleted,
      description:
        'Deletes an API key: every process refuses it from the next request on. Only with a login token',
      errors: { types: [NotFoundError] },
      args: { id: idArg(t.arg) },
      resolve: (_root, { id }, { accountId, credential, services }) =>
        services.apiKeys.revoke(accountId, id, credential),
    }),
  );
}
