// How the service's processes run TypeScript (src/main/run-typescript.mjs; docs/operations.md): our files without
// tsx's keepNames (a property store per closure, docs/benchmarks.md), with stack traces still on the lines as written.
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const run = (...importFlags: string[]) =>
  JSON.parse(
    execFileSync(process.execPath, [...importFlags, fileURLToPath(new URL('run-typescript-probe.ts', import.meta.url))], {
      cwd: fileURLToPath(new URL('../..', import.meta.url)),
      encoding: 'utf8',
    }),
  ) as { keepNames: boolean; errorLine: string };

describe('run-typescript', () => {
  it('transforms our files without keepNames, where tsx alone keeps names; errors point at the lines as written', () => {
    expect(run('--import', 'tsx')).toEqual({ keepNames: true, errorLine: '12' });
    expect(run('--import', './src/main/run-typescript.mjs')).toEqual({ keepNames: false, errorLine: '12' });
  });
});
