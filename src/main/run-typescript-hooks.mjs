// The module hooks src/main/run-typescript.mjs registers after tsx's, so they run first: the project's .ts files
// (not its dependencies') transformed by esbuild as tsx does, with the project's tsconfig, without keepNames.
// Synchronous, so that one `load` serves both kinds of hooks: Node's in-thread ones (module.registerHooks) and the
// loader thread's (module.register).
//
// Each transform is kept on disk under node_modules/.cache/run-typescript (docs/operations.md), so a process starts
// without transforming the ~4 MB of TypeScript again (about a second on a 2-CPU machine; the test suite starts
// dozens of processes). One entry per file, named by a hash of its path and of everything the transform depends on
// but the text (these hooks' own code, esbuild's and Node's versions, the tsconfig); the entry's first line holds
// the hash of the text it was made from and the hash of the code after it, so an edited file, or an entry torn by
// a crash, is transformed again. Where the folder cannot be written (a read-only install), every start transforms.
import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import process from 'node:process';
import { fileURLToPath, URL } from 'node:url';
import { threadId } from 'node:worker_threads';
import { transformSync, version as esbuildVersion } from 'esbuild';

const root = new URL('../../', import.meta.url).href;
const tsconfigRaw = readFileSync(new URL('tsconfig.json', root), 'utf8');
const cacheDir = fileURLToPath(new URL('node_modules/.cache/run-typescript/', root));
/** Everything a transform depends on but its file: these hooks' own text covers the options below. */
const transformSalt = JSON.stringify([readFileSync(new URL(import.meta.url), 'utf8'), esbuildVersion, process.versions.node, tsconfigRaw]);
let cacheWritable = true;

const sha256 = (text) => createHash('sha256').update(text).digest('hex');

export function load(url, context, nextLoad) {
  if (!url.startsWith(root) || url.includes('/node_modules/') || !new URL(url).pathname.endsWith('.ts')) return nextLoad(url, context);
  const path = fileURLToPath(url);
  const source = readFileSync(path, 'utf8');
  const entry = `${cacheDir}${sha256(`${transformSalt}\0${path}`)}.js`;
  const sourceHash = sha256(source);
  let code = kept(entry, sourceHash);
  if (code === null) {
    code = transformSync(source, {
      loader: 'ts',
      format: 'esm',
      target: `node${process.versions.node}`,
      sourcemap: 'inline',
      sourcefile: path,
      tsconfigRaw,
    }).code;
    keep(entry, `// ${sourceHash} ${sha256(code)}\n${code}`);
  }
  return { format: 'module', source: code, shortCircuit: true };
}

/** The kept transform of the text hashed `sourceHash`, or null: none kept, kept for another text, or torn. */
function kept(entry, sourceHash) {
  let text;
  try {
    text = readFileSync(entry, 'utf8');
  } catch {
    return null;
  }
  const newline = text.indexOf('\n');
  const [, keptSource, keptCode] = /^\/\/ ([0-9a-f]{64}) ([0-9a-f]{64})$/.exec(text.slice(0, newline)) ?? [];
  const code = text.slice(newline + 1);
  return keptSource === sourceHash && keptCode === sha256(code) ? code : null;
}

/** Writes an entry whole or not at all (a temporary file of this thread's own, renamed), so no reader sees half of one. */
function keep(entry, text) {
  if (!cacheWritable) return;
  const temporary = `${entry}.${process.pid}-${threadId}-${randomBytes(4).toString('hex')}.tmp`;
  try {
    mkdirSync(cacheDir, { recursive: true, mode: 0o700 });
    writeFileSync(temporary, text, { flag: 'wx', mode: 0o600 });
    renameSync(temporary, entry);
  } catch {
    cacheWritable = false;
    try {
      rmSync(temporary, { force: true });
    } catch {
      // Left behind: it is never read (only whole entries are), and the next `npm ci` empties the folder.
    }
  }
}
