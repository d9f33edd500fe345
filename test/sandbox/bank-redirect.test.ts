// Bank redirects over real HTTP: the payment waits in requires_authentication while the customer's browser
// is at the bank's page, whose Authorize and Fail buttons end it and return to the merchant.
import { describe, expect, it } from 'vitest';
import { startSandbox } from '../../sandbox/src/server.ts';
import { METHOD_DETAILS, RETURN_URL, methodInput, newKey, useSandbox, type Body } from './harness.ts';

const { url, call, createWith, get, capture, cancel, browser, challenged } = useSandbox();

async function redirected(key: string, overrides: Record<string, unknown> = {}): Promise<Body> {
  const created = await createWith(key, METHOD_DETAILS.bank_redirect, overrides);
  expect(created.status).toBe(200);
  expect(created.body.status).toBe('requires_authentication');
  return created.body;
}

// Written from the contract: what each of the bank page's buttons does to an automatic-capture payment.
const EXPECTED_BUTTONS: Record<string, Partial<Body>> = {
  authorize: { status: 'succeeded', amount_captured: 1234, error: null },
  fail: { status: 'failed', amount_captured: 0, error: { code: 'bank_authorization_failed', message: expect.any(String), retryable: false } },
};

describe('bank redirect', () => {
  it('answers requires_authentication with a redirect to the bank page, which shows the payment and two buttons', async () => {
    const created = await redirected(newKey(), { currency: 'EUR', amount: 2500 });
    expect(created).toMatchObject({
      payment_method_type: 'bank_redirect',
      card: null,
      bank_debit: null,
      amount_capturable: 0,
      amount_captured: 0,
      error: null,
    });
    expect(created.next_action).toEqual({ type: 'redirect', redirect_url: `${url()}/bank/${created.id}` });

    const page = await browser('GET', `/bank/${created.id}`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(page.headers.get('content-security-policy')).toContain("default-src 'none'");
    expect(page.text).toContain('€25.00');
    expect(page.text).toContain(`action="${created.id}/authorize"`);
    expect(page.text).toContain(`action="${created.id}/fail"`);
    expect(page.text).toMatch(/<button type="submit">Authorize<\/button>/);
    expect(page.text).toMatch(/<button type="submit">Fail<\/button>/);
    expect(page.text).not.toContain('<script');
  });

  it.each(Object.keys(EXPECTED_BUTTONS))('the %s button ends the payment and returns to return_url; afterwards the page refuses', async (button) => {
    const key = newKey();
    const created = await redirected(key);
    const pressed = await browser('POST', `/bank/${created.id}/${button}`);
    expect(pressed.status).toBe(303);
    expect(pressed.headers.get('location')).toBe(RETURN_URL);
    const done = await get(key, created.id);
    expect(done.body).toMatchObject({ ...EXPECTED_BUTTONS[button], amount_capturable: 0, next_action: null });
    expect(done.body.updated_ms).toBeGreaterThan(created.updated_ms);

    const pageAfter = await browser('GET', `/bank/${created.id}`);
    expect(pageAfter.status).toBe(409);
    expect(pageAfter.text).toContain('no longer awaiting authorization');
    for (const again of Object.keys(EXPECTED_BUTTONS)) expect((await browser('POST', `/bank/${created.id}/${again}`)).status).toBe(409);
    expect((await get(key, created.id)).body).toEqual(done.body);
  });

  it('ends a manual-capture payment in requires_capture, which can then be captured', async () => {
    const key = newKey();
    const created = await redirected(key, { capture_method: 'manual' });
    await browser('POST', `/bank/${created.id}/authorize`);
    expect((await get(key, created.id)).body).toMatchObject({ status: 'requires_capture', amount_capturable: 1234 });
    expect((await capture(key, created.id)).body).toMatchObject({ status: 'succeeded', amount_captured: 1234 });
  });

  it('can be canceled while at the bank, after which the bank page refuses', async () => {
    const key = newKey();
    const created = await redirected(key);
    const canceled = await cancel(key, created.id);
    expect(canceled.body).toMatchObject({ status: 'canceled', next_action: null });
    expect((await browser('POST', `/bank/${created.id}/authorize`)).status).toBe(409);
    expect((await get(key, created.id)).body.status).toBe('canceled');
  });

  it('keeps each page to its own payments: no bank page for a card payment, no challenge for a bank redirect', async () => {
    const key = newKey();
    const bankPayment = await redirected(key);
    const cardPayment = await challenged(key);
    for (const path of [`/challenge/${bankPayment.id}`, `/bank/${cardPayment.id}`]) expect((await browser('GET', path)).status).toBe(404);
    expect((await browser('POST', `/challenge/${bankPayment.id}/complete`)).status).toBe(404);
    expect((await browser('POST', `/bank/${cardPayment.id}/authorize`)).status).toBe(404);
    expect((await get(key, bankPayment.id)).body.status).toBe('requires_authentication');
    expect((await get(key, cardPayment.id)).body.status).toBe('requires_device_data');
  });

  it('answers 404 for an unknown payment, an unknown button, and a button pressed with GET', async () => {
    expect((await browser('GET', '/bank/sbx_pay_000000000000000000000000')).status).toBe(404);
    const created = await redirected(newKey());
    expect((await browser('POST', `/bank/${created.id}/complete`)).status).toBe(404);
    expect((await browser('GET', `/bank/${created.id}/authorize`)).status).toBe(404);
    expect((await browser('POST', `/bank/${created.id}/constructor`)).status).toBe(404);
  });

  it.each<[string, Record<string, unknown>]>([
    ['bank_redirect.bank', { payment_method_type: 'bank_redirect', bank_redirect: { bank: 'other_bank' } }],
    ['bank_redirect', { payment_method_type: 'bank_redirect' }],
  ])('refuses a bad %s with 400 naming it', async (field, method) => {
    const answer = await createWith(newKey(), method);
    expect(answer.status).toBe(400);
    expect(answer.body.error?.message.startsWith(`${field} `)).toBe(true);
  });

  it('builds the bank URL from publicUrl', async () => {
    const behindProxy = await startSandbox({ port: 0, publicUrl: 'https://sandbox.example/psp/' });
    try {
      const created = await call('POST', '/v1/payments', { body: methodInput(METHOD_DETAILS.bank_redirect), base: behindProxy.url });
      expect(created.body.next_action?.redirect_url).toBe(`https://sandbox.example/psp/bank/${created.body.id}`);
    } finally {
      await behindProxy.close();
    }
  });
});
