// Typed documents from the checked-in schema.graphql: for the tests (test/ops), the browser SDK (packages/js),
// the server SDK with its CLI (packages/node) and the dashboard (src/web). Each gets its own output with only its own operations.
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
    './packages/js/src/gql/': { ...clientPreset, documents: ['packages/js/src/**/*.graphql'] },
    './src/web/gql/': { ...clientPreset, documents: ['src/web/**/*.graphql'] },
    './packages/node/src/gql/': { ...clientPreset, documents: ['packages/node/src/**/*.graphql'] },
  },
};

export default config;
