// `npm test`'s pretest (scripts/ensure-chromium.sh) on machines of every kind, faked through PATH and
// CHROMIUM_PATH: the real Chromium is never touched. The PATH holds only fakes of `id` and `apt-get`.
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';

const ONE_LINE = 'Chromium is needed for the browser tests: apt-get install -y chromium (or set CHROMIUM_PATH)';

const directories: string[] = [];
afterEach(() => {
  for (const directory of directories.splice(0)) rmSync(directory, { recursive: true, force: true });
});

function executable(file: string, script: string) {
  writeFileSync(file, `#!/bin/sh\n${script}\n`);
  chmodSync(file, 0o755);
}

/** A machine whose user id is `uid`, with an apt-get that installs Chromium (`works`), fails, or is absent. */
function machine({ uid, aptGet }: { uid: number; aptGet: 'works' | 'fails' | 'absent' }) {
  const root = mkdtempSync(path.join(tmpdir(), 'ensure-chromium-'));
  directories.push(root);
  const bin = path.join(root, 'bin');
  const chromium = path.join(root, 'chromium');
  const aptLog = path.join(root, 'apt-get.log');
  mkdirSync(bin);
  executable(path.join(bin, 'id'), `echo ${uid}`);
  if (aptGet !== 'absent') {
    const install = aptGet === 'works' ? `[ "$1" = install ] && : > "${chromium}" && /bin/chmod +x "${chromium}"` : '[ "$1" = install ] && exit 100';
    executable(path.join(bin, 'apt-get'), `echo "$*" >> "${aptLog}"\n${install}\nexit 0`);
  }
  const pretest = () => spawnSync('/bin/bash', ['scripts/ensure-chromium.sh'], { env: { PATH: bin, CHROMIUM_PATH: chromium }, encoding: 'utf8' });
  const aptCalls = () => (existsSync(aptLog) ? readFileSync(aptLog, 'utf8').trim().split('\n') : []);
  return { chromium, pretest, aptCalls };
}

describe('npm test makes sure Chromium is there before any test runs', () => {
  it('runs the check as its pretest', () => {
    const { scripts } = JSON.parse(readFileSync('package.json', 'utf8')) as { scripts: Record<string, string> };
    expect(scripts.pretest).toBe('bash scripts/ensure-chromium.sh');
  });

  it('does nothing when Chromium is installed', () => {
    const { chromium, pretest, aptCalls } = machine({ uid: 1000, aptGet: 'works' });
    executable(chromium, 'exit 0');
    const result = pretest();
    expect(result.status).toBe(0);
    expect(result.stderr).toBe('');
    expect(aptCalls()).toEqual([]);
  });

  it('installs it with apt-get when it runs as root', () => {
    const { chromium, pretest, aptCalls } = machine({ uid: 0, aptGet: 'works' });
    expect(pretest().status).toBe(0);
    expect(aptCalls()).toEqual(['update -qq', 'install -y -qq chromium']);
    expect(existsSync(chromium)).toBe(true);
  });

  it.each([
    ['not root', { uid: 1000, aptGet: 'works' as const }],
    ['root without apt-get', { uid: 0, aptGet: 'absent' as const }],
    ['root, but apt-get fails', { uid: 0, aptGet: 'fails' as const }],
  ])('otherwise (%s) exits 1 with one line saying what to install', (_label, setup) => {
    const { pretest, aptCalls } = machine(setup);
    const result = pretest();
    expect(result.status).toBe(1);
    expect(result.stderr.trim().split('\n').at(-1)).toBe(ONE_LINE);
    if (setup.uid !== 0) {
      expect(result.stderr.trim()).toBe(ONE_LINE);
      expect(aptCalls()).toEqual([]);
    }
  });
});
