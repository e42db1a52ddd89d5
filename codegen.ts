import type { CodegenConfig } from '@graphql-codegen/cli';

/**
 * The typed client: TypedDocumentNodes for the operations the /v1 layer runs, generated from
 * the committed schema, so it works offline and any TypeScript client can reuse them.
 */
const config: CodegenConfig = {
  schema: 'schema/schema.graphql',
  documents: ['schema/operations/*.graphql'],
  ignoreNoDocuments: false,
  importExtension: '.js',
  generates: {
    'src/generated/client/': {
      preset: 'client',
      presetConfig: { fragmentMasking: false },
      config: {
        useTypeImports: true,
        enumsAsTypes: true,
        // An Upload is sent as a multipart part (the graphql-multipart-request-spec), not as JSON.
        scalars: { DateTime: 'string', ID: 'string', Upload: 'Blob' },
        strictScalars: true,
      },
    },
  },
};

export default config;
