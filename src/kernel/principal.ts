// Who is calling. Resolved once per request from the `api-key` or `Authorization: Bearer` header, or the dashboard's
// session cookie.
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
      /**
       * Set when a dashboard user signed in acts through the merchant's secret access in the session's mode
       * (docs/dashboard.md): keyId is then the session's id (`ses_…`), and the role's permissions bound what it may call.
       */
      user?: DashboardUser;
    }
  | { kind: 'publishableKey'; merchantId: string; mode: Mode; keyId: string };

/** A dashboard user's role, most powerful first; what each may do is src/modules/team/roles.ts. */
export const ROLES = ['owner', 'admin', 'developer', 'viewer'] as const;

export type Role = (typeof ROLES)[number];

/** The signed-in dashboard user behind a session principal. */
export interface DashboardUser {
  id: string;
  email: string;
  role: Role;
  sessionId: string;
}

export type MerchantPrincipal = Extract<Principal, { merchantId: string }>;

export type SecretKeyPrincipal = Extract<Principal, { kind: 'secretKey' }>;

/** A dashboard session's principal: its merchant's secret access in the session's mode, as the signed-in user. */
export type SessionPrincipal = SecretKeyPrincipal & { user: DashboardUser };

/** The session principal `principal` is, or null for a key. */
export function sessionOf(principal: Principal): SessionPrincipal | null {
  return principal.kind === 'secretKey' && principal.user !== undefined ? (principal as SessionPrincipal) : null;
}

/** Narrows to a secret key or refuses the caller: for routes outside GraphQL, whose fields declare their scope with withAuth. */
export function requireSecretKey(principal: Principal): SecretKeyPrincipal {
  if (principal.kind === 'secretKey') return principal;
  throw new AppError(principal.kind === 'anonymous' ? 'UNAUTHENTICATED' : 'FORBIDDEN', 'This operation needs a secret API key.');
}
