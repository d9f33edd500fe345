// Structured JSON logs. Secrets are removed by key name at any depth before a line is written, so a key,
// secret or card number that reaches a log call by mistake never reaches the log.
import { pino, type Logger } from 'pino';
import { scopeLogFields } from './request-scope.ts';
import { activeSpanIds, tracingEnabled } from './tracing.ts';

/** Keys whose values are never logged, compared case-insensitively and ignoring "-" and "_". */
const SECRET_KEYS = new Set([
  'apikey',
  'authorization',
  'cookie',
  'setcookie',
  'secretkey',
  'publishablekey',
  'adminapikey',
  'clientsecret',
  'paymentresponsehashkey',
  'webhooksecret',
  'password',
  'csrftoken',
  'sessiontoken',
  'credentials',
  'encryptionkey',
  'cvc',
  'cvv',
]);
/** Keys that are secret only inside a card object ("number" elsewhere is harmless). */
const CARD_KEYS = new Set(['number', 'cardnumber', 'pan']);
const REDACTED = '[redacted]';
const MAX_DEPTH = 8;

const normalise = (key: string) => key.toLowerCase().replace(/[-_]/g, '');

/** A copy of `value` with every secret replaced; Errors are left to pino's serializer. */
export function scrubSecrets(value: unknown, parentKey = '', depth = 0): unknown {
  if (value === null || typeof value !== 'object' || value instanceof Error || value instanceof Date) return value;
  if (depth >= MAX_DEPTH) return '[depth limit]';
  if (Array.isArray(value)) return value.map((item) => scrubSecrets(item, parentKey, depth + 1));
  const insideCard = normalise(parentKey) === 'card';
  const copy: Record<string, unknown> = {};
  for (const [key, inner] of Object.entries(value)) {
    const name = normalise(key);
    copy[key] = SECRET_KEYS.has(name) || (insideCard && CARD_KEYS.has(name)) ? REDACTED : scrubSecrets(inner, key, depth + 1);
  }
  return copy;
}

export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  return pino(
    {
      level,
      base: { service: 'payments' },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { log: (object) => scrubSecrets(object) as Record<string, unknown> },
      // The request id (or job id) of the request the line is written for (request-scope.ts), and inside a trace
      // its ids, to find the trace from the log (docs/operations.md, "Tracing"); a process that does not trace
      // does not look.
      mixin: tracingEnabled() ? () => ({ ...scopeLogFields(), ...activeSpanIds() }) : scopeLogFields,
      // A new object: pino's default merges into the mixin's, which is the scope's own (shared by its lines).
      mixinMergeStrategy: (mergeObject, mixinObject) => ({ ...mixinObject, ...mergeObject }),
    },
    destination,
  );
}

export type { Logger };
