// How the service's processes run TypeScript (src/main/run-typescript.mjs; docs/operations.md): our files without
// tsx's keepNames (a property store per closure, docs/benchmarks.md), with stack traces still on the lines as written,
// each transform kept on disk for the next process and never served for a file edited since.
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
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

  it('keeps each transform for the next process, and transforms a file edited since afresh', () => {
    const script = fileURLToPath(new URL(`run-typescript-cached-${randomBytes(6).toString('hex')}.ts`, import.meta.url));
    const runScript = () => execFileSync(process.execPath, ['--import', './src/main/run-typescript.mjs', script], { cwd: REPOSITORY, encoding: 'utf8' }).trim();
    /** The cached transforms of the script's text `marker` is in. */
    const transformsOf = (marker: string) =>
      readdirSync(TRANSFORM_CACHE)
        .filter((name) => name.endsWith('.js'))
        .map((name) => `${TRANSFORM_CACHE}${name}`)
        .filter((file) => readFileSync(file, 'utf8').includes(marker));
    const write = (value: number) => {
      const marker = randomBytes(8).toString('hex');
      markers.push(marker);
      writeFileSync(script, `const value: number = ${value};\nconsole.log(value, '${marker}');\n`);
      return marker;
    };
    const markers: string[] = [];
    try {
      const first = write(1);
      expect(runScript()).toBe(`1 ${first}`);
      const [kept, ...more] = transformsOf(first);
      expect(more).toEqual([]);
      // The next process reads the kept transform: one changed by hand shows through.
      writeFileSync(kept!, readFileSync(kept!, 'utf8').replace('= 1;', '= 42;'));
      expect(runScript()).toBe(`42 ${first}`);
      // Edited, the file is transformed again, whatever is kept for its old text.
      const second = write(2);
      expect(runScript()).toBe(`2 ${second}`);
      expect(transformsOf(second)).toHaveLength(1);
    } finally {
      rmSync(script, { force: true });
      for (const file of markers.flatMap(transformsOf)) rmSync(file, { force: true });
    }
  });
});
