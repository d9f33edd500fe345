// GET /payments/{payment_id}/redirect/response/{connector}: where a processor sends the customer back after
// 3D Secure or a redirect. Syncs the payment, then redirects to the merchant's return_url with payment_id
// and status; without a return_url, a small page shows the status.
import type { ServerResponse } from 'node:http';
import { isConnectorName } from '../connectors/registry.ts';
import { AppError, ERROR_CODES } from '../domain/errors.ts';
import { isId } from '../domain/ids.ts';
import type { Services } from '../services/create-services.ts';
import { sendJson } from './node-bridge.ts';

export const REDIRECT_RESPONSE_ROUTE = /^\/payments\/([^/]+)\/redirect\/response\/([^/]+)$/;

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);

export async function handleRedirectResponse(services: Services, match: RegExpExecArray, reply: ServerResponse): Promise<void> {
  // The path comes from anyone's browser: only a payment id and a connector name are looked up.
  const [, paymentId = '', connector = ''] = match;
  if (!isId('payment', paymentId) || !isConnectorName(connector)) {
    sendJson(reply, 404, { error: { code: 'NOT_FOUND', message: 'No such payment redirect.' } });
    return;
  }
  try {
    const { payment, location } = await services.payments.returnFromRedirect(paymentId, connector);
    if (location) {
      reply.writeHead(302, { location, 'cache-control': 'no-store' });
      reply.end();
      return;
    }
    const status = payment.status.toLowerCase();
    const html = `<!doctype html><html lang="en"><meta charset="utf-8"><title>Payment ${escapeHtml(status)}</title><main><h1>Payment ${escapeHtml(status)}</h1><p>Payment ${escapeHtml(payment.id)} is ${escapeHtml(status)}. You can close this page.</p></main></html>`;
    reply.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
    reply.end(html);
  } catch (error) {
    if (!(error instanceof AppError)) throw error;
    sendJson(reply, ERROR_CODES[error.code].httpStatus, { error: { code: error.code, message: error.message } });
  }
}
