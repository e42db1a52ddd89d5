import SchemaBuilder from '@pothos/core';
import ComplexityPlugin from '@pothos/plugin-complexity';
import DataloaderPlugin from '@pothos/plugin-dataloader';
import ErrorsPlugin from '@pothos/plugin-errors';
import PrismaPlugin from '@pothos/plugin-prisma';
import ScopeAuthPlugin from '@pothos/plugin-scope-auth';
import { UnauthorizedError } from '../errors.js';
import type PrismaTypes from '../generated/pothos-prisma-types.js';
import { getDatamodel } from '../generated/pothos-prisma-types.js';
import type { IncomingFile } from '../uploads.js';
import type { AccountContext, Context } from './context.js';
import { countObjects } from './query-cost.js';

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
    plugins: [ScopeAuthPlugin, ErrorsPlugin, DataloaderPlugin, PrismaPlugin, ComplexityPlugin],
    defaultFieldNullability: false,
    scopeAuth: {
      authScopes: (context) => ({ account: context.accountId !== null }),
      unauthorizedError: (_parent, context) => new UnauthorizedError(context.authFailure ?? undefined),
      // A subscription is checked when it opens, not only at each update: a refused one never streams.
      authorizeOnSubscribe: true,
    },
    errors: {
      directResult: true,
      defaultUnionOptions: {
        description:
          'What the field answers: its result, or one of the failures a client is expected to handle (each implements Error); `__typename` tells which',
      },
    },
    // Each field's worst-case object count, read by the request-wide limit in query-cost.ts. The
    // plugin's own check is off: it runs per operation, as each starts, while the limit must sum
    // a whole batch before any of it runs.
    complexity: { fieldComplexity: countObjects, disabled: true },
    prisma: {
      client: (context) => context.prisma,
      dmmf: getDatamodel(),
      exposeDescriptions: false,
      onUnusedQuery: strictQueries ? 'error' : null,
    },
  });
}

export type Builder = ReturnType<typeof createBuilder>;

export type BuilderTypes = Builder extends PothosSchemaTypes.SchemaBuilder<infer Types> ? Types : never;
