// How the service's processes run TypeScript (src/main/run-typescript.mjs; docs/operations.md): our files without
// tsx's keepNames (a property store per closure, docs/benchmarks.md), with stack traces still on the lines as written,
// each transform kept on disk for the next process and never served for a file edited since.
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const REPOSITORY = fileURLToPath(new URL('../..', import.meta.url));
const TRANSFORM_CACHE = `${REPOSITORY}node_modules/.cache/run-typescript/`;

const run = (...importFlags: string[]) =>
  JSON.parse(
    execFileSync(process.execPath, [...importFlags, fileURLToPath(new URL('run-typescript-probe.ts', import.meta.url))], {
      cwd: REPOSITORY,
      encoding: 'utf8',
    }),
  ) as { keepNames: boolean; errorLine: string };

describe('run-typescript', () => {
  it('transforms our files without keepNames, where tsx alone keeps names; errors point at the lines as written', () => {
    expect(run('--import', 'tsx')).toEqual({ keepNames: true, errorLine: '12' });
    expect(run('--import', './src/main/run-typescript.mjs')).toEqual({ keepNames: false, errorLine: '12' });
  });

  it('keeps each transform for the next process, and transforms afresh a file edited since or an entry torn', () => {
    const script = fileURLToPath(new URL(`run-typescript-cached-${randomBytes(6).toString('hex')}.ts`, import.meta.url));
    const runScript = () => execFileSync(process.execPath, ['--import', './src/main/run-typescript.mjs', script], { cwd: REPOSITORY, encoding: 'utf8' }).trim();
    const markers: string[] = [];
    const write = (value: number) => {
      const marker = randomBytes(8).toString('hex');
      markers.push(marker);
      writeFileSync(script, `const value: number = ${value};\nconsole.log(value, '${marker}');\n`);
      return marker;
    };
    /** The kept entries holding `marker` (the script's text). */
    const entriesOf = (marker: string) =>
      existsSync(TRANSFORM_CACHE)
        ? readdirSync(TRANSFORM_CACHE)
            .filter((name) => name.endsWith('.js'))
            .map((name) => `${TRANSFORM_CACHE}${name}`)
            .filter((file) => readFileSync(file, 'utf8').includes(marker))
        : [];
    /** The script's one kept entry, and its inode. */
    const entryOf = (marker: string) => {
      const entries = entriesOf(marker);
      expect(entries).toHaveLength(1);
      return { file: entries[0]!, inode: statSync(entries[0]!).ino };
    };
    try {
      const first = write(1);
      expect(runScript()).toBe(`1 ${first}`);
      const kept = entryOf(first);
      // The next process reads the entry (a rewrite would be a new file, renamed over it).
      expect(runScript()).toBe(`1 ${first}`);
      expect(entryOf(first)).toEqual(kept);
      // Edited, the file is transformed again, into the same entry.
      const second = write(2);
      expect(runScript()).toBe(`2 ${second}`);
      const edited = entryOf(second);
      expect(edited.file).toBe(kept.file);
      expect(edited.inode).not.toBe(kept.inode);
      // Torn (a crash while the disk wrote it), the entry is not served: it is made again.
      writeFileSync(edited.file, readFileSync(edited.file, 'utf8').slice(0, -40));
      expect(runScript()).toBe(`2 ${second}`);
      expect(entryOf(second).inode).not.toBe(edited.inode);
    } finally {
      rmSync(script, { force: true });
      for (const marker of markers) for (const entry of entriesOf(marker)) rmSync(entry, { force: true });
    }
  });
});
