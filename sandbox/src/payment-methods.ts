// What a sandbox processor does with saved cards (payment methods) beyond paying with them (payments.ts): show
// one, and revoke it, by the merchant (its own API call) or by the customer's bank (the test helper), after
// which no payment may charge it, with its customer or off session. Like refunds.ts, everything here works on
// one personality's store for one API key; routes.ts reads the requests and render.ts shapes the answers.
import { invalidState, type RouteResult } from './payments.ts';
import { ApiError } from './requests.ts';
import type { SavedCard } from './resources.ts';
import type { SandboxStore } from './store.ts';

/** Who revokes a saved card: the merchant answers for itself, the customer's bank is heard of by callback. */
export type Revoker = 'merchant' | 'bank';

export function findPaymentMethod(store: SandboxStore, apiKey: string, token: string): SavedCard {
  const savedCard = store.findSavedCard(apiKey, token);
  if (!savedCard) throw new ApiError(404, 'resource_missing', `No payment method ${token}.`);
  return savedCard;
}

/**
 * Revokes a saved card for good. The merchant's revocation is its own call, answered with the change and no
 * callback, and asking again answers the card unchanged (like cancelling a canceled payment); the customer's
 * bank (`POST …/test_helpers/payment_methods/{token}/revoke`) is not the caller, so its change gets a callback,
 * and a card already revoked is a 409.
 */
export function revokePaymentMethod(store: SandboxStore, apiKey: string, token: string, by: Revoker): RouteResult {
  const savedCard = findPaymentMethod(store, apiKey, token);
  const revoked = { status: 'revoked' } as const;
  if (by === 'bank') {
    if (savedCard.status === 'revoked') throw invalidState(savedCard, 'revoked');
    return { httpStatus: 200, resource: store.updateAndNotify(savedCard, revoked) };
  }
  if (savedCard.status === 'revoked') return { httpStatus: 200, resource: savedCard };
  return { httpStatus: 200, resource: store.update(savedCard, revoked) };
}
