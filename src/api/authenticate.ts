// Authentication of every API request (GraphQL over HTTP and WebSocket, REST routes) by API key or dashboard session,
// within the failed-authentication limit per client IP (docs/reliability.md).
import { parseApiKey } from '../kernel/api-keys.ts';
import { AppError } from '../kernel/errors.ts';
import type { Principal } from '../kernel/principal.ts';
import { CONNECTED_MERCHANT_HEADER, type ApiKeyService } from '../modules/merchants/index.ts';
import type { Services } from '../modules/services.ts';
import type { RateLimits } from '../platform/rate-limits.ts';

/**
 * The request's principal (the connected merchant a platform's key names with `X-Connected-Merchant-Id`, when it
 * sends one: ApiKeyService.actingFor), with failed authentications limited per client IP. A key that authenticates as
 * a secret key or the admin key is served whatever its IP did. Anything else from an IP over the limit is
 * refused: no key or a publishable one before it is looked up, a wrong key when it fails; every failure is
 * counted.
 */
export async function authenticateWithinLimits(
  apiKeys: ApiKeyService,
  limits: RateLimits,
  presented: { key: string | null; connectedMerchantId: string | null },
  clientIp: string,
): Promise<Principal> {
  if (presented.key === null || parseApiKey(presented.key)?.type === 'PUBLISHABLE') await limits.refuseIfReached('failedAuthentications', clientIp);
  let principal: Principal;
  try {
    principal = await apiKeys.authenticate(presented.key);
  } catch (error) {
    if (error instanceof AppError && error.code === 'UNAUTHENTICATED') await limits.consume('failedAuthentications', clientIp);
    throw error;
  }
  return apiKeys.actingFor(principal, presented.connectedMerchantId);
}

/** The dashboard session's cookie (docs/dashboard.md, "Sessions"). */
export const SESSION_COOKIE = 'dashboard_session';

/** The header (and graphql-ws `csrfToken` connection parameter) every cookie-authenticated request carries. */
export const CSRF_HEADER = 'X-CSRF-Token';

/** The session token in a Cookie header, or null. */
export function sessionTokenOf(cookieHeader: string | null | undefined): string | null {
  for (const part of (cookieHeader ?? '').split(';')) {
    const [name, ...value] = part.split('=');
    if (name?.trim() === SESSION_COOKIE) return value.join('=').trim() || null;
  }
  return null;
}

/** What a request presents: an API key (and the merchant it acts for), or else a session cookie and its CSRF token. */
export interface PresentedCredentials {
  key: string | null;
  connectedMerchantId: string | null;
  sessionToken: string | null;
  csrfToken: string | null;
}

/**
 * The request's principal: its API key's when it sends one (a key always wins, so a browser's cookie never changes what
 * a backend's request does), else its dashboard session's, which needs the session's CSRF token (compared in constant
 * time, before the session is looked up); anonymous without either. A failed session counts as a failed authentication.
 */
export async function authenticateRequest(
  services: Pick<Services, 'apiKeys' | 'team'>,
  limits: RateLimits,
  presented: PresentedCredentials,
  clientIp: string,
): Promise<Principal> {
  if (presented.key !== null || presented.sessionToken === null) return authenticateWithinLimits(services.apiKeys, limits, presented, clientIp);
  if (presented.connectedMerchantId !== null) {
    throw new AppError('FORBIDDEN', `${CONNECTED_MERCHANT_HEADER}: only a platform's secret key may act for a connected merchant.`, {
      field: CONNECTED_MERCHANT_HEADER,
    });
  }
  await limits.refuseIfReached('failedAuthentications', clientIp);
  if (!services.team.csrfMatches(presented.sessionToken, presented.csrfToken)) {
    throw new AppError('FORBIDDEN', `${CSRF_HEADER}: a request signed in with the dashboard's cookie must carry its session's CSRF token.`, {
      field: CSRF_HEADER,
    });
  }
  try {
    return await services.team.authenticate(presented.sessionToken);
  } catch (error) {
    if (error instanceof AppError && error.code === 'UNAUTHENTICATED') await limits.consume('failedAuthentications', clientIp);
    throw error;
  }
}
