// What a sandbox processor does with payouts: money the merchant sends to a card or a bank account, which the
// processor moves along by itself as the destination's test row says (sent, then paid or failed; or expired),
// which the merchant may cancel while it is pending, and which the destination's bank may send back once paid
// (the test helper). Like refunds.ts, everything here works on one personality's store for one API key;
// routes.ts reads the requests and render.ts shapes the answers.
import { z } from 'zod';
import { bankPayoutBehaviour } from './banks.ts';
import { cardPayoutBehaviour } from './cards.ts';
import type { PayoutBehaviour, PayoutStep } from './outcomes.ts';
import {
  amountSchema,
  bankAccountFields,
  cardFieldsSchema,
  currencySchema,
  invalidState,
  requireCardNumber,
  requireIban,
  type RouteResult,
} from './payments.ts';
import { ApiError, referenceParameter } from './requests.ts';
import type { Payout, PayoutStatus } from './resources.ts';
import type { SandboxStore } from './store.ts';

const DESTINATION_TYPES = ['card', 'bank_account'] as const;

export const createPayoutSchema = z.strictObject({
  amount: amountSchema,
  currency: currencySchema,
  destination: z.discriminatedUnion(
    'type',
    [z.strictObject({ type: z.literal('card'), card: cardFieldsSchema }), z.strictObject({ type: z.literal('bank_account'), ...bankAccountFields })],
    // A missing or unknown type (the issue's path ends with `type`).
    { error: (issue) => (issue.code === 'invalid_union' ? `must be one of ${DESTINATION_TYPES.join(', ')}` : undefined) },
  ),
  reference: z.string().max(100, 'must be at most 100 characters').optional(),
  // For the destination's statement, which the sandbox does not have: checked, then not kept.
  description: z.string().max(500, 'must be at most 500 characters').optional(),
});
type CreatePayoutInput = z.infer<typeof createPayoutSchema>;

/**
 * Every move of a payout: who makes it, from which statuses, to which one. The processor's moves happen by
 * themselves, one payout settle delay apart, as the destination's behaviour says (PayoutBehaviour), each with
 * its callback. The merchant's are its own API calls (`POST …/payouts/{id}/<move>`), answered with the change
 * and nothing else; the bank's are test helpers (`POST …/test_helpers/payouts/{id}/<move>`), away from the
 * caller, so they get their callback. A status no move leaves is final. `done` completes "This payout cannot be …".
 */
export const PAYOUT_MOVES = {
  send: { by: 'processor', from: ['pending'], to: 'in_transit', done: 'sent' },
  pay: { by: 'processor', from: ['in_transit'], to: 'paid', done: 'paid' },
  fail: { by: 'processor', from: ['pending', 'in_transit'], to: 'failed', done: 'failed' },
  expire: { by: 'processor', from: ['pending'], to: 'expired', done: 'expired' },
  cancel: { by: 'merchant', from: ['pending'], to: 'cancelled', done: 'cancelled' },
  return: { by: 'bank', from: ['paid'], to: 'returned', done: 'returned' },
} as const satisfies Record<string, { by: 'processor' | 'merchant' | 'bank'; from: readonly PayoutStatus[]; to: PayoutStatus; done: string }>;

export type PayoutMove = keyof typeof PAYOUT_MOVES;
/** The moves a route makes: the merchant's and the bank's. */
export type PayoutAction = { [M in PayoutMove]: (typeof PAYOUT_MOVES)[M]['by'] extends 'processor' ? never : M }[PayoutMove];

/** Whether `value` is a move that `by` makes with a route (so its route exists). */
export const isPayoutAction = (value: string, by: 'merchant' | 'bank'): value is PayoutAction =>
  Object.hasOwn(PAYOUT_MOVES, value) && PAYOUT_MOVES[value as PayoutMove].by === by;

const allows = (move: PayoutMove, payout: Payout) => (PAYOUT_MOVES[move].from as readonly PayoutStatus[]).includes(payout.status);

/** The processor's move to each status a step may reach (one each). */
const PROCESSOR_MOVE_TO = new Map(
  (Object.keys(PAYOUT_MOVES) as PayoutMove[])
    .filter((move) => PAYOUT_MOVES[move].by === 'processor')
    .map((move) => [PAYOUT_MOVES[move].to as PayoutStatus, move]),
);

/** A step of the processor, if the payout may still make it: one cancelled, or moved on otherwise, makes none. */
function makeStep(store: SandboxStore, payout: Payout, step: PayoutStep): void {
  const move = PROCESSOR_MOVE_TO.get(step.status);
  if (move === undefined) throw new Error(`no processor move of a payout leads to ${step.status}`);
  if (allows(move, payout)) store.updateAndNotify(payout, step);
}

/** What shows of the destination, and what becomes of a payout to it, decided now by its test row (or a card's expiry). */
function destinationOf(destination: CreatePayoutInput['destination']): { last4: string; behaviour: PayoutBehaviour } {
  if (destination.type === 'card') {
    const { number, exp_month: expMonth, exp_year: expYear } = destination.card;
    requireCardNumber(number, 'destination.card.number');
    return { last4: number.slice(-4), behaviour: cardPayoutBehaviour({ number, expMonth, expYear }, new Date()) };
  }
  requireIban(destination.iban, 'destination.iban');
  return { last4: destination.iban.slice(-4), behaviour: bankPayoutBehaviour(destination.iban) };
}

/**
 * A payout answered `pending`, whose steps (its destination's behaviour) fall due `settleMs` apart from its
 * creation: each applied once by whichever comes first, its timer or the first read after it (whenDue).
 */
export function createPayout(store: SandboxStore, apiKey: string, input: CreatePayoutInput, settleMs: number): RouteResult {
  const { last4, behaviour } = destinationOf(input.destination);
  const payout = store.createPayout({
    apiKey,
    amount: input.amount,
    currency: input.currency.toLowerCase(),
    status: 'pending',
    destination: { type: input.destination.type, last4 },
    reference: input.reference ?? null,
    error: null,
  });
  behaviour.forEach((step, index) => store.whenDue(payout, payout.createdMs + (index + 1) * settleMs, () => makeStep(store, payout, step)));
  return { httpStatus: 200, resource: payout };
}

export function findPayout(store: SandboxStore, apiKey: string, id: string): Payout {
  const payout = store.findPayout(apiKey, id);
  if (!payout) throw new ApiError(404, 'resource_missing', `No payout ${id}.`);
  return payout;
}

/** How a caller finds a payout whose create answer it never received (it timed out): by its own reference. */
export function findPayoutByReference(store: SandboxStore, apiKey: string, query: URLSearchParams): Payout {
  const reference = referenceParameter(query, 'payouts');
  const payout = store.findPayoutByReference(apiKey, reference);
  if (!payout) throw new ApiError(404, 'resource_missing', `No payout with reference ${reference}.`);
  return payout;
}

/** The merchant's cancel or the bank's return, as PAYOUT_MOVES allows; read first, so a step that fell due counts. */
export function actOnPayout(store: SandboxStore, apiKey: string, id: string, action: PayoutAction): RouteResult {
  const payout = findPayout(store, apiKey, id);
  const { by, to, done } = PAYOUT_MOVES[action];
  if (!allows(action, payout)) throw invalidState(payout, done);
  const changes = { status: to };
  return { httpStatus: 200, resource: by === 'bank' ? store.updateAndNotify(payout, changes) : store.update(payout, changes) };
}
