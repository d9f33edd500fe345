// The REST routes of connector webhooks, outside GraphQL:
// - POST /webhooks/{merchant_id}/{merchant_connector_id}: a processor's callback. The raw body is read
//   (bounded) before anything parses it, since the signature covers the exact bytes.
// - POST /account/{account_id}/webhooks/{merchant_connector_id}: registers this service's callback URL at
//   the processor (the merchant's secret key).
import type { IncomingMessage, ServerResponse } from 'node:http';
import { AppError, ERROR_CODES, errorBody } from '../../kernel/errors.ts';
import { presentedCredentials } from '../yoga.ts';
import { authenticateWithinLimits } from '../authenticate.ts';
import type { RateLimits } from '../../platform/rate-limits.ts';
import type { Services } from '../../modules/services.ts';
import { requireSecretKey } from '../../kernel/principal.ts';
import { BodyTooLargeError, readBody, sendJson, toFetchHeaders } from '../../platform/http/node-bridge.ts';

export const CALLBACK_ROUTE = /^\/webhooks\/([^/]+)\/([^/]+)$/;
export const REGISTRATION_ROUTE = /^\/account\/([^/]+)\/webhooks\/([^/]+)$/;

/** Processors' callbacks are small; a larger body is refused before it is read to the end. */
export const MAX_CALLBACK_BYTES = 256 * 1024;

export async function handleCallback(services: Services, match: RegExpExecArray, request: IncomingMessage, reply: ServerResponse): Promise<void> {
  const [, merchantId = '', connectorAccountId = ''] = match;
  let rawBody: Buffer;
  try {
    rawBody = await readBody(request, MAX_CALLBACK_BYTES);
  } catch (error) {
    if (!(error instanceof BodyTooLargeError)) throw error;
    return sendJson(reply, 413, errorBody('PAYLOAD_TOO_LARGE', `A callback body is at most ${MAX_CALLBACK_BYTES} bytes.`));
  }
  const headers: Record<string, string | undefined> = {};
  for (const [name, value] of Object.entries(request.headers)) headers[name] = Array.isArray(value) ? value.join(', ') : value;
  const answer = await services.connectorCallbacks.receive({ merchantId, connectorAccountId, rawBody, headers });
  if (answer.text === undefined) return sendJson(reply, answer.status, answer.body);
  reply.writeHead(answer.status, { 'content-type': 'text/plain; charset=utf-8' });
  reply.end(answer.text);
}

export async function handleRegistration(
  { services, limits, clientIp }: { services: Services; limits: RateLimits; clientIp: string },
  match: RegExpExecArray,
  request: IncomingMessage,
  reply: ServerResponse,
): Promise<void> {
  const [, accountId = '', connectorAccountId = ''] = match;
  try {
    // No body is needed; one is read (bounded) and ignored so the connection stays usable.
    await readBody(request, 16 * 1024);
    // As every API request: within the failed-authentication limit, and as the connected merchant a platform names.
    const presented = presentedCredentials(toFetchHeaders(request));
    const principal = requireSecretKey(await authenticateWithinLimits(services.apiKeys, limits, presented, clientIp));
    const registered = await services.connectorCallbacks.register(principal, accountId, connectorAccountId);
    sendJson(reply, 200, {
      merchant_connector_id: registered.merchantConnectorId,
      connector_name: registered.connectorName,
      webhook_url: registered.webhookUrl,
      connector_webhook_id: registered.connectorWebhookId,
      registered_at: registered.registeredAt.toISOString(),
    });
  } catch (error) {
    if (error instanceof BodyTooLargeError) return sendJson(reply, 413, errorBody('PAYLOAD_TOO_LARGE', 'The request body is too large.'));
    if (!(error instanceof AppError)) throw error;
    sendJson(reply, ERROR_CODES[error.code].httpStatus, errorBody(error.code, error.message));
  }
}
