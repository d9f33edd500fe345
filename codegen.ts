// Typed documents from the checked-in schema.graphql: for the tests (test/ops), the browser SDK (src/sdk), the
// dashboard (src/web) and the server SDK's CLI (packages/node/src/cli). Each gets its own output with only its own operations.
import type { CodegenConfig } from '@graphql-codegen/cli';

const clientPreset = {
  preset: 'client',
  presetConfig: { fragmentMasking: false },
  config: {
    documentMode: 'string',
    useTypeImports: true,
    enumsAsTypes: true,
    strictScalars: true,
    scalars: { DateTime: 'string', JSON: 'unknown', SafeInt: 'number' },
    importExtension: '.ts',
  },
} as const;

const config: CodegenConfig = {
  schema: 'schema.graphql',
  ignoreNoDocuments: false,
  generates: {
    './test/gql/': { ...clientPreset, documents: ['test/ops/**/*.graphql'] },
    './src/sdk/gql/': { ...clientPreset, documents: ['src/sdk/**/*.graphql'] },
    './src/web/gql/': { ...clientPreset, documents: ['src/web/**/*.graphql'] },
    './packages/node/src/cli/gql/': { ...clientPreset, documents: ['packages/node/src/cli/**/*.graphql'] },
  },
};

export default config;
