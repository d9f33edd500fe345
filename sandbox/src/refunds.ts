// What a sandbox processor does with refunds: give back all or part of what a succeeded payment captured, never
// more, with the outcome its payment's refund behaviour (its test card) decides, and the test helpers that
// stand for the processor's review of a refund. Like payments.ts, everything here works on one personality's
// store for one API key; routes.ts reads the requests and render.ts shapes the answers.
import { z } from 'zod';
import { REFUND_REJECTED, type RefundBehaviour } from './outcomes.ts';
import { amountSchema, findPayment, invalidState, type RouteResult } from './payments.ts';
import { ApiError, referenceParameter } from './requests.ts';
import type { NewRefund, Payment, Refund, RefundChanges } from './resources.ts';
import type { SandboxStore } from './store.ts';

export const createRefundSchema = z.strictObject({
  payment: z.string(),
  amount: amountSchema.optional(),
  reason: z.string().max(500, 'must be at most 500 characters').optional(),
  reference: z.string().max(100, 'must be at most 100 characters').optional(),
});

/** The test helpers' decisions on a refund in review (`POST …/test_helpers/refunds/{id}/<decision>`). */
const REVIEW_DECISIONS = {
  approve: { done: 'approved', changes: { status: 'succeeded' } },
  reject: { done: 'rejected', changes: { status: 'failed', error: REFUND_REJECTED } },
} as const satisfies Record<string, { done: string; changes: RefundChanges }>;

export type ReviewDecision = keyof typeof REVIEW_DECISIONS;

export const isReviewDecision = (value: string): value is ReviewDecision => Object.hasOwn(REVIEW_DECISIONS, value);

/** What a new refund is answered with, and what becomes of it later, as its payment's refund behaviour says. */
function initialState(behaviour: RefundBehaviour, settleMs: number): Pick<NewRefund, 'status' | 'settlement'> {
  switch (behaviour.kind) {
    case 'succeeded':
      return { status: 'succeeded', settlement: null };
    case 'settles':
      // As with a bank debit: the outcome is decided now and shows once settleMs passed.
      return { status: 'pending', settlement: { dueMs: Date.now() + settleMs, changes: behaviour.outcome } };
    case 'review':
      return { status: 'requires_review', settlement: null };
  }
}

/** What `payment` captured and no refund gives back yet: a refund counts until it fails (pending and in review too). */
function amountNotRefunded(store: SandboxStore, payment: Payment): number {
  const refunded = store.refundsOf(payment).reduce((sum, refund) => (refund.status === 'failed' ? sum : sum + refund.amount), 0);
  return payment.amountCaptured - refunded;
}

export function createRefund(store: SandboxStore, apiKey: string, input: z.infer<typeof createRefundSchema>, settleMs: number): RouteResult {
  const payment = findPayment(store, apiKey, input.payment);
  if (payment.status !== 'succeeded') throw invalidState(payment, 'refunded');
  // Nothing awaits between this sum and the refund's creation, so concurrent refunds of one payment can never
  // give back more than it captured together.
  const notRefunded = amountNotRefunded(store, payment);
  const amount = input.amount ?? notRefunded;
  if (notRefunded === 0 || amount > notRefunded) {
    const fully = notRefunded === 0 ? ' The payment is fully refunded.' : '';
    throw new ApiError(400, 'invalid_request', `amount must be at most ${notRefunded} (the amount not yet refunded).${fully}`);
  }
  const refund = store.createRefund({
    apiKey,
    paymentId: payment.id,
    amount,
    currency: payment.currency,
    reason: input.reason ?? null,
    reference: input.reference ?? null,
    error: null,
    ...initialState(payment.refundBehaviour, settleMs),
  });
  return { httpStatus: 200, resource: refund };
}

export function findRefund(store: SandboxStore, apiKey: string, id: string): Refund {
  const refund = store.findRefund(apiKey, id);
  if (!refund) throw new ApiError(404, 'resource_missing', `No refund ${id}.`);
  return refund;
}

/** How a caller finds a refund whose create answer it never received (it timed out): by its own reference. */
export function findRefundByReference(store: SandboxStore, apiKey: string, query: URLSearchParams): Refund {
  const reference = referenceParameter(query, 'refunds');
  const refund = store.findRefundByReference(apiKey, reference);
  if (!refund) throw new ApiError(404, 'resource_missing', `No refund with reference ${reference}.`);
  return refund;
}

/** The test stand-in for the processor's reviewers deciding a refund held in `requires_review`. */
export function reviewRefund(store: SandboxStore, apiKey: string, id: string, decision: ReviewDecision): RouteResult {
  const refund = findRefund(store, apiKey, id);
  const { done, changes } = REVIEW_DECISIONS[decision];
  if (refund.status !== 'requires_review') throw invalidState(refund, done);
  // The reviewers are not the caller: the change gets its callback.
  return { httpStatus: 200, resource: store.updateAndNotify(refund, changes) };
}
