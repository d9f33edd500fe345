// The public side of payment links (no key: the link's id is the capability, as its URL is shared):
//   GET  /payment-links/{id}           the link's page (HTML), or its details as JSON (Accept: application/json)
//   POST /payment-links/{id}/payments  one use: a new payment, answered with its id, client secret and the
//                                      merchant's publishable key, which open the hosted checkout
// An expired or deactivated link answers 410 Gone. Uses are rate limited per client IP and per link, and a
// link whose payments were declined too often takes no more uses for a while (card testing). The page (served
// like the checkout: its script is /assets/payment-link.js) runs the POST and opens the checkout; the customer
// comes back to the link's page (the payment's return_url), whose script reads the payment's status from the API.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { AppError, ERROR_CODES, errorBody, headersOf } from '../../kernel/errors.ts';
import { formatMinor } from '../../kernel/money.ts';
import type { PaymentLink } from '../../generated/prisma/client.ts';
import type { Services } from '../../modules/services.ts';
import type { RateLimits } from '../../platform/rate-limits.ts';
import { BodyTooLargeError, readBody, sendJson } from '../../platform/http/node-bridge.ts';
import { escapeHtml, page, sendPage } from '../web-pages.ts';

export const PAYMENT_LINK_ROUTE = /^\/payment-links\/([^/]+)(\/payments)?$/;

const MAX_PAY_BODY_BYTES = 2048;

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

function linkPage(link: PaymentLink): string {
  const price =
    link.amount !== null
      ? formatMinor(link.amount, link.currency)
      : `${formatMinor(link.minAmount!, link.currency)} to ${formatMinor(link.maxAmount!, link.currency)}`;
  const title = escapeHtml(link.description ?? 'Payment');
  const amountField =
    link.amount === null
      ? `<label>Amount (minor units, ${link.minAmount} to ${link.maxAmount}) <input name="amount" type="number" min="${link.minAmount}" max="${link.maxAmount}" required></label>`
      : '';
  return page(
    title,
    'checkout',
    `<h1>${title}</h1><p>${escapeHtml(price)}</p><p id="returned" role="status"></p>
<form id="pay">${amountField}
<button type="submit">Pay</button></form><p id="status" role="status"></p><p>Valid until ${escapeHtml(link.expiresAt.toISOString())}.</p>`,
    '/assets/payment-link.js',
  );
}

/** Whether a refusal means the link is gone for good (expired or deactivated): 410 rather than 409. */
const GONE = new Set(['EXPIRED', 'INACTIVE']);

/** Refuses a use from an IP that failed to authenticate too often, or of a link declined too often; counts it per IP and per link. */
async function admitUse(limits: RateLimits, linkId: string, clientIp: string): Promise<void> {
  await limits.refuseIfReached('failedAuthentications', clientIp);
  await limits.refuseIfReached('declinesPerLink', linkId);
  await limits.consume('linkUsesPerIp', clientIp);
  await limits.consume('linkUsesPerLink', linkId);
}

export async function handlePaymentLink(
  { services, limits, clientIp }: { services: Services; limits: RateLimits; clientIp: string },
  match: RegExpExecArray,
  request: IncomingMessage,
  reply: ServerResponse,
): Promise<void> {
  const [, linkId = '', action] = match;
  try {
    if (action === '/payments' && request.method === 'POST') {
      await admitUse(limits, linkId, clientIp);
      const body = (await readBody(request, MAX_PAY_BODY_BYTES)).toString('utf8');
      let input: unknown;
      try {
        input = body.trim() === '' ? {} : JSON.parse(body);
      } catch {
        throw new AppError('INVALID_INPUT', 'The body must be JSON.', { field: '(body)' });
      }
      const created = await services.paymentLinks.pay(linkId, input);
      return sendJson(reply, 201, {
        payment_id: created.paymentId,
        client_secret: created.clientSecret,
        publishable_key: created.publishableKey,
        amount: created.amount,
        currency: created.currency,
      });
    }
    if (!action && request.method === 'GET') {
      await limits.refuseIfReached('failedAuthentications', clientIp);
      const link = await services.paymentLinks.open(linkId);
      if ((request.headers.accept ?? '').includes('application/json')) return sendJson(reply, 200, linkJson(link));
      return sendPage(reply, 200, linkPage(link));
    }
    sendJson(reply, 405, errorBody('METHOD_NOT_ALLOWED', `Use ${action ? 'POST' : 'GET'} here.`));
  } catch (error) {
    if (error instanceof BodyTooLargeError)
      return sendJson(reply, 413, errorBody('PAYLOAD_TOO_LARGE', `The body must be at most ${MAX_PAY_BODY_BYTES} bytes.`));
    if (!(error instanceof AppError)) throw error;
    // An expired or deactivated link (or its expired payment) is gone; any other refusal keeps its own status.
    const status = error.code === 'INVALID_STATE' && GONE.has(String(error.details['status'])) ? 410 : ERROR_CODES[error.code].httpStatus;
    sendJson(reply, status, errorBody(error.code, error.message, error.details['field']), headersOf(error));
  }
}
