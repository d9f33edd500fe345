// How the service's processes run its TypeScript: `node --import ./src/main/run-typescript.mjs <entry>.ts`
// (package.json's start scripts; docs/operations.md, "Running"). tsx resolves and loads everything, except that
// this project's own .ts files are transformed by the hooks registered here: the same esbuild transform and
// tsconfig, without `keepNames`. tsx always sets it, which wraps every function our code creates in a
// defineProperty call, so each closure gets a property store of its own: 11 MB more per 1,000 subscriptions, and a
// call on every hot path (docs/benchmarks.md). esbuild's transform renames nothing, so the names stay as written.
import 'tsx';
import module from 'node:module';

// Where Node has in-thread hooks (22.15, 23.5 and later), tsx registers its own there, and they would transform our
// output again with keepNames: ours go there too, registered last, so they run first. Elsewhere, the loader thread.
if (typeof module.registerHooks === 'function') module.registerHooks({ load: (await import('./run-typescript-hooks.mjs')).load });
else module.register('./run-typescript-hooks.mjs', import.meta.url);
