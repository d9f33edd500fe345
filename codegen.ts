// Typed documents for the tests (and any TypeScript client) from the checked-in schema.graphql.
import type { CodegenConfig } from '@graphql-codegen/cli';

const config: CodegenConfig = {
  schema: 'schema.graphql',
  documents: ['test/ops/**/*.graphql'],
  ignoreNoDocuments: false,
  generates: {
    './test/gql/': {
      preset: 'client',
      presetConfig: { fragmentMasking: false },
      config: {
        documentMode: 'string',
        useTypeImports: true,
        enumsAsTypes: true,
        strictScalars: true,
        scalars: { DateTime: 'string', JSON: 'unknown' },
        importExtension: '.ts',
      },
    },
  },
};

export default config;
