// Structured JSON logs. Redaction is by path, so a key, secret or card number that reaches a log call by
// mistake is replaced before it is written.
import { pino, type Logger } from 'pino';

export const REDACTED_PATHS = [
  'req.headers.authorization',
  'req.headers["api-key"]',
  'req.headers.cookie',
  'headers.authorization',
  'headers["api-key"]',
  '*.apiKey',
  '*.secretKey',
  '*.publishableKey',
  '*.clientSecret',
  '*.paymentResponseHashKey',
  '*.password',
  '*.credentials',
  '*.card.number',
  '*.card.cvc',
  '*.number',
  '*.cvc',
  'variables.input.paymentMethodData.card.number',
  'variables.input.paymentMethodData.card.cvc',
];

export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  return pino(
    {
      level,
      base: { service: 'payments' },
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
    },
    destination,
  );
}

export type { Logger };
