// The server SDK's build (docs/sdk.md): the library as an ES module and as CommonJS, each with its bundled
// declarations, and the `payments` CLI as one executable ES module. client-core is bundled in; graphql-ws and
// ws, real dependencies, stay imports.
import { readFileSync } from 'node:fs';
import { defineConfig } from 'tsup';
import { bundlingClientCore } from '../tsup-shared.ts';

const CLI_ENTRY = 'src/cli/main.ts';
// The hashbang lets npm link the bin as a command (and tsup then marks the file executable). esbuild keeps
// an entry's own, so one is added only when the source has none: two would be a syntax error.
const hashbang = readFileSync(CLI_ENTRY, 'utf8').startsWith('#!') ? {} : { banner: { js: '#!/usr/bin/env node' } };

const common = { ...bundlingClientCore, platform: 'node', target: 'node20', sourcemap: true } as const;

export default defineConfig([
  // Both configs build at once: the library's clean spares the CLI's files.
  { ...common, entry: { index: 'src/index.ts' }, format: ['esm', 'cjs'], clean: ['!cli.js', '!cli.js.map'] },
  // The bin only runs: no declarations, no CommonJS twin.
  { ...common, ...hashbang, entry: { cli: CLI_ENTRY }, format: ['esm'], dts: false },
]);
