// What every published package's build (packages/*/tsup.config.ts) shares: the private client-core is bundled
// in, code and declarations alike, since it is never published (docs/sdk.md, "Building the packages").
import type { Options } from 'tsup';

export const bundlingClientCore = {
  noExternal: ['@payments-orchestrator/client-core'],
  // Mapped to its source, client-core is no longer a library import, which the declaration bundler would leave
  // external (an import of a package the merchant cannot install).
  dts: { compilerOptions: { paths: { '@payments-orchestrator/client-core': ['../client-core/src/index.ts'] } } },
} satisfies Options;
