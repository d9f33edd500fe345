// The module hooks src/main/run-typescript.mjs registers after tsx's, so they run first: the project's .ts files
// (not its dependencies') transformed by esbuild as tsx does, with the project's tsconfig, without keepNames.
// Synchronous, so that one `load` serves both kinds of hooks: Node's in-thread ones (module.registerHooks) and the
// loader thread's (module.register).
//
// Each transform is kept on disk under node_modules/.cache/run-typescript, named by a hash of everything it depends
// on (the file's path and text, esbuild's and Node's versions, the tsconfig): a process starts without transforming
// the ~4 MB of TypeScript again (about a second of CPU each time on a 2-CPU machine; the test suite starts dozens). An
// edited file hashes to a new name, so nothing is ever served stale; where the folder cannot be written (a read-only
// install), every start transforms, as before.
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import process from 'node:process';
import { fileURLToPath, URL } from 'node:url';
import { transformSync, version as esbuildVersion } from 'esbuild';

const root = new URL('../../', import.meta.url).href;
const tsconfigRaw = readFileSync(new URL('tsconfig.json', root), 'utf8');
const cacheDir = fileURLToPath(new URL('node_modules/.cache/run-typescript/', root));
/** What every transform depends on besides its file: a change of any of these names every cached transform anew. */
const transformSalt = JSON.stringify([esbuildVersion, process.versions.node, tsconfigRaw]);
let cacheWritable = true;

export function load(url, context, nextLoad) {
  if (!url.startsWith(root) || url.includes('/node_modules/') || !new URL(url).pathname.endsWith('.ts')) return nextLoad(url, context);
  const path = fileURLToPath(url);
  const source = readFileSync(path, 'utf8');
  const cached = `${cacheDir}${createHash('sha256').update(transformSalt).update('\0').update(path).update('\0').update(source).digest('hex')}.js`;
  let code;
  try {
    code = readFileSync(cached, 'utf8');
  } catch {
    code = transformSync(source, {
      loader: 'ts',
      format: 'esm',
      target: `node${process.versions.node}`,
      sourcemap: 'inline',
      sourcefile: path,
      tsconfigRaw,
    }).code;
    keep(cached, code);
  }
  return { format: 'module', source: code, shortCircuit: true };
}

/** Writes a transform whole or not at all (a temporary file renamed), so a process starting meanwhile never reads half of one. */
function keep(file, code) {
  if (!cacheWritable) return;
  try {
    mkdirSync(cacheDir, { recursive: true });
    const temporary = `${file}.${process.pid}.tmp`;
    writeFileSync(temporary, code);
    renameSync(temporary, file);
  } catch {
    cacheWritable = false;
  }
}
