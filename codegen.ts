import type { CodegenConfig } from '@graphql-codegen/cli';
import { addTypenameSelectionDocumentTransform } from '@graphql-codegen/client-preset';

const typedResults = {
  nonOptionalTypename: true,
  skipTypename: false,
  useTypeImports: true,
  enumsAsTypes: true,
  // An Upload is sent as a multipart part (the graphql-multipart-request-spec), not as JSON.
  scalars: { DateTime: 'string', ID: 'string', Upload: 'Blob' },
  strictScalars: true,
};

/**
 * The typed client: TypedDocumentNodes for the operations the /v1 layer runs, generated from
 * the committed schema, so it works offline and any TypeScript client can reuse them.
 * TERN_CLIENT_OPERATIONS adds a client's own operations: one or more globs of .graphql files,
 * separated by commas, e.g. `TERN_CLIENT_OPERATIONS='../my-app/graphql/*.graphql' npm run codegen`.
 */
const ownOperations = (process.env.TERN_CLIENT_OPERATIONS ?? '')
  .split(',')
  .map((glob) => glob.trim())
  .filter((glob) => glob !== '');

const config: CodegenConfig = {
  schema: 'schema/schema.graphql',
  ignoreNoDocuments: false,
  importExtension: '.js',
  generates: {
    'src/client/generated/': {
      documents: ['schema/operations/*.graphql', ...ownOperations],
      preset: 'client',
      presetConfig: { fragmentMasking: false },
      // Every selection gets `__typename`, always in the result types, so that
      // `if (result.__typename === 'Token')` narrows a result union to its success member.
      documentTransforms: [addTypenameSelectionDocumentTransform],
      config: typedResults,
    },
    // The dashboard page's operations, as documents that are their query text (nothing of
    // graphql-js in the browser bundle) typed by the schema.
    'src/dashboard/generated/': {
      documents: ['src/dashboard/operations.graphql'],
      preset: 'client',
      presetConfig: { fragmentMasking: false },
      documentTransforms: [addTypenameSelectionDocumentTransform],
      config: { ...typedResults, documentMode: 'string' },
    },
  },
};

export default config;
