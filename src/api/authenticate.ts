// Authentication of every API request (GraphQL over HTTP and WebSocket, REST routes), within the failed-
// authentication limit per client IP (docs/reliability.md).
import { parseApiKey } from '../kernel/api-keys.ts';
import { AppError } from '../kernel/errors.ts';
import type { Principal } from '../kernel/principal.ts';
import type { ApiKeyService } from '../modules/merchants/index.ts';
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
