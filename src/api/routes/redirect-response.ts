// GET /payments/{payment_id}/redirect/response/{connector}?token=…: where a processor sends the customer back
// (Adyen adds its redirectResult, which finishes the payment there)
// after 3D Secure or a redirect. The token is the one in the return URL the processor was given for the
// payment's active attempt: with it, the route syncs the payment, then redirects to the merchant's return_url
// with payment_id and status (without a return_url, a small page shows the status). Without it, the same 404
// page as for an unknown payment: nothing synced, nothing said about the payment.
import type { ServerResponse } from 'node:http';
import { isConnectorName } from '../../modules/connectors/index.ts';
import { AppError, ERROR_CODES } from '../../kernel/errors.ts';
import { isId } from '../../kernel/ids.ts';
import type { Services } from '../../modules/services.ts';
import { escapeHtml, page, sendPage } from '../web-pages.ts';

export const REDIRECT_RESPONSE_ROUTE = /^\/payments\/([^/]+)\/redirect\/response\/([^/]+)$/;

const NOT_FOUND_PAGE = page('Not found', 'checkout', '<h1>Not found</h1><p>This payment return address is not valid.</p>');

export async function handleRedirectResponse(services: Services, match: RegExpExecArray, query: URLSearchParams, reply: ServerResponse): Promise<void> {
  // The path comes from anyone's browser: only a payment id and a connector name are looked up.
  const [, paymentId = '', connector = ''] = match;
  if (!isId('payment', paymentId) || !isConnectorName(connector)) return sendPage(reply, 404, NOT_FOUND_PAGE);
  try {
    const { payment, location } = await services.payments.returnFromRedirect(paymentId, connector, query.get('token') ?? '', query.get('redirectResult'));
    if (location) {
      reply.writeHead(302, { location, 'cache-control': 'no-store', 'referrer-policy': 'no-referrer' });
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
