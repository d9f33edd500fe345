// The sandbox's settings from the environment (SANDBOX_*, in the table of docs/configuration.md), validated
// once at start; a bad value stops it with one line naming the variable and the rule.
import { z } from 'zod';
import { StartupError } from './startup-error.ts';

const integerFrom = (min: number, max: number) => {
  const rule = `must be an integer from ${min} to ${max}`;
  return z.coerce.number(rule).int(rule).min(min, rule).max(max, rule);
};

/** A comma-separated list of 1 to `maxItems` integers from `min` to `max` ("1000,5000"), as numbers. */
const integerListFrom = (min: number, max: number, maxItems: number) => {
  const rule = `must be a comma-separated list of 1 to ${maxItems} integers from ${min} to ${max}`;
  return z.string().transform((value, context) => {
    const items = value.split(',').map((item) => item.trim());
    const numbers = items.map(Number);
    if (items.length > maxItems || items.some((item) => !/^\d{1,9}$/.test(item)) || numbers.some((number) => number < min || number > max)) {
      context.addIssue({ code: 'custom', message: rule });
      return z.NEVER;
    }
    return numbers;
  });
};

/** The sandbox processor's own settings (its role runs apart from the API in production-like setups). */
const sandboxConfigSchema = z.object({
  SANDBOX_PORT: integerFrom(0, 65535).default(4100),
  SANDBOX_HOST: z.string().default('127.0.0.1'),
  SANDBOX_LATENCY_MS: integerFrom(0, 30_000).default(0),
  SANDBOX_BANK_DEBIT_SETTLE_MS: integerFrom(0, 600_000).default(3_000),
  /** How long a pending sandbox refund (of the refund test cards) waits before it settles. */
  SANDBOX_REFUND_SETTLE_MS: integerFrom(0, 600_000).default(3_000),
  /** How long after its payment succeeded the sandbox's dispute test card is disputed. */
  SANDBOX_DISPUTE_OPEN_MS: integerFrom(0, 600_000).default(3_000),
  /** How long each step of a sandbox payout takes (pending to in_transit, in_transit to paid or failed, pending to expired). */
  SANDBOX_PAYOUT_SETTLE_MS: integerFrom(0, 600_000).default(3_000),
  /** The waits before each retry of a failed sandbox callback; unset: the server's default (1 s, 5 s, 30 s, 2 min). */
  SANDBOX_CALLBACK_RETRY_DELAYS_MS: integerListFrom(0, 3_600_000, 20).optional(),
  /** Where customers' browsers reach the sandbox (challenge URLs are built from it). */
  /** The token `/_control` requires; unset, it is open (docs/sandbox.md: then never expose the sandbox). */
  SANDBOX_CONTROL_TOKEN: z
    .string()
    .regex(/^\S{16,256}$/, 'must be 16 to 256 characters without spaces')
    .optional(),
  SANDBOX_PUBLIC_URL: z.url({ protocol: /^https?$/, error: 'must be an absolute http or https URL' }).optional(),
});

export type SandboxConfig = z.infer<typeof sandboxConfigSchema>;

/** The settings in `env`; the first problem becomes a StartupError naming the variable. */
export function loadSandboxConfig(env: NodeJS.ProcessEnv = process.env): SandboxConfig {
  // Empty strings mean "unset", as shells and .env files produce them.
  const present = Object.fromEntries(Object.entries(env).filter(([, value]) => value !== ''));
  const parsed = sandboxConfigSchema.safeParse(present);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new StartupError(`${issue.path.join('.')}: ${issue.message}`);
  }
  return parsed.data;
}
