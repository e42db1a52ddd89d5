import SchemaBuilder from '@pothos/core';
import DataloaderPlugin from '@pothos/plugin-dataloader';
import ErrorsPlugin from '@pothos/plugin-errors';
import PrismaPlugin from '@pothos/plugin-prisma';
import ScopeAuthPlugin from '@pothos/plugin-scope-auth';
import { UnauthorizedError } from '../errors.js';
import type { PrismaClient } from '../generated/prisma/client.js';
import type { IncomingFile } from '../uploads.js';
import type PrismaTypes from '../generated/pothos-prisma-types.js';
import { getDatamodel } from '../generated/pothos-prisma-types.js';
import type { Context } from './context.js';

export interface BuilderOptions {
  prisma: PrismaClient;
  /** Fail loudly when a resolver forgets to spread the plugin's `query` (used in tests). */
  strictQueries: boolean;
}

export function createBuilder({ prisma, strictQueries }: BuilderOptions) {
  return new SchemaBuilder<{
    Context: Context;
    PrismaTypes: PrismaTypes;
    AuthScopes: { account: boolean };
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
      client: prisma,
      dmmf: getDatamodel(),
      exposeDescriptions: false,
      onUnusedQuery: strictQueries ? 'error' : null,
    },
  });
}

export type Builder = ReturnType<typeof createBuilder>;
