// The module hooks src/main/run-typescript.mjs registers after tsx's, so they run first: the project's .ts files
// (not its dependencies') transformed by esbuild as tsx does, with the project's tsconfig, without keepNames.
import { readFile } from 'node:fs/promises';
import process from 'node:process';
import { fileURLToPath, URL } from 'node:url';
import { transform } from 'esbuild';

const root = new URL('../../', import.meta.url).href;
const tsconfigRaw = await readFile(new URL('tsconfig.json', root), 'utf8');

export async function load(url, context, nextLoad) {
  if (!url.startsWith(root) || url.includes('/node_modules/') || !new URL(url).pathname.endsWith('.ts')) return nextLoad(url, context);
  const path = fileURLToPath(url);
  const { code } = await transform(await readFile(path, 'utf8'), {
    loader: 'ts',
    format: 'esm',
    target: `node${process.versions.node}`,
    sourcemap: 'inline',
    sourcefile: path,
    tsconfigRaw,
  });
  return { format: 'module', source: code, shortCircuit: true };
}
