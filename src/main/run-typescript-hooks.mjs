// The module hooks src/main/run-typescript.mjs registers after tsx's, so they run first: the project's .ts files
// (not its dependencies') transformed by esbuild as tsx does, with the project's tsconfig, without keepNames.
// Synchronous, so that one `load` serves both kinds of hooks: Node's in-thread ones (module.registerHooks) and the
// loader thread's (module.register).
import { readFileSync } from 'node:fs';
import process from 'node:process';
import { fileURLToPath, URL } from 'node:url';
import { transformSync } from 'esbuild';

const root = new URL('../../', import.meta.url).href;
const tsconfigRaw = readFileSync(new URL('tsconfig.json', root), 'utf8');

export function load(url, context, nextLoad) {
  if (!url.startsWith(root) || url.includes('/node_modules/') || !new URL(url).pathname.endsWith('.ts')) return nextLoad(url, context);
  const path = fileURLToPath(url);
  const { code } = transformSync(readFileSync(path, 'utf8'), {
    loader: 'ts',
    format: 'esm',
    target: `node${process.versions.node}`,
    sourcemap: 'inline',
    sourcefile: path,
    tsconfigRaw,
  });
  return { format: 'module', source: code, shortCircuit: true };
}
