// Entry point of the sandbox card processor: a stand-in for a real processor, called by the service over HTTP.
import { z } from 'zod';
import { startSandbox } from '../sandbox/server.ts';
import { StartupError } from '../startup-error.ts';
import { run } from './run.ts';

function integerFrom(min: number, max: number) {
  const rule = `must be an integer from ${min} to ${max}`;
  return z.coerce.number(rule).int(rule).min(min, rule).max(max, rule);
}

const envSchema = z.object({
  SANDBOX_PORT: integerFrom(0, 65535).default(4100),
  SANDBOX_HOST: z.string().default('127.0.0.1'),
  SANDBOX_LATENCY_MS: integerFrom(0, 30_000).default(0),
  /** Where customers' browsers reach the sandbox (challenge URLs are built from it). */
  SANDBOX_PUBLIC_URL: z.url({ protocol: /^https?$/, error: 'must be an absolute http or https URL' }).optional(),
});

run('sandbox', async () => {
  // Empty strings mean "unset", as shells and .env files produce them.
  const present = Object.fromEntries(Object.entries(process.env).filter(([, value]) => value !== ''));
  const parsed = envSchema.safeParse(present);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new StartupError(`${issue.path.join('.')}: ${issue.message}`);
  }
  const env = parsed.data;
  const sandbox = await startSandbox({ port: env.SANDBOX_PORT, host: env.SANDBOX_HOST, latencyMs: env.SANDBOX_LATENCY_MS, publicUrl: env.SANDBOX_PUBLIC_URL }).catch(
    (error: unknown) => {
      if ((error as NodeJS.ErrnoException).code === 'EADDRINUSE') throw new StartupError(`port ${env.SANDBOX_PORT} is already in use`);
      throw error;
    },
  );
  process.stdout.write(`sandbox listening on ${sandbox.url}\n`);
  return sandbox.close;
});
