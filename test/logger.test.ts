import { describe, expect, it } from 'vitest';
import { ConnectorError } from '../src/modules/connectors/port.ts';
import { createLogger } from '../src/platform/logger.ts';

/** A logger at `info` writing into an array, one JSON line per call. */
function capture() {
  const lines: string[] = [];
  const logger = createLogger('info', { write: (line: string) => void lines.push(line) });
  return { logger, output: () => lines.join('') };
}

// Every value is unique, so finding it anywhere in the output means it leaked.
const secrets = {
  apiKey: 'sk_test_APIKEYSECRETVALUE0000000000',
  secretKey: 'sk_live_SECRETKEYVALUE000000000000',
  clientSecret: 'pay_x_secret_CLIENTSECRETVALUE',
  paymentResponseHashKey: 'HASHKEYSECRETVALUE',
  credentials: { apiKey: 'CONNECTORCREDVALUE', merchantId: 'CONNECTORMERCHANTVALUE' },
  csrfToken: 'CSRFTOKENVALUE',
  sessionToken: 'SESSIONTOKENVALUE',
};
const card = { number: '4242424242424242', cvc: '987', expiryMonth: '12' };
const leakedValues = [
  'APIKEYSECRETVALUE',
  'SECRETKEYVALUE',
  'CLIENTSECRETVALUE',
  'HASHKEYSECRETVALUE',
  'CONNECTORCREDVALUE',
  'CONNECTORMERCHANTVALUE',
  'CSRFTOKENVALUE',
  'SESSIONTOKENVALUE',
  '4242424242424242',
  '987',
  'HEADERBEARERVALUE',
  'HEADERAPIKEYVALUE',
  'REQBEARERVALUE',
];

function expectNoSecrets(output: string) {
  for (const value of leakedValues) expect(output, `${value} leaked`).not.toContain(value);
  expect(output).toContain('[redacted]');
}

describe('createLogger', () => {
  it('redacts secret fields at the top level of a log object', () => {
    const { logger, output } = capture();
    logger.info(
      {
        paymentId: 'pay_VISIBLEPAYMENTID',
        ...secrets,
        card,
        headers: { authorization: 'Bearer HEADERBEARERVALUE', 'api-key': 'HEADERAPIKEYVALUE', 'user-agent': 'curl/8' },
        req: { headers: { authorization: 'Bearer REQBEARERVALUE' } },
      },
      'payment created',
    );
    const text = output();
    expectNoSecrets(text);
    expect(text).toContain('pay_VISIBLEPAYMENTID');
    expect(text).toContain('payment created');
    expect(text).toContain('curl/8');
  });

  it('redacts secret fields nested one level down', () => {
    const { logger, output } = capture();
    logger.info({ paymentId: 'pay_VISIBLEPAYMENTID', merchant: { ...secrets, card } }, 'nested');
    const text = output();
    expectNoSecrets(text);
    expect(text).toContain('pay_VISIBLEPAYMENTID');
    expect(JSON.parse(text).merchant.card.expiryMonth).toBe('12');
  });

  it.each(Object.keys(secrets))('redacts %s when it is the only field', (field) => {
    const { logger, output } = capture();
    logger.info({ [field]: secrets[field as keyof typeof secrets] }, 'one field');
    const logged = JSON.parse(output());
    expect(logged[field]).toBe('[redacted]');
  });

  it('writes one JSON line with the level, service and message', () => {
    const { logger, output } = capture();
    logger.info({ paymentId: 'pay_1' }, 'hello');
    const text = output();
    expect(text.endsWith('\n')).toBe(true);
    expect(JSON.parse(text)).toMatchObject({ level: 30, service: 'payments', paymentId: 'pay_1', msg: 'hello' });
  });

  it('drops messages below its level', () => {
    const { logger, output } = capture();
    logger.debug({ paymentId: 'pay_1' }, 'too detailed');
    expect(output()).toBe('');
  });
});

describe('deep and card-scoped redaction', () => {
  it('redacts secrets at any depth and inside arrays', () => {
    const { logger, output } = capture();
    logger.info({ a: { b: { c: { d: [{ clientSecret: 'DEEPSECRETVALUE', 'api-key': 'DEEPAPIKEYVALUE' }] } } } }, 'deep');
    expect(output()).not.toMatch(/DEEPSECRETVALUE|DEEPAPIKEYVALUE/);
  });

  it('keeps a "number" that is not a card number', () => {
    const { logger, output } = capture();
    logger.info({ invoice: { number: 'INV-42' }, card: { number: '4000000000000002' } }, 'numbers');
    const logged = JSON.parse(output());
    expect(logged.invoice.number).toBe('INV-42');
    expect(logged.card.number).toBe('[redacted]');
  });
});

describe('processor errors', () => {
  it("logs a ConnectorError without the processor's error body it carries, and with card numbers in its message masked", () => {
    const { logger, output } = capture();
    const error = new ConnectorError('stripe rejected the request: card 4000 0000 0000 0002 refused', 'rejected', false, {
      processorCode: 'card_declined',
      body: { type: 'card_error', request_log_url: 'https://dashboard.stripe.com/logs/BODYONLYVALUE' },
    });
    expect(error.processorBody).toMatchObject({ request_log_url: 'https://dashboard.stripe.com/logs/BODYONLYVALUE' });
    logger.warn({ err: error }, 'processor call failed');
    expect(output()).toContain('card_declined');
    expect(output()).not.toMatch(/BODYONLYVALUE|4000 0000 0000 0002/);
  });
});
