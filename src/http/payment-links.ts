// The public side of payment links (no key: the link's id is the capability, as its URL is shared):
//   GET  /payment-links/{id}           the link's page (HTML), or its details as JSON (Accept: application/json)
//   POST /payment-links/{id}/payments  one use: a new payment, answered with its id and client secret
//   POST /payment-links/{id}/confirm   the page's pay button: confirms that payment with the customer's card
// An expired link answers 410 Gone. The page itself runs the two POSTs, then follows a 3DS redirect if any;
// the customer comes back to the page, which shows the payment's status.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { AppError, ERROR_CODES } from '../domain/errors.ts';
import { formatMinor } from '../domain/money.ts';
import type { PaymentLink } from '../generated/prisma/client.ts';
import type { Services } from '../services/create-services.ts';
import { BodyTooLargeError, readBody, sendJson } from './node-bridge.ts';

export const PAYMENT_LINK_ROUTE = /^\/payment-links\/([^/]+)(\/payments|\/confirm)?$/;

const MAX_PAY_BODY_BYTES = 2048;
const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);

function linkJson(link: PaymentLink) {
  return {
    id: link.id,
    currency: link.currency,
    amount: link.amount,
    min_amount: link.minAmount,
    max_amount: link.maxAmount,
    description: link.description,
    expires_at: link.expiresAt.toISOString(),
  };
}

/** The page's script: create this use's payment, confirm it with the card, then follow a 3DS redirect or show the status. */
const PAY_SCRIPT = `
const form = document.getElementById('pay');
const status = document.getElementById('status');
const post = async (path, body) => {
  const answer = await fetch(location.pathname + path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const json = await answer.json();
  if (!answer.ok) throw new Error(json.error ? json.error.message : 'The payment failed.');
  return json;
};
form.addEventListener('submit', async (event) => {
  event.preventDefault();
  const data = new FormData(form);
  status.textContent = 'Paying…';
  try {
    const amount = data.get('amount');
    const payment = await post('/payments', amount ? { amount: Number(amount) } : {});
    const card = { number: data.get('number'), expiry_month: Number(data.get('expiry_month')), expiry_year: Number(data.get('expiry_year')), cvc: data.get('cvc') };
    const confirmed = await post('/confirm', { client_secret: payment.client_secret, card });
    if (confirmed.next_action) location.assign(confirmed.next_action.redirect_to_url);
    else status.textContent = 'Payment ' + confirmed.status.toLowerCase() + '.';
  } catch (error) {
    status.textContent = error.message;
  }
});`;

function linkPage(link: PaymentLink, returned: { paymentId: string; status: string } | null): string {
  const price =
    link.amount !== null ? formatMinor(link.amount, link.currency) : `${formatMinor(link.minAmount!, link.currency)} to ${formatMinor(link.maxAmount!, link.currency)}`;
  const title = escapeHtml(link.description ?? 'Payment');
  const amountField =
    link.amount === null
      ? `<label>Amount (minor units, ${link.minAmount} to ${link.maxAmount}) <input name="amount" type="number" min="${link.minAmount}" max="${link.maxAmount}" required></label>`
      : '';
  const back = returned ? `<p id="returned">Payment ${escapeHtml(returned.paymentId)} is ${escapeHtml(returned.status)}.</p>` : '';
  return `<!doctype html><html lang="en"><meta charset="utf-8"><title>${title}</title><main><h1>${title}</h1><p>${escapeHtml(price)} ${escapeHtml(link.currency)}</p>${back}
<form id="pay">${amountField}
<label>Card number <input name="number" autocomplete="cc-number" inputmode="numeric" required></label>
<label>Expiry month <input name="expiry_month" type="number" min="1" max="12" required></label>
<label>Expiry year <input name="expiry_year" type="number" min="2000" max="9999" required></label>
<label>CVC <input name="cvc" autocomplete="cc-csc" inputmode="numeric" required></label>
<button type="submit">Pay</button></form><p id="status" role="status"></p><p>Valid until ${escapeHtml(link.expiresAt.toISOString())}.</p>
<script>${PAY_SCRIPT}</script></main></html>`;
}

export async function handlePaymentLink(services: Services, match: RegExpExecArray, request: IncomingMessage, reply: ServerResponse): Promise<void> {
  const [, linkId = '', action] = match;
  try {
    if (action && request.method === 'POST') {
      const body = (await readBody(request, MAX_PAY_BODY_BYTES)).toString('utf8');
      let input: unknown;
      try {
        input = body.trim() === '' ? {} : JSON.parse(body);
      } catch {
        throw new AppError('INVALID_INPUT', 'The body must be JSON.', { field: '(body)' });
      }
      if (action === '/payments') {
        const created = await services.paymentLinks.pay(linkId, input);
        return sendJson(reply, 201, { payment_id: created.paymentId, client_secret: created.clientSecret, amount: created.amount, currency: created.currency });
      }
      const payment = await services.paymentLinks.confirm(linkId, input);
      const action3ds = payment.status === 'REQUIRES_CUSTOMER_ACTION' && payment.activeAttempt.redirectUrl ? { redirect_to_url: payment.activeAttempt.redirectUrl } : null;
      return sendJson(reply, 200, { payment_id: payment.id, status: payment.status, next_action: action3ds });
    }
    if (!action && request.method === 'GET') {
      const link = await services.paymentLinks.open(linkId);
      if ((request.headers.accept ?? '').includes('application/json')) return sendJson(reply, 200, linkJson(link));
      // Back from 3D Secure: the redirect route added the payment and its status.
      const query = new URL(request.url ?? '/', 'http://link').searchParams;
      const paymentId = query.get('payment_id');
      const returned = paymentId && query.get('status') ? { paymentId, status: query.get('status')! } : null;
      reply.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
      reply.end(linkPage(link, returned));
      return;
    }
    sendJson(reply, 405, { error: { code: 'METHOD_NOT_ALLOWED', message: `Use ${action ? 'POST' : 'GET'} here.` } });
  } catch (error) {
    if (error instanceof BodyTooLargeError) return sendJson(reply, 413, { error: { code: 'PAYLOAD_TOO_LARGE', message: `The body must be at most ${MAX_PAY_BODY_BYTES} bytes.` } }, { connection: 'close' });
    if (!(error instanceof AppError)) throw error;
    // An expired link (or its expired payment) is gone; any other refusal keeps its own status.
    const status = error.code === 'INVALID_STATE' && error.details['status'] === 'EXPIRED' ? 410 : ERROR_CODES[error.code].httpStatus;
    sendJson(reply, status, { error: { code: error.code, message: error.message, ...(error.details['field'] ? { field: error.details['field'] } : {}) } });
  }
}
