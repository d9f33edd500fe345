// Input from anyone's browser or script: each refused with a clear error naming the field (never a 500),
// and what a publishable key (a browser) may read and set.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, inject } from 'vitest';
import { ConfirmPaymentDocument, CreatePaymentDocument, PaymentDocument, PaymentsDocument } from '../gql/graphql.ts';
import { dataOf, errorOf } from '../support/graphql-client.ts';
import { wsClient } from '../support/subscriptions.ts';
import { merchantWithSandbox, startStack, type Stack } from '../support/stack.ts';

const card = (number: string) => ({ card: { number, expiryMonth: 12, expiryYear: new Date().getUTCFullYear() + 2, cvc: '123' } });

let stack: Stack;
let shop: Awaited<ReturnType<typeof merchantWithSandbox>>;
let sql: pg.Client;

beforeAll(async () => {
  stack = await startStack();
  shop = await merchantWithSandbox(stack);
  sql = new pg.Client({ connectionString: inject('databaseUrl') });
  await sql.connect();
});
afterAll(async () => {
  await sql.end();
  await stack.close();
});

describe('NUL characters (PostgreSQL cannot store them)', () => {
  it.each([
    [{ description: 'tea\u0000cup' }, 'description'],
    [{ customerId: '\u0000' }, 'customerId'],
    [{ metadata: { order: 'a\u0000b' } }, 'metadata.order'],
    [{ metadata: { 'key\u0000': 'value' } }, 'metadata'],
  ])('in variables: %j is INVALID_INPUT naming %s, and nothing is written', async (fields, field) => {
    const result = await shop.secret(CreatePaymentDocument, { input: { amount: 100, currency: 'USD', ...fields } });
    expect(result.status).toBe(400);
    expect(errorOf(result, 'INVALID_INPUT').extensions?.field).toBe(field);
    const { rows } = await sql.query('SELECT count(*)::int AS n FROM payment_intents WHERE merchant_id = $1', [shop.merchantId]);
    expect(rows[0].n).toBe(0);
  });

  it.each(['\\u0000', '\\u{0}'])('escaped in a query literal (%s) is INVALID_INPUT', async (escape) => {
    const response = await fetch(`${stack.api.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'api-key': shop.secretKey },
      body: JSON.stringify({ query: `{ payment(id: "pay_${escape}") { id } }` }),
    });
    expect(response.status).toBe(400);
    const body = (await response.json()) as { errors: { extensions: { code: string } }[] };
    expect(body.errors[0]!.extensions.code).toBe('INVALID_INPUT');
  });
});

describe('queries nested too deep to parse (the parser is recursive, and overflowed the stack: 500)', () => {
  // Within the token limit: two tokens a level.
  const deepList = `{ payment(id: ${'['.repeat(2000)}${']'.repeat(2000)}) { id } }`;

  it('a list value 2,000 deep over HTTP is QUERY_TOO_COMPLEX, asked once or again (a parse error is cached)', async () => {
    for (let send = 0; send < 2; send += 1) {
      const response = await fetch(`${stack.api.url}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'api-key': shop.secretKey },
        body: JSON.stringify({ query: deepList }),
      });
      expect(response.status).toBe(400);
      const body = (await response.json()) as { errors: { extensions: { code: string } }[] };
      expect(body.errors[0]!.extensions.code).toBe('QUERY_TOO_COMPLEX');
    }
  });

  it('a list value 2,000 deep over WebSocket is a QUERY_TOO_COMPLEX error for that operation, and the socket stays open', async () => {
    const client = wsClient(stack.api.url, shop.secretKey);
    try {
      const run = (query: string) =>
        new Promise<{ extensions?: { code?: string } }[] | unknown>((resolve) => {
          client.subscribe({ query }, { next: (result) => resolve(result.errors ?? result.data), error: resolve, complete: () => {} });
        });
      const refused = (await run(deepList)) as { extensions?: { code?: string } }[];
      expect(Array.isArray(refused) && refused[0]?.extensions?.code).toBe('QUERY_TOO_COMPLEX');
      expect(await run('{ merchant { id } }')).toEqual({ merchant: { id: shop.merchantId } });
    } finally {
      await client.dispose();
    }
  });
});

describe('the redirect-response route', () => {
  it.each([
    '/payments/%ZZ/redirect/response/sandbox',
    '/payments/pay_%00/redirect/response/sandbox',
    '/payments/x/redirect/response/%E0%A4%A',
    '/payments/pay_000000000000000000000000/redirect/response/nope',
  ])('%s is 404, not a server error', async (path) => {
    const response = await fetch(`${stack.api.url}${path}`, { redirect: 'manual' });
    expect(response.status).toBe(404);
  });
});

describe('instants and cursors', () => {
  it.each(['1', '0000-01-01', '2024-02-30', '2024-01-01T10:00', '+275760-09-13T00:00:00Z', '-005000-01-01T00:00:00Z'])(
    'createdAfter %j is INVALID_INPUT naming createdAfter',
    async (createdAfter) => {
      const response = await fetch(`${stack.api.url}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'api-key': shop.secretKey },
        body: JSON.stringify({
          query: 'query($after: DateTime) { payments(createdAfter: $after) { pageInfo { hasNextPage } } }',
          variables: { after: createdAfter },
        }),
      });
      expect(response.status).toBe(400);
      const body = (await response.json()) as { errors: { message: string; extensions: { code: string; field?: string } }[] };
      expect(body.errors[0]!.extensions).toMatchObject({ code: 'INVALID_INPUT', field: 'after' });
      expect(body.errors[0]!.message).toContain('ISO 8601');
    },
  );

  it.each([
    Buffer.from('-005000-01-01T00:00:00.000Z|pay_000000000000000000000000').toString('base64url'),
    Buffer.from('2026-01-01T00:00:00.000Z|pay_\u0000').toString('base64url'),
    Buffer.from('2026-01-01T00:00:00.000Z|x').toString('base64url'),
    'not a cursor',
  ])('a forged cursor %s is INVALID_INPUT naming after', async (after) => {
    const error = errorOf(await shop.secret(PaymentsDocument, { after }), 'INVALID_INPUT');
    expect(error.extensions?.field).toBe('after');
  });
});

describe('what a publishable key may read and set', () => {
  it('reads the payment without the merchant’s own data, setup ids, fingerprint or actors', async () => {
    const created = dataOf(
      await shop.secret(CreatePaymentDocument, {
        input: { amount: 700, currency: 'USD', customerId: 'cus_42', metadata: { internal: 'margin 12%' }, paymentMethodData: card('4242424242424242') },
      }),
    ).createPayment;
    dataOf(await shop.publishable(ConfirmPaymentDocument, { input: { clientSecret: created.clientSecret, paymentMethodData: card('4242424242424242') } }));
    const bySecret = dataOf(await shop.secret(PaymentDocument, { id: created.id })).payment;
    const byBrowser = dataOf(await shop.publishable(PaymentDocument, { id: created.id, clientSecret: created.clientSecret })).payment;
    expect(bySecret.metadata).toEqual({ internal: 'margin 12%' });
    expect(bySecret.activeAttempt.card?.fingerprint).toMatch(/^[0-9a-f]{64}$/);
    expect(bySecret.history.every((row) => typeof row.actor === 'string')).toBe(true);
    expect(byBrowser.metadata).toBeNull();
    expect(byBrowser.activeAttempt.card).toMatchObject({ last4: '4242', fingerprint: null });
    expect(byBrowser.history.map((row) => row.actor)).toEqual(bySecret.history.map(() => null));
    expect(byBrowser.status).toBe(bySecret.status);
  });

  it('fingerprints the same card differently for two merchants', async () => {
    const other = await merchantWithSandbox(stack);
    const fingerprints = [];
    for (const merchant of [shop, other]) {
      const created = dataOf(
        await merchant.secret(CreatePaymentDocument, { input: { amount: 100, currency: 'USD', paymentMethodData: card('5555555555554444') } }),
      ).createPayment;
      fingerprints.push(created.activeAttempt.card?.fingerprint);
    }
    expect(fingerprints[0]).toMatch(/^[0-9a-f]{64}$/);
    expect(fingerprints[1]).toMatch(/^[0-9a-f]{64}$/);
    expect(fingerprints[0]).not.toBe(fingerprints[1]);
  });

  it('a publishable key may not set or change returnUrl (an open redirect): FORBIDDEN naming returnUrl; it may repeat the merchant’s', async () => {
    const confirmWith = (key: 'publishable' | 'secret', clientSecret: string, returnUrl: string) =>
      shop[key](ConfirmPaymentDocument, { input: { clientSecret, returnUrl, paymentMethodData: card('4242424242424242') } });
    const unset = dataOf(await shop.secret(CreatePaymentDocument, { input: { amount: 300, currency: 'USD' } })).createPayment;
    const set = dataOf(
      await shop.secret(CreatePaymentDocument, { input: { amount: 300, currency: 'USD', returnUrl: 'https://shop.example/done' } }),
    ).createPayment;
    const refusals = [
      [unset, 'https://evil.example/phish'],
      [set, 'https://evil.example/phish'],
      [set, 'https://shop.example/thanks'],
    ] as const;
    for (const [payment, returnUrl] of refusals) {
      const refused = errorOf(await confirmWith('publishable', payment.clientSecret, returnUrl), 'FORBIDDEN');
      expect(refused.extensions?.field, returnUrl).toBe('returnUrl');
      expect(dataOf(await shop.secret(PaymentDocument, { id: payment.id })).payment, returnUrl).toMatchObject({
        status: payment.status,
        version: payment.version,
      });
    }
    expect(dataOf(await confirmWith('publishable', set.clientSecret, 'https://shop.example/done')).confirmPayment.status).toBe('SUCCEEDED');
    // The merchant's own server still may, as before.
    expect(dataOf(await confirmWith('secret', unset.clientSecret, 'https://shop.example/back')).confirmPayment.status).toBe('SUCCEEDED');
  });
});
