// The public side of payment links (no key: the link's id is the capability, as its URL is shared):
//   GET  /payment-links/{id}           the link's page (HTML), or its details as JSON (Accept: application/json)
//   POST /payment-links/{id}/payments  one use: a new payment, answered with its id and client secret
// An expired link answers 410 Gone.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { AppError, ERROR_CODES } from '../domain/errors.ts';
import { formatMinor } from '../domain/money.ts';
import type { PaymentLink } from '../generated/prisma/client.ts';
import type { Services } from '../services/create-services.ts';
import { BodyTooLargeError, readBody, sendJson } from './node-bridge.ts';

export const PAYMENT_LINK_ROUTE = /^\/payment-links\/([^/]+)(\/payments)?$/;

const MAX_PAY_BODY_BYTES = 1024;
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

function linkPage(link: PaymentLink): string {
  const price =
    link.amount !== null ? formatMinor(link.amount, link.currency) : `${formatMinor(link.minAmount!, link.currency)} to ${formatMinor(link.maxAmount!, link.currency)}`;
  const title = escapeHtml(link.description ?? 'Payment');
  return `<!doctype html><html lang="en"><meta charset="utf-8"><title>${title}</title><main><h1>${title}</h1><p>${escapeHtml(price)} ${escapeHtml(link.currency)}</p><p>Valid until ${escapeHtml(link.expiresAt.toISOString())}.</p></main></html>`;
}

export async function handlePaymentLink(services: Services, match: RegExpExecArray, request: IncomingMessage, reply: ServerResponse): Promise<void> {
  const [, linkId = '', payments] = match;
  try {
    if (payments && request.method === 'POST') {
      const body = (await readBody(request, MAX_PAY_BODY_BYTES)).toString('utf8');
      let input: unknown;
      try {
        input = body.trim() === '' ? {} : JSON.parse(body);
      } catch {
        throw new AppError('INVALID_INPUT', 'The body must be JSON: {"amount": <minor units>} or {}.', { field: '(body)' });
      }
      const created = await services.paymentLinks.pay(linkId, input);
      return sendJson(reply, 201, { payment_id: created.paymentId, client_secret: created.clientSecret, amount: created.amount, currency: created.currency });
    }
    if (!payments && request.method === 'GET') {
      const link = await services.paymentLinks.open(linkId);
      if ((request.headers.accept ?? '').includes('application/json')) return sendJson(reply, 200, linkJson(link));
      reply.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
      reply.end(linkPage(link));
      return;
    }
    sendJson(reply, 405, { error: { code: 'METHOD_NOT_ALLOWED', message: `Use ${payments ? 'POST' : 'GET'} here.` } });
  } catch (error) {
    if (error instanceof BodyTooLargeError) return sendJson(reply, 413, { error: { code: 'PAYLOAD_TOO_LARGE', message: `The body must be at most ${MAX_PAY_BODY_BYTES} bytes.` } }, { connection: 'close' });
    if (!(error instanceof AppError)) throw error;
    const status = error.code === 'INVALID_STATE' ? 410 : ERROR_CODES[error.code].httpStatus;
    sendJson(reply, status, { error: { code: error.code, message: error.message, ...(error.details['field'] ? { field: error.details['field'] } : {}) } });
  }
}
