// The package Medusa loads with require(): CommonJS and bundled declarations (docs/medusa.md, "Build and tests").
// The server SDK and Medusa's framework stay external (a dependency and a peer); the service's currency
// table (src/kernel/money.ts) is bundled in, so the published package needs nothing from the repository.
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'tsup';

export default defineConfig({
  entry: ['src/index.ts'],
  format: ['cjs'],
  // The root tsconfig's paths (the server SDK's source, when it is not built) are relative to the root, which
  // the declaration build must be told: it sets baseUrl to the package's folder otherwise. The declarations
  // still import the SDK by name, as a dependency.
  dts: { compilerOptions: { baseUrl: fileURLToPath(new URL('../..', import.meta.url)) } },
  target: 'node20',
  platform: 'node',
  clean: true,
  tsconfig: '../../tsconfig.json',
});
