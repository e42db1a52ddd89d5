import SchemaBuilder from '@pothos/core';
import DataloaderPlugin from '@pothos/plugin-dataloader';
import ErrorsPlugin from '@pothos/plugin-errors';
import PrismaPlugin from '@pothos/plugin-prisma';
import ScopeAuthPlugin from '@pothos/plugin-scope-auth';
import { UnauthorizedError } from '../errors.js';
import type { IncomingFile } from '../uploads.js';
import type PrismaTypes from '../generated/pothos-prisma-types.js';
import { getDatamodel } from '../generated/pothos-prisma-types.js';
import type { AccountContext, Context } from './context.js';

export interface BuilderOptions {
  /** Fail loudly when a resolver forgets to spread the plugin's `query` (used in tests). */
  strictQueries: boolean;
}

export function createBuilder({ strictQueries }: BuilderOptions) {
  return new SchemaBuilder<{
    Context: Context;
    PrismaTypes: PrismaTypes;
    AuthScopes: { account: boolean };
    // Fields behind t.withAuth({ account: true }) see a context whose accountId is a string.
    AuthContexts: { account: AccountContext };
    DefaultFieldNullability: false;
    Scalars: {
      DateTime: { Input: Date; Output: Date };
      ID: { Input: string; Output: string };
      // graphql-upload-minimal's scalar: a promise of the file, resolved when its part of the request arrives.
      Upload: { Input: Promise<IncomingFile>; Output: never };
    };
  }>({
    plugins: [ScopeAuthPlugin, ErrorsPlugin, DataloaderPlugin, PrismaPlugin],
    defaultFieldNullability: false,
    scopeAuth: {
      authScopes: (context) => ({ account: context.accountId !== null }),
      unauthorizedError: (_parent, context) => new UnauthorizedError(context.authFailure ?? undefined),
    },
    errors: { directResult: true },
    prisma: {
      client: (context) => context.prisma,
      dmmf: getDatamodel(),
      exposeDescriptions: false,
      onUnusedQuery: strictQueries ? 'error' : null,
    },
  });
}

export type Builder = ReturnType<typeof createBuilder>;
