// GET or POST /payments/{payment_id}/redirect/response/{connector}?token=…: where a processor sends the customer back
// after 3D Secure or a redirect (Adyen adds its redirectResult, which finishes the payment there: in the query of a
// GET, or in the form of a POST when its action's method was POST; docs/connectors/adyen.md).
// The token is the one in the return URL the processor was given for the
// payment's active attempt: with it, the route syncs the payment, then redirects to the merchant's return_url
// with payment_id and status (without a return_url, a small page shows the status). Without it, the same 404
// page as for an unknown payment: nothing synced, nothing said about the payment.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { isConnectorName } from '../../modules/connectors/index.ts';
import { AppError, ERROR_CODES } from '../../kernel/errors.ts';
import { isId } from '../../kernel/ids.ts';
import type { Services } from '../../modules/services.ts';
import { escapeHtml, page, sendPage } from '../web-pages.ts';
import { BodyTooLargeError, readBody } from '../../platform/http/node-bridge.ts';

export const REDIRECT_RESPONSE_ROUTE = /^\/payments\/([^/]+)\/redirect\/response\/([^/]+)$/;

const NOT_FOUND_PAGE = page('Not found', 'checkout', '<h1>Not found</h1><p>This payment return address is not valid.</p>');

/** A returning form holds a redirectResult of a few kilobytes; a larger body is refused before it is read to the end. */
export const MAX_RETURN_FORM_BYTES = 64 * 1024;

export async function handleRedirectResponse(
  services: Services,
  match: RegExpExecArray,
  request: IncomingMessage,
  query: URLSearchParams,
  reply: ServerResponse,
): Promise<void> {
  let form: URLSearchParams;
  try {
    form = await returnForm(request);
  } catch (error) {
    if (!(error instanceof BodyTooLargeError)) throw error;
    return sendPage(reply, 413, page('Too large', 'checkout', '<h1>Too large</h1><p>This payment return is larger than any processor sends.</p>'));
  }
  // The path comes from anyone's browser: only a payment id and a connector name are looked up.
  const [, paymentId = '', connector = ''] = match;
  if (!isId('payment', paymentId) || !isConnectorName(connector)) return sendPage(reply, 404, NOT_FOUND_PAGE);
  try {
    // An empty field is no redirectResult: it must not hide the query's.
    const redirectResult = form.get('redirectResult') || query.get('redirectResult') || null;
    const { payment, location } = await services.payments.returnFromRedirect(paymentId, connector, query.get('token') ?? '', redirectResult);
    if (location) {
      // 303 after a POST: the browser goes on to the merchant's page with a GET (a 302 may repeat the POST).
      reply.writeHead(request.method === 'POST' ? 303 : 302, { location, 'cache-control': 'no-store', 'referrer-policy': 'no-referrer' });
      reply.end();
      return;
    }
    const status = escapeHtml(payment.status.toLowerCase());
    sendPage(
      reply,
      200,
      page(`Payment ${status}`, 'checkout', `<h1>Payment ${status}</h1><p>Payment ${escapeHtml(payment.id)} is ${status}. You can close this page.</p>`),
    );
  } catch (error) {
    if (!(error instanceof AppError)) throw error;
    if (error.code === 'NOT_FOUND') return sendPage(reply, 404, NOT_FOUND_PAGE);
    // The token was right: the customer may read why the payment could not be brought up to date.
    sendPage(
      reply,
      ERROR_CODES[error.code].httpStatus,
      page('Payment not updated', 'checkout', `<h1>Payment not updated</h1><p>${escapeHtml(error.message)}</p>`),
    );
  }
}

/** The form a processor POSTs the customer back with (browsers send it url-encoded); empty for a GET or another body. */
async function returnForm(request: IncomingMessage): Promise<URLSearchParams> {
  if (request.method !== 'POST') return new URLSearchParams();
  const body = await readBody(request, MAX_RETURN_FORM_BYTES);
  const contentType = request.headers['content-type']?.split(';')[0]?.trim().toLowerCase();
  return contentType === 'application/x-www-form-urlencoded' ? new URLSearchParams(body.toString('utf8')) : new URLSearchParams();
}
