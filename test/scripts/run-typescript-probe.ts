// Run by run-typescript.test.ts under src/main/run-typescript.mjs: tells how this file was transformed.
interface Probe {
  keepNames: boolean;
  errorLine: string | undefined;
}

export function outer(): number {
  const inner = () => 1;
  return inner();
}

const error = new Error('probe'); // line 12, as written
const probe: Probe = {
  // esbuild's keepNames wraps each named function in a __name(...) call.
  keepNames: outer.toString().includes('__name'),
  errorLine: /run-typescript-probe\.ts:(\d+)/.exec(error.stack ?? '')?.[1],
};
console.log(JSON.stringify(probe));
