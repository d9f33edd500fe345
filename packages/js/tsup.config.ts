// The browser SDK's build (docs/sdk.md): an ES module for bundlers and browsers, CommonJS for older tooling,
// and one bundled declaration file per format. client-core and the card rules of src/kernel/cards.ts are
// bundled in; graphql-ws, a real dependency, stays an import.
import { defineConfig } from 'tsup';
import { bundlingClientCore } from '../tsup-shared.ts';

export default defineConfig({
  ...bundlingClientCore,
  entry: { index: 'src/index.ts' },
  format: ['esm', 'cjs'],
  platform: 'browser',
  target: 'es2022',
  clean: true,
  sourcemap: true,
});
