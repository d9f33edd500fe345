// Rate limits on what can be done without a secret key, with low limits set for this file: failed
// authentications per client IP (a valid secret key is still served), payment-link uses per IP and per link,
// confirms per client secret, declines per link, and the counts shared by every API process. Each test
// speaks from its own loopback address (127.0.0.0/8 all reaches the API), so each is a client of its own.
import { randomBytes } from 'node:crypto';
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ConfirmPaymentDocument,
  CreatePaymentDocument,
  CreatePaymentLinkDocument,
  MerchantDocument,
  PaymentUpdatedDocument,
  type TypedDocumentString,
} from '../gql/graphql.ts';
import { clientKeyOf } from '../../src/platform/rate-limits.ts';
import { startTestApi, TEST_ADMIN_KEY, type TestApi } from '../support/api.ts';
import { dataOf } from '../support/graphql-client.ts';
import { merchantWithSandbox, startStack, type Stack } from '../support/stack.ts';
import { subscribeWs, wsClient } from '../support/subscriptions.ts';

const LIMITS = {
  RATE_LIMIT_FAILED_AUTH_PER_IP: '20/300',
  RATE_LIMIT_LINK_USES_PER_IP: '3/60',
  RATE_LIMIT_LINK_USES_PER_LINK: '5/60',
  RATE_LIMIT_CONFIRMS_PER_CLIENT_SECRET: '3/600',
  RATE_LIMIT_DECLINES_PER_LINK: '2/3600',
};

let stack: Stack;
let shop: Awaited<ReturnType<typeof merchantWithSandbox>>;
beforeAll(async () => {
  stack = await startStack({ worker: false, env: LIMITS });
  shop = await merchantWithSandbox(stack);
});
afterAll(async () => {
  await stack.close();
});

let lastAddress = 1;
/** A loopback address no other test of this file speaks from. */
const newClientIp = () => `127.0.${Math.floor(++lastAddress / 250)}.${(lastAddress % 250) + 1}`;

interface Answer {
  status: number;
  retryAfter: string | undefined;
  body: { errors?: { message: string; extensions?: Record<string, unknown> }[]; error?: { code: string; message: string }; [key: string]: unknown };
}

/** One HTTP request from `clientIp` (the socket's source address). */
function send(clientIp: string, url: string, init: { method?: string; headers?: Record<string, string>; body?: string } = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const outgoing = request(url, { method: init.method ?? 'GET', headers: init.headers, localAddress: clientIp }, (response) => {
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (text += chunk));
      response.on('end', () =>
        resolve({ status: response.statusCode!, retryAfter: response.headers['retry-after'], body: JSON.parse(text) as Answer['body'] }),
      );
    });
    outgoing.on('error', reject);
    outgoing.end(init.body);
  });
}

const graphql = <Data, Variables>(
  api: { url: string },
  clientIp: string,
  key: string | null,
  document: TypedDocumentString<Data, Variables>,
  variables: Variables,
) =>
  send(clientIp, `${api.url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(key ? { 'api-key': key } : {}) },
    body: JSON.stringify({ query: document.toString(), variables }),
  });

const useLink = (clientIp: string, linkId: string) =>
  send(clientIp, `${stack.api.url}/payment-links/${linkId}/payments`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
const wrongSecretKey = () => `sk_test_${randomBytes(24).toString('base64url').replace(/[-_]/g, 'x').slice(0, 32)}`;
const card = (number: string) => ({ card: { number, expiryMonth: 12, expiryYear: new Date().getUTCFullYear() + 2, cvc: '123' } });
const DECLINED = '4000000000000002';

/** A GraphQL answer refused by a rate limit: 429, RATE_LIMITED, and Retry-After within the rule's window. */
function expectRateLimited(answer: Answer, windowSeconds: number): void {
  expect(answer.status, JSON.stringify(answer.body)).toBe(429);
  const code = answer.body.errors?.[0]?.extensions?.code ?? answer.body.error?.code;
  expect(code).toBe('RATE_LIMITED');
  expect(Number(answer.retryAfter)).toBeGreaterThanOrEqual(1);
  expect(Number(answer.retryAfter)).toBeLessThanOrEqual(windowSeconds);
}

describe('failed authentications per client IP', () => {
  it('answer the 21st wrong key and later ones 429 with Retry-After, while a valid secret key from the same IP is served', async () => {
    const clientIp = newClientIp();
    const wrongKeys = [
      ...Array.from({ length: 10 }, wrongSecretKey),
      'not-a-key',
      `${TEST_ADMIN_KEY}x`,
      ...Array.from({ length: 8 }, () => `pk_test_${'a'.repeat(32)}`),
    ];
    for (const key of wrongKeys) {
      const answer = await graphql(stack.api, clientIp, key, MerchantDocument, {});
      expect(answer.status).toBe(401);
    }
    const refused = await graphql(stack.api, clientIp, wrongSecretKey(), MerchantDocument, {});
    expectRateLimited(refused, 300);
    expect(refused.body.errors?.[0]?.message).toMatch(/^Too many failed authentications from this address\. Retry in \d+ s\.$/);
    // Now anything without a valid secret key from that IP is refused before its key is looked at.
    expectRateLimited(await graphql(stack.api, clientIp, wrongSecretKey(), MerchantDocument, {}), 300);
    expectRateLimited(await graphql(stack.api, clientIp, null, MerchantDocument, {}), 300);
    expectRateLimited(await graphql(stack.api, clientIp, shop.publishableKey, MerchantDocument, {}), 300);
    expectRateLimited(await send(clientIp, `${stack.api.url}/payment-links/plink_none`), 300);
    // A valid secret key (and the admin key) from the same address is served as ever.
    const served = await graphql(stack.api, clientIp, shop.secretKey, MerchantDocument, {});
    expect(served.status).toBe(200);
    expect(served.body.errors).toBeUndefined();
    // Another address is not affected.
    expect((await graphql(stack.api, newClientIp(), wrongSecretKey(), MerchantDocument, {})).status).toBe(401);
  });

  it('count wrong client secrets with a publishable key, and refuse the subscriptions of an address over the limit', async () => {
    const clientIp = newClientIp();
    const payment = dataOf(await shop.secret(CreatePaymentDocument, { input: { amount: 700, currency: 'EUR' } })).createPayment;
    const wrongSecret = `${payment.id}_secret_${'x'.repeat(24)}`;
    for (let attempt = 1; attempt <= 20; attempt += 1) {
      const answer = await graphql(stack.api, clientIp, shop.publishableKey, ConfirmPaymentDocument, {
        input: { clientSecret: wrongSecret, paymentMethodData: card('4242424242424242') },
      });
      expect(answer.body.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
    }
    expectRateLimited(
      await graphql(stack.api, clientIp, shop.publishableKey, ConfirmPaymentDocument, {
        input: { clientSecret: wrongSecret, paymentMethodData: card('4242424242424242') },
      }),
      300,
    );
    // The right client secret from that address is refused too until the window passes; over WebSocket as well.
    expectRateLimited(
      await graphql(stack.api, clientIp, shop.publishableKey, ConfirmPaymentDocument, {
        input: { clientSecret: payment.clientSecret, paymentMethodData: card('4242424242424242') },
      }),
      300,
    );
    const client = wsClient(stack.api.url, shop.publishableKey, clientIp);
    const subscription = subscribeWs(client, PaymentUpdatedDocument, { paymentId: payment.id, clientSecret: payment.clientSecret });
    expect((await subscription.waitForError()).map((error) => error.extensions?.code)).toEqual(['RATE_LIMITED']);
    await client.dispose();
  });
});

describe('the client IP', () => {
  it('is an IPv4 address (also mapped into IPv6), or an IPv6 address’s /64, as one host usually holds a whole /64', () => {
    expect(clientKeyOf('203.0.113.7')).toBe('203.0.113.7');
    expect(clientKeyOf('::ffff:203.0.113.7')).toBe('203.0.113.7');
    expect(clientKeyOf('2001:db8:a:b:1:2:3:4')).toBe('2001:db8:a:b::/64');
    expect(clientKeyOf('2001:DB8:A:B::9')).toBe('2001:db8:a:b::/64');
    expect(clientKeyOf('2001:db8::1')).toBe('2001:db8:0:0::/64');
    expect(clientKeyOf('::1')).toBe('0:0:0:0::/64');
  });
});

describe('payment link uses', () => {
  it('are limited per client IP', async () => {
    const link = dataOf(await shop.secret(CreatePaymentLinkDocument, { input: { amount: 1000, currency: 'EUR' } })).createPaymentLink;
    const clientIp = newClientIp();
    for (let use = 1; use <= 3; use += 1) expect((await useLink(clientIp, link.id)).status).toBe(201);
    const refused = await useLink(clientIp, link.id);
    expectRateLimited(refused, 60);
    expect(refused.body.error?.message).toMatch(/^Too many payment link uses from this address\./);
    expect((await useLink(newClientIp(), link.id)).status).toBe(201);
  });

  it('are limited per link, whatever the addresses', async () => {
    const link = dataOf(await shop.secret(CreatePaymentLinkDocument, { input: { amount: 1000, currency: 'EUR' } })).createPaymentLink;
    const other = dataOf(await shop.secret(CreatePaymentLinkDocument, { input: { amount: 1000, currency: 'EUR' } })).createPaymentLink;
    for (let use = 1; use <= 5; use += 1) expect((await useLink(newClientIp(), link.id)).status).toBe(201);
    const clientIp = newClientIp();
    expectRateLimited(await useLink(clientIp, link.id), 60);
    expect((await useLink(clientIp, other.id)).status).toBe(201);
  });

  it('stop for a link whose payments were declined too often: new uses and confirms of its open payments', async () => {
    const link = dataOf(await shop.secret(CreatePaymentLinkDocument, { input: { amount: 1000, currency: 'EUR' } })).createPaymentLink;
    const clientIp = newClientIp();
    const uses = [];
    for (let use = 1; use <= 3; use += 1) uses.push((await useLink(newClientIp(), link.id)).body);
    for (const use of uses.slice(0, 2)) {
      const declined = await graphql(stack.api, clientIp, shop.publishableKey, ConfirmPaymentDocument, {
        input: { clientSecret: use['client_secret'] as string, paymentMethodData: card(DECLINED) },
      });
      expect(declined.body.errors?.[0]?.extensions?.code).toBe('PAYMENT_DECLINED');
    }
    const refused = await useLink(newClientIp(), link.id);
    expectRateLimited(refused, 3600);
    expect(refused.body.error?.message).toMatch(/^Too many payments through this link were declined\./);
    const confirm = await graphql(stack.api, clientIp, shop.publishableKey, ConfirmPaymentDocument, {
      input: { clientSecret: uses[2]!['client_secret'] as string, paymentMethodData: card('4242424242424242') },
    });
    expectRateLimited(confirm, 3600);
  });
});

describe('confirms per client secret', () => {
  it('refuse the 4th confirm of one payment with the publishable key, not other payments nor the secret key', async () => {
    const clientIp = newClientIp();
    const create = () => shop.secret(CreatePaymentDocument, { input: { amount: 900, currency: 'EUR' } });
    const payment = dataOf(await create()).createPayment;
    const confirm = (clientSecret: string, number: string) =>
      graphql(stack.api, clientIp, shop.publishableKey, ConfirmPaymentDocument, { input: { clientSecret, paymentMethodData: card(number) } });
    for (let attempt = 1; attempt <= 3; attempt += 1)
      expect((await confirm(payment.clientSecret, DECLINED)).body.errors?.[0]?.extensions?.code).toBe('PAYMENT_DECLINED');
    const refused = await confirm(payment.clientSecret, '4242424242424242');
    expectRateLimited(refused, 600);
    expect(refused.body.errors?.[0]?.message).toMatch(/^Too many confirmations of this payment\./);
    const other = dataOf(await create()).createPayment;
    expect((await confirm(other.clientSecret, '4242424242424242')).status).toBe(200);
    // The merchant's backend is never slowed.
    const paid = await graphql(stack.api, clientIp, shop.secretKey, ConfirmPaymentDocument, {
      input: { clientSecret: payment.clientSecret, paymentMethodData: card('4242424242424242') },
    });
    expect(paid.status).toBe(200);
  });
});

describe('confirms per client secret, counted as the payment is read', () => {
  it('count a confirm the read then refuses (another merchant’s key): only the client secret’s holder can, and it counts', async () => {
    const clientIp = newClientIp();
    const stranger = await merchantWithSandbox(stack);
    const payment = dataOf(await shop.secret(CreatePaymentDocument, { input: { amount: 900, currency: 'EUR' } })).createPayment;
    const confirm = (publishableKey: string) =>
      graphql(stack.api, clientIp, publishableKey, ConfirmPaymentDocument, {
        input: { clientSecret: payment.clientSecret, paymentMethodData: card('4242424242424242') },
      });
    for (let attempt = 1; attempt <= 3; attempt += 1) expect((await confirm(stranger.publishableKey)).body.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    const refused = await confirm(shop.publishableKey);
    expectRateLimited(refused, 600);
    expect(refused.body.errors?.[0]?.message).toMatch(/^Too many confirmations of this payment\./);
  });
});

describe('across API processes', () => {
  let second: TestApi;
  beforeAll(async () => {
    second = await startTestApi(stack.env);
  });
  afterAll(async () => {
    await second.close();
  });

  it('share the counts through Redis: 10 wrong keys on one and 10 on the other, then both refuse', async () => {
    const clientIp = newClientIp();
    for (const api of [stack.api, second]) {
      for (let attempt = 1; attempt <= 10; attempt += 1) expect((await graphql(api, clientIp, wrongSecretKey(), MerchantDocument, {})).status).toBe(401);
    }
    expectRateLimited(await graphql(stack.api, clientIp, wrongSecretKey(), MerchantDocument, {}), 300);
    expectRateLimited(await graphql(second, clientIp, null, MerchantDocument, {}), 300);
    const result = await graphql(second, clientIp, shop.secretKey, MerchantDocument, {});
    expect(result.status).toBe(200);
  });
});
