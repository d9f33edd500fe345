#!/usr/bin/env node
// The `payments` command (docs/cli.md): `payments listen` forwards the merchant's test events to a local URL,
// `payments trigger <event_type>` makes one happen through the sandbox processor.
import { parseArgs } from 'node:util';
import { listen } from './listen.ts';
import { Refusal, settingsFrom, UsageError } from './settings.ts';
import { trigger } from './trigger.ts';
import { isWebhookEventType, WEBHOOK_EVENT_TYPES } from './recipes.ts';

const USAGE = `usage:
  payments listen --forward-to URL [--events type,type] [--after evt_…] [--profile pro_…] [--api-key sk_test_… | PAYMENTS_API_KEY] [--base-url URL | PAYMENTS_BASE_URL]
  payments trigger <event_type> [--profile pro_…] [--timeout seconds] [--api-key …] [--base-url …]`;

const COMMON = { 'api-key': { type: 'string' }, 'base-url': { type: 'string' }, profile: { type: 'string' } } as const;

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (command === 'listen') {
    const { values } = parseArgs({
      args: rest,
      options: { ...COMMON, 'forward-to': { type: 'string' }, events: { type: 'string' }, after: { type: 'string' } },
      strict: true,
    });
    const settings = settingsFrom(values, process.env);
    const forwardTo = values['forward-to'];
    if (!forwardTo || !URL.canParse(forwardTo) || !/^https?:$/.test(new URL(forwardTo).protocol)) {
      throw new UsageError('--forward-to must be an http(s) URL, such as http://localhost:3000/webhooks');
    }
    const events = values.events?.split(',').map((type) => type.trim());
    const unknown = events?.find((type) => !isWebhookEventType(type));
    if (unknown !== undefined) throw new UsageError(`--events: unknown event type ${JSON.stringify(unknown)}: one of ${WEBHOOK_EVENT_TYPES.join(', ')}`);
    const stop = new AbortController();
    for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => stop.abort());
    const print = (line: string) => process.stdout.write(`${line}\n`);
    await listen({ ...settings, forwardTo, events, after: values.after, profileId: values.profile, print }, stop.signal);
    return 0;
  }
  if (command === 'trigger') {
    const { values, positionals } = parseArgs({ args: rest, options: { ...COMMON, timeout: { type: 'string' } }, allowPositionals: true, strict: true });
    if (positionals.length !== 1) throw new UsageError('trigger takes one event type, such as payment_succeeded');
    const timeoutSeconds = values.timeout === undefined ? 60 : Number(values.timeout);
    if (!Number.isInteger(timeoutSeconds) || timeoutSeconds < 1) throw new UsageError('--timeout must be a whole number of seconds, at least 1');
    const settings = settingsFrom(values, process.env);
    const { eventId, objectId } = await trigger({ ...settings, profileId: values.profile, timeoutMs: timeoutSeconds * 1000 }, positionals[0]!);
    process.stdout.write(`${positionals[0]}  ${eventId}  ${objectId}\n`);
    return 0;
  }
  if (command === 'help' || command === '--help' || command === '-h') {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  throw new UsageError(command === undefined ? '' : `unknown command ${JSON.stringify(command)}`);
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    const { code } = error as { code?: unknown };
    // node:util's parseArgs refuses unknown or malformed options with these codes.
    if (error instanceof UsageError || (typeof code === 'string' && code.startsWith('ERR_PARSE_ARGS'))) {
      const { message } = error as Error;
      process.stderr.write(message ? `payments: ${message}\n${USAGE}\n` : `${USAGE}\n`);
      process.exit(2);
    }
    if (error instanceof Refusal) {
      process.stderr.write(`payments: ${error.message}\n`);
      process.exit(3);
    }
    process.stderr.write(`payments: ${typeof code === 'string' ? `${code}: ` : ''}${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  },
);
