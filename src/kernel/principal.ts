// Who is calling. Resolved once per request from the `api-key` or `Authorization: Bearer` header.
import type { Mode } from './api-keys.ts';
import { AppError } from './errors.ts';

export type Principal =
  | { kind: 'anonymous' }
  | { kind: 'admin' }
  | { kind: 'secretKey'; merchantId: string; mode: Mode; keyId: string }
  | { kind: 'publishableKey'; merchantId: string; mode: Mode; keyId: string };

export type MerchantPrincipal = Extract<Principal, { merchantId: string }>;

/** Narrows to a principal that acts for a merchant (scope-auth has already checked which kind). */
export function requireMerchant(principal: Principal): MerchantPrincipal {
  if (principal.kind === 'secretKey' || principal.kind === 'publishableKey') return principal;
  throw new AppError(principal.kind === 'anonymous' ? 'UNAUTHENTICATED' : 'FORBIDDEN', 'This operation needs a merchant API key.');
}

export type SecretKeyPrincipal = Extract<Principal, { kind: 'secretKey' }>;

/** Narrows to a secret key (scope-auth has already checked it; this keeps the types honest). */
export function requireSecretKey(principal: Principal): SecretKeyPrincipal {
  if (principal.kind === 'secretKey') return principal;
  throw new AppError(principal.kind === 'anonymous' ? 'UNAUTHENTICATED' : 'FORBIDDEN', 'This operation needs a secret API key.');
}
