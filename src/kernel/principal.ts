// Who is calling. Resolved once per request from the `api-key` or `Authorization: Bearer` header.
import type { Mode } from './api-keys.ts';
import { AppError } from './errors.ts';

export type Principal =
  | { kind: 'anonymous' }
  | { kind: 'admin' }
  | {
      kind: 'secretKey';
      merchantId: string;
      mode: Mode;
      keyId: string;
      /** Set when a platform's key acts for `merchantId`, its connected merchant (docs/platforms.md): the platform's id. */
      platformMerchantId?: string;
    }
  | { kind: 'publishableKey'; merchantId: string; mode: Mode; keyId: string };

export type MerchantPrincipal = Extract<Principal, { merchantId: string }>;

export type SecretKeyPrincipal = Extract<Principal, { kind: 'secretKey' }>;

/** Narrows to a secret key or refuses the caller: for routes outside GraphQL, whose fields declare their scope with withAuth. */
export function requireSecretKey(principal: Principal): SecretKeyPrincipal {
  if (principal.kind === 'secretKey') return principal;
  throw new AppError(principal.kind === 'anonymous' ? 'UNAUTHENTICATED' : 'FORBIDDEN', 'This operation needs a secret API key.');
}
