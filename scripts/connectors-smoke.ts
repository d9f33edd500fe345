// `npm run connectors:smoke`: the card flow (pay, capture, refund) through our API against Stripe's and Adyen's
// test environments, for each processor whose test keys are in the environment; not part of `npm test`
// (docs/connectors/stripe.md and adyen.md, "Smoke test against the real processors"). The flow: scripts/lib/connectors-smoke.ts.
import { run } from '../src/main/run.ts';
import { connectorsSmoke, NAME } from './lib/connectors-smoke.ts';

run(NAME, async () => {
  process.exitCode = await connectorsSmoke(process.env, {
    out: (line) => process.stdout.write(`${line}\n`),
    err: (line) => process.stderr.write(`${line}\n`),
  });
});
