// The sandbox processor's card payments over real HTTP, as the service's connector and a customer's browser
// use them: test cards, the payment object, keys, idempotency, capture, cancel, 3D Secure, refusals, latency.
import { randomBytes } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_CARDS } from '../../sandbox/src/cards.ts';
import { startSandbox, type Sandbox } from '../../sandbox/src/server.ts';
import { EXPECTED_CARDS, FUTURE_YEAR, PAYMENT_KEYS, RETURN_URL, cvcFor, leaks, newKey, paymentInput, useSandbox, type Body } from './harness.ts';

const { url, call, create, get, capture, cancel, browser, challenged } = useSandbox();

describe('test cards', () => {
  it('the expectations below cover exactly the rows of the card table', () => {
    expect(TEST_CARDS.map((card) => card.number).sort()).toEqual(Object.keys(EXPECTED_CARDS).sort());
  });

  it.each(TEST_CARDS.map((card) => card.number))('card %s gives its outcome, and the payment is stored as answered', async (number) => {
    const expected = EXPECTED_CARDS[number]!;
    const key = newKey();
    const created = await create(key, {}, { number, cvc: cvcFor(number) });
    expect(created.status).toBe(expected.http);
    expect(created.body.status).toBe(expected.status);
    expect(created.body.error).toEqual(expected.error);
    expect(created.body.card).toEqual({ brand: expected.brand, last4: number.slice(-4), exp_month: 12, exp_year: FUTURE_YEAR });
    expect(created.body.amount_captured).toBe(expected.status === 'succeeded' ? 1234 : 0);
    expect(created.body.amount_capturable).toBe(0);
    expect(created.body.next_action === null).toBe(expected.status !== 'requires_device_data');
    const fetched = await get(key, created.body.id);
    expect(fetched.status).toBe(200);
    expect(fetched.body).toEqual(created.body);
  });

  it.each([
    ['4111111111111111', 'visa'],
    ['2223003122003222', 'mastercard'],
    ['6011111111111117', 'unknown'],
  ])('approves any other Luhn-valid number (%s, brand %s)', async (number, brand) => {
    const created = await create(newKey(), {}, { number });
    expect(created.status).toBe(200);
    expect(created.body.status).toBe('succeeded');
    expect(created.body.card?.brand).toBe(brand);
  });

  it('refuses a number that fails the Luhn check with 400 invalid_number naming card.number, without echoing it', async () => {
    const created = await create(newKey(), {}, { number: '4242424242424241' });
    expect(created.status).toBe(400);
    expect(created.body.error?.code).toBe('invalid_number');
    expect(created.body.error?.message).toMatch(/^card\.number /);
    expect(created.text).not.toContain('4242424242424241');
  });

  it('declines an expired card (last year, or last month) with expired_card, and accepts one expiring this month', async () => {
    const now = new Date();
    const lastMonth = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - 1, 1));
    for (const expiry of [
      { exp_month: 12, exp_year: now.getUTCFullYear() - 1 },
      { exp_month: lastMonth.getUTCMonth() + 1, exp_year: lastMonth.getUTCFullYear() },
    ]) {
      const created = await create(newKey(), { three_ds: 'required' }, expiry);
      expect(created.status).toBe(402);
      expect(created.body.status).toBe('failed');
      expect(created.body.error).toEqual({ code: 'expired_card', message: 'Your card has expired.', retryable: false });
    }
    const thisMonth = await create(newKey(), {}, { exp_month: now.getUTCMonth() + 1, exp_year: now.getUTCFullYear() });
    expect(thisMonth.status).toBe(200);
    expect(thisMonth.body.status).toBe('succeeded');
  });
});

describe('the payment object', () => {
  it('has the documented shape, lowercases the currency, and never contains the card number or CVC', async () => {
    const before = Date.now();
    const created = await create(newKey(), { reference: 'att_123' }, { cvc: '987' });
    expect(created.body).toMatchObject({
      object: 'payment',
      amount: 1234,
      currency: 'usd',
      capture_method: 'automatic',
      reference: 'att_123',
      payment_method_type: 'card',
      bank_debit: null,
      payment_method_token: null,
      canceled_after_capture: false,
      next_action: null,
      error: null,
    });
    expect(created.body.id).toMatch(/^sbx_pay_[A-Za-z0-9]{24}$/);
    expect(Number.isInteger(created.body.created)).toBe(true);
    expect(created.body.created).toBeGreaterThanOrEqual(Math.floor(before / 1000));
    expect(created.body.updated_ms).toBeGreaterThanOrEqual(before);
    expect(Object.keys(created.body).sort()).toEqual(PAYMENT_KEYS);
    // Not a plain search of the text: the random id and the timestamps may contain "987" by chance.
    expect(leaks(created, ['4242424242424242', '987'])).toEqual([]);
  });

  it('treats payment_method_type "card" as its absence', async () => {
    const key = newKey();
    const created = await create(key, { payment_method_type: 'card', reference: undefined });
    expect(created.status).toBe(200);
    expect(created.body).toMatchObject({ status: 'succeeded', payment_method_type: 'card', card: { brand: 'visa', last4: '4242' } });
  });

  it('has reference null when none was sent', async () => {
    const created = await create(newKey(), { reference: undefined });
    expect(created.status).toBe(200);
    expect(created.body.reference).toBeNull();
  });
});

describe('authentication and isolation', () => {
  it.each([
    ['no Authorization header', null],
    ['a key that is too short', 'sk_sandbox_short'],
    ['a key with other characters', 'sk_sandbox_abcd-efgh-1234'],
    ['a key of another kind', 'sk_test_abcdefgh12345678'],
  ])('refuses %s with 401 invalid_api_key on every /v1 route', async (_label, key) => {
    for (const [method, path] of [
      ['POST', '/v1/payments'],
      ['GET', '/v1/payments/sbx_pay_000000000000000000000000'],
      ['POST', '/v1/payments/sbx_pay_000000000000000000000000/capture'],
      ['GET', '/v1/unknown'],
    ] as const) {
      const answer = await call(method, path, { key, body: method === 'POST' ? paymentInput() : undefined });
      expect(answer.status).toBe(401);
      expect(answer.body.error?.code).toBe('invalid_api_key');
    }
  });

  it('refuses a key sent with another scheme than Bearer', async () => {
    const answer = await call('POST', '/v1/payments', { key: null, body: paymentInput(), headers: { authorization: `Basic ${newKey()}` } });
    expect(answer.status).toBe(401);
    expect(answer.body.error?.code).toBe('invalid_api_key');
  });

  it('shows a payment only to the key that created it', async () => {
    const owner = newKey();
    const other = newKey();
    const created = await create(owner, { capture_method: 'manual' });
    for (const answer of [await get(other, created.body.id), await capture(other, created.body.id), await cancel(other, created.body.id)]) {
      expect(answer.status).toBe(404);
      expect(answer.body.error?.code).toBe('resource_missing');
    }
    const untouched = await get(owner, created.body.id);
    expect(untouched.body.status).toBe('requires_capture');
    expect(untouched.body.amount_capturable).toBe(1234);
  });

  it('scopes Idempotency-Keys to their API key', async () => {
    const shared = { 'idempotency-key': `shared-${randomBytes(4).toString('hex')}` };
    const first = await create(newKey(), { amount: 100 }, {}, shared);
    const second = await create(newKey(), { amount: 200 }, {}, shared);
    expect(second.status).toBe(200);
    expect(second.body.id).not.toBe(first.body.id);
    expect(second.body.amount).toBe(200);
  });

  it('finds a payment by the caller reference, for its own key only', async () => {
    const owner = newKey();
    const reference = `att_${randomBytes(6).toString('hex')}`;
    const created = await create(owner, { reference }, { number: '4000000000000002' });
    const found = await call('GET', `/v1/payments?reference=${reference}`, { key: owner });
    expect(found.status).toBe(200);
    expect(found.body).toEqual(created.body);
    for (const answer of [
      await call('GET', `/v1/payments?reference=${reference}`, { key: newKey() }),
      await call('GET', '/v1/payments?reference=att_unknown', { key: owner }),
    ]) {
      expect(answer.status).toBe(404);
      expect(answer.body.error?.code).toBe('resource_missing');
    }
    const withoutReference = await call('GET', '/v1/payments', { key: owner });
    expect(withoutReference.status).toBe(400);
    expect(withoutReference.body.error?.message).toMatch(/^reference /);
  });

  it('answers 404 resource_missing for an unknown payment and 404 for an unknown route', async () => {
    const missing = await get(newKey(), 'sbx_pay_000000000000000000000000');
    expect(missing.status).toBe(404);
    expect(missing.body.error?.code).toBe('resource_missing');
    for (const [method, path] of [
      ['GET', '/v1/nowhere'],
      ['DELETE', '/v1/payments/sbx_pay_000000000000000000000000'],
      ['GET', '/v1/payments/sbx_pay_000000000000000000000000/capture'],
      ['GET', '/nowhere'],
    ]) {
      const answer = await call(method!, path!);
      expect(answer.status, `${method} ${path}`).toBe(404);
      expect(answer.body.error?.code).toBe('not_found');
    }
  });
});

describe('idempotency', () => {
  it('answers a repeated create with the same payment, even with keys in another order, and refuses a different body', async () => {
    const key = newKey();
    const headers = { 'idempotency-key': 'att_create_1' };
    const first = await create(key, {}, {}, headers);
    expect(first.status).toBe(200);
    expect(first.headers.get('idempotent-replayed')).toBeNull();

    const again = await create(key, {}, {}, headers);
    expect(again.status).toBe(200);
    expect(again.body.id).toBe(first.body.id);
    expect(again.headers.get('idempotent-replayed')).toBe('true');

    const input = paymentInput();
    const reordered = Object.fromEntries(Object.entries(input).reverse());
    const sameInOtherOrder = await call('POST', '/v1/payments', { key, body: reordered, headers });
    expect(sameInOtherOrder.body.id).toBe(first.body.id);

    const different = await create(key, { amount: 999 }, {}, headers);
    expect(different.status).toBe(409);
    expect(different.body.error?.code).toBe('idempotency_mismatch');

    const withoutKey = await create(key);
    expect(withoutKey.body.id).not.toBe(first.body.id);
  });

  it('answers a repeated declined create with the same failed payment and its 402', async () => {
    const key = newKey();
    const headers = { 'idempotency-key': 'att_decline_1' };
    const first = await create(key, {}, { number: '4000000000000002' }, headers);
    const again = await create(key, {}, { number: '4000000000000002' }, headers);
    expect(again.status).toBe(402);
    expect(again.body.id).toBe(first.body.id);
    expect(again.body.error?.code).toBe('card_declined');
  });

  it('answers a repeated capture with the captured payment instead of capturing again, and refuses a different one', async () => {
    const key = newKey();
    const { body: payment } = await create(key, { capture_method: 'manual' });
    const headers = { 'idempotency-key': 'capture_1' };
    const first = await capture(key, payment.id, { amount_to_capture: 500 }, headers);
    expect(first.status).toBe(200);
    expect(first.body.amount_captured).toBe(500);

    const again = await capture(key, payment.id, { amount_to_capture: 500 }, headers);
    expect(again.status).toBe(200);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body).toEqual(first.body);

    const different = await capture(key, payment.id, { amount_to_capture: 600 }, headers);
    expect(different.status).toBe(409);
    expect(different.body.error?.code).toBe('idempotency_mismatch');

    // A new key is a new capture, which the state refuses.
    const newCapture = await capture(key, payment.id, { amount_to_capture: 500 }, { 'idempotency-key': 'capture_2' });
    expect(newCapture.status).toBe(409);
    expect(newCapture.body.error?.code).toBe('invalid_state');
  });

  it('refuses a key used for one route on another route', async () => {
    const key = newKey();
    const headers = { 'idempotency-key': 'reused_key' };
    const { body: payment } = await create(key, { capture_method: 'manual' }, {}, headers);
    const answer = await capture(key, payment.id, {}, headers);
    expect(answer.status).toBe(409);
    expect(answer.body.error?.code).toBe('idempotency_mismatch');
    expect((await get(key, payment.id)).body.status).toBe('requires_capture');
  });

  it('refuses an Idempotency-Key longer than 255 characters with 400 naming it', async () => {
    const answer = await create(newKey(), {}, {}, { 'idempotency-key': 'k'.repeat(256) });
    expect(answer.status).toBe(400);
    expect(answer.body.error?.message).toContain('Idempotency-Key');
    const longest = await create(newKey(), {}, {}, { 'idempotency-key': 'k'.repeat(255) });
    expect(longest.status).toBe(200);
  });
});

describe('manual capture', () => {
  it('captures the whole amount by default', async () => {
    const key = newKey();
    const created = await create(key, { capture_method: 'manual' });
    expect(created.body).toMatchObject({ status: 'requires_capture', amount_capturable: 1234, amount_captured: 0 });
    const captured = await capture(key, created.body.id);
    expect(captured.status).toBe(200);
    expect(captured.body).toMatchObject({ status: 'succeeded', amount_capturable: 0, amount_captured: 1234 });
    expect(captured.body.updated_ms).toBeGreaterThan(created.body.updated_ms);
    expect((await get(key, created.body.id)).body).toEqual(captured.body);
  });

  it('captures part of the amount and releases the rest; a second capture is refused with 409 naming the status', async () => {
    const key = newKey();
    const created = await create(key, { capture_method: 'manual', amount: 1000 });
    const captured = await capture(key, created.body.id, { amount_to_capture: 400 });
    expect(captured.body).toMatchObject({ status: 'succeeded', amount: 1000, amount_captured: 400, amount_capturable: 0 });
    const twice = await capture(key, created.body.id);
    expect(twice.status).toBe(409);
    expect(twice.body.error?.code).toBe('invalid_state');
    expect(twice.body.error?.message).toContain('succeeded');
  });

  it.each([
    ['0', 0],
    ['above the capturable amount', 1235],
    ['not an integer', 10.5],
  ])('refuses amount_to_capture %s with 400 naming the field, leaving the payment capturable', async (_label, amount) => {
    const key = newKey();
    const created = await create(key, { capture_method: 'manual' });
    const answer = await capture(key, created.body.id, { amount_to_capture: amount });
    expect(answer.status).toBe(400);
    expect(answer.body.error?.code).toBe('invalid_request');
    expect(answer.body.error?.message).toMatch(/^amount_to_capture /);
    expect((await get(key, created.body.id)).body).toMatchObject({ status: 'requires_capture', amount_capturable: 1234 });
  });

  it('refuses to capture an automatic payment that already succeeded', async () => {
    const key = newKey();
    const created = await create(key);
    const answer = await capture(key, created.body.id);
    expect(answer.status).toBe(409);
    expect(answer.body.error?.code).toBe('invalid_state');
  });
});

describe('cancel', () => {
  const setups: [string, (key: string) => Promise<Body>][] = [
    ['requires_capture', async (key) => (await create(key, { capture_method: 'manual' })).body],
    ['requires_device_data', (key) => challenged(key)],
    [
      'requires_authentication',
      async (key) => {
        const payment = await challenged(key);
        await browser('GET', `/challenge/${payment.id}`);
        return (await get(key, payment.id)).body;
      },
    ],
  ];

  it.each(setups)('cancels a payment in %s, and cancelling again answers the same canceled payment', async (status, setup) => {
    const key = newKey();
    const payment = await setup(key);
    expect(payment.status).toBe(status);
    const canceled = await cancel(key, payment.id);
    expect(canceled.status).toBe(200);
    expect(canceled.body).toMatchObject({ status: 'canceled', amount_capturable: 0, amount_captured: 0, canceled_after_capture: false, next_action: null });
    const again = await cancel(key, payment.id);
    expect(again.status).toBe(200);
    expect(again.body).toEqual(canceled.body);
    // The customer can no longer authenticate it.
    expect((await browser('POST', `/challenge/${payment.id}/complete`)).status).toBe(409);
    expect((await get(key, payment.id)).body.status).toBe('canceled');
  });

  // A succeeded card payment is voided instead (partial-and-void.test.ts).
  it.each([['failed', '4000000000000002', 402]])('refuses to cancel a %s payment with 409 invalid_state', async (status, number, http) => {
    const key = newKey();
    const created = await create(key, {}, { number });
    expect(created.status).toBe(http);
    const answer = await cancel(key, created.body.id);
    expect(answer.status).toBe(409);
    expect(answer.body.error?.code).toBe('invalid_state');
    expect(answer.body.error?.message).toContain(status);
    expect((await get(key, created.body.id)).body.status).toBe(status);
  });
});

describe('3D Secure', () => {
  it('runs the whole challenge: device data, the page, completion, the redirect back', async () => {
    const key = newKey();
    const created = await challenged(key, {}, { holder_name: '<script>alert("x")</script>' });
    expect(created.amount_capturable).toBe(0);
    expect(created.next_action).toEqual({ type: 'redirect', redirect_url: `${url()}/challenge/${created.id}` });

    const page = await browser('GET', `/challenge/${created.id}`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(page.text).toMatch(/<h1>[^<]+<\/h1>/);
    expect(page.text).toContain('Complete authentication');
    expect(page.text).toContain('Fail authentication');
    expect(page.text).toContain(`action="${created.id}/complete"`);
    expect(page.text).toContain(`action="${created.id}/fail"`);
    expect(page.text).toContain('3155');
    expect(page.text).toContain('$12.34');
    expect(page.text).toContain('&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;');
    expect(page.text).not.toContain('<script>');

    const waiting = await get(key, created.id);
    expect(waiting.body.status).toBe('requires_authentication');
    expect(waiting.body.next_action).toEqual(created.next_action);
    expect(waiting.body.updated_ms).toBeGreaterThan(created.updated_ms);

    const completed = await browser('POST', `/challenge/${created.id}/complete`);
    expect(completed.status).toBe(303);
    expect(completed.headers.get('location')).toBe(RETURN_URL);

    const done = await get(key, created.id);
    expect(done.body).toMatchObject({ status: 'succeeded', amount_captured: 1234, amount_capturable: 0, next_action: null, error: null });

    // Afterwards the page and its forms refuse, and the payment stays as it is.
    const pageAfter = await browser('GET', `/challenge/${created.id}`);
    expect(pageAfter.status).toBe(409);
    expect(pageAfter.text).toContain('no longer awaiting authentication');
    expect((await browser('POST', `/challenge/${created.id}/fail`)).status).toBe(409);
    expect((await get(key, created.id)).body).toEqual(done.body);
  });

  it('fails the payment when the customer fails authentication', async () => {
    const key = newKey();
    const created = await challenged(key);
    await browser('GET', `/challenge/${created.id}`);
    const failed = await browser('POST', `/challenge/${created.id}/fail`);
    expect(failed.status).toBe(303);
    expect(failed.headers.get('location')).toBe(RETURN_URL);
    const payment = (await get(key, created.id)).body;
    expect(payment).toMatchObject({ status: 'failed', amount_captured: 0, amount_capturable: 0, next_action: null });
    expect(payment.error).toEqual({ code: 'authentication_failed', message: 'The customer failed 3D Secure authentication.', retryable: false });
  });

  it('ends a manual-capture challenge in requires_capture, which can then be captured', async () => {
    const key = newKey();
    const created = await challenged(key, { capture_method: 'manual' });
    // Completing straight from requires_device_data is allowed too.
    expect((await browser('POST', `/challenge/${created.id}/complete`)).status).toBe(303);
    expect((await get(key, created.id)).body).toMatchObject({ status: 'requires_capture', amount_capturable: 1234, amount_captured: 0 });
    expect((await capture(key, created.id)).body).toMatchObject({ status: 'succeeded', amount_captured: 1234 });
  });

  it('challenges any approved card when three_ds is "required", but a decline is not challenged', async () => {
    const required = await create(newKey(), { three_ds: 'required' });
    expect(required.status).toBe(200);
    expect(required.body.status).toBe('requires_device_data');
    expect(required.body.next_action?.type).toBe('redirect');

    const declined = await create(newKey(), { three_ds: 'required' }, { number: '4000000000000002' });
    expect(declined.status).toBe(402);
    expect(declined.body.next_action).toBeNull();
  });

  it('shows the amount in the currency of the payment', async () => {
    const created = await challenged(newKey(), { currency: 'JPY', amount: 1234 });
    const page = await browser('GET', `/challenge/${created.id}`);
    expect(page.text).toContain('¥1,234');
  });

  it('answers 404 for an unknown challenge, and for a challenge route with the wrong method', async () => {
    const unknown = await browser('GET', '/challenge/sbx_pay_000000000000000000000000');
    expect(unknown.status).toBe(404);
    expect(unknown.text).toContain('Payment not found');
    expect((await browser('POST', '/challenge/sbx_pay_000000000000000000000000/complete')).status).toBe(404);
    const created = await challenged(newKey());
    expect((await browser('GET', `/challenge/${created.id}/complete`)).status).toBe(404);
  });

  it('builds challenge URLs from publicUrl', async () => {
    const behindProxy = await startSandbox({ port: 0, publicUrl: 'https://sandbox.example/psp/' });
    try {
      const created = await call('POST', '/v1/payments', { body: paymentInput({ three_ds: 'required' }), base: behindProxy.url });
      expect(created.body.next_action?.redirect_url).toBe(`https://sandbox.example/psp/challenge/${created.body.id}`);
    } finally {
      await behindProxy.close();
    }
  });
});

describe('bad requests', () => {
  it('refuses malformed JSON with 400 invalid_request', async () => {
    const answer = await call('POST', '/v1/payments', { rawBody: '{"amount": 12' });
    expect(answer.status).toBe(400);
    expect(answer.body.error?.code).toBe('invalid_request');
  });

  it.each([
    ['amount', { amount: 0 }, {}],
    ['amount', { amount: 12.5 }, {}],
    ['amount', { amount: '1234' }, {}],
    ['currency', { currency: 'us' }, {}],
    ['capture_method', { capture_method: 'later' }, {}],
    ['three_ds', { three_ds: 'maybe' }, {}],
    ['return_url', { return_url: '/relative' }, {}],
    ['return_url', { return_url: 'javascript:alert(1)' }, {}],
    ['return_url', { return_url: undefined }, {}],
    ['reference', { reference: 42 }, {}],
    ['card.number', {}, { number: '4242 4242' }],
    ['card.exp_month', {}, { exp_month: 13 }],
    ['card.exp_year', {}, { exp_year: 30 }],
    ['card.cvc', {}, { cvc: '12' }],
    ['card.cvc', {}, { cvc: undefined }],
    ['amonut', { amonut: 5 }, {}],
  ])('refuses a bad %s with 400 naming it', async (field, overrides, card) => {
    const answer = await create(newKey(), overrides, card);
    expect(answer.status).toBe(400);
    expect(answer.body.error?.code).toBe('invalid_request');
    expect(answer.body.error?.message.startsWith(`${field} `)).toBe(true);
  });

  it('refuses a body that is not an object', async () => {
    const answer = await call('POST', '/v1/payments', { rawBody: '[1, 2]' });
    expect(answer.status).toBe(400);
    expect(answer.body.error?.code).toBe('invalid_request');
  });

  it('refuses a body over 64 KB with 413, and accepts one just under', async () => {
    const padded = (size: number) => {
      const body = JSON.stringify(paymentInput({ reference: '' }));
      return JSON.stringify(paymentInput({ reference: 'r'.repeat(size - body.length) }));
    };
    const tooLarge = await call('POST', '/v1/payments', { rawBody: padded(64 * 1024 + 1) });
    expect(tooLarge.status).toBe(413);
    expect(tooLarge.body.error?.code).toBe('payload_too_large');
    const justUnder = await call('POST', '/v1/payments', { rawBody: padded(64 * 1024) });
    expect(justUnder.status).toBe(200);
  });

  it('refuses an oversized chunked body (no Content-Length) with 413', async () => {
    const answer = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const request = httpRequest(`${url()}/v1/payments`, {
        method: 'POST',
        headers: { authorization: `Bearer ${newKey()}`, 'content-type': 'application/json', 'transfer-encoding': 'chunked' },
      });
      request.on('response', (response) => {
        let body = '';
        response.on('data', (chunk: Buffer) => (body += chunk.toString()));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
      });
      request.on('error', reject);
      request.write(`{"reference":"${'x'.repeat(40_000)}`);
      request.write(`${'y'.repeat(40_000)}"}`);
      request.end();
    });
    expect(answer.status).toBe(413);
    expect(JSON.parse(answer.body).error.code).toBe('payload_too_large');
  });
});

describe('latency', () => {
  let slow: Sandbox;

  beforeAll(async () => {
    slow = await startSandbox({ port: 0, latencyMs: 300 });
  });

  afterAll(async () => {
    await slow.close();
  });

  it('delays every /v1 answer by latencyMs, refusals included', async () => {
    const key = newKey();
    const created = await call('POST', '/v1/payments', { key, body: paymentInput({ three_ds: 'required' }), base: slow.url });
    expect(created.status).toBe(200);
    expect(created.ms).toBeGreaterThanOrEqual(300);
    const fetched = await call('GET', `/v1/payments/${created.body.id}`, { key, base: slow.url });
    expect(fetched.status).toBe(200);
    expect(fetched.ms).toBeGreaterThanOrEqual(300);
    const refused = await call('GET', '/v1/payments/x', { key: null, base: slow.url });
    expect(refused.status).toBe(401);
    expect(refused.ms).toBeGreaterThanOrEqual(300);

    // The customer's pages are not delayed.
    const page = await call('GET', `/challenge/${created.body.id}`, { key: null, base: slow.url });
    expect(page.status).toBe(200);
    expect(page.ms).toBeLessThan(300);
  });

  it('lets x-sandbox-latency-ms override the configured latency for one request', async () => {
    const fast = await call('POST', '/v1/payments', { body: paymentInput(), base: slow.url, headers: { 'x-sandbox-latency-ms': '0' } });
    expect(fast.status).toBe(200);
    expect(fast.ms).toBeLessThan(300);
    const slowed = await call('POST', '/v1/payments', { body: paymentInput(), headers: { 'x-sandbox-latency-ms': '300' } });
    expect(slowed.status).toBe(200);
    expect(slowed.ms).toBeGreaterThanOrEqual(300);
  });

  it.each(['30001', '-1', 'soon'])('refuses x-sandbox-latency-ms: %s with 400 naming the header', async (value) => {
    const answer = await call('POST', '/v1/payments', { body: paymentInput(), headers: { 'x-sandbox-latency-ms': value } });
    expect(answer.status).toBe(400);
    expect(answer.body.error?.message).toMatch(/^x-sandbox-latency-ms /);
  });

  it('has created the payment even when the caller gave up waiting, so a retry with its key finds it', async () => {
    const key = newKey();
    const headers = { 'idempotency-key': 'att_timeout_1' };
    const body = paymentInput({ reference: 'att_timeout_1' });
    await expect(call('POST', '/v1/payments', { key, body, headers, base: slow.url, signal: AbortSignal.timeout(50) })).rejects.toThrow();
    const retried = await call('POST', '/v1/payments', { key, body, headers: { ...headers, 'x-sandbox-latency-ms': '0' }, base: slow.url });
    expect(retried.status).toBe(200);
    expect(retried.headers.get('idempotent-replayed')).toBe('true');
    expect(retried.body).toMatchObject({ status: 'succeeded', reference: 'att_timeout_1' });
  });
});
