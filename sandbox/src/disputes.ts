// What a sandbox processor does with disputes (chargebacks): the customer's bank claims back all or part of
// what a succeeded payment captured, by itself for the dispute test card or when the test helper says so; the
// merchant accepts it or challenges it with evidence, and the network (the test helpers) decides. Like
// refunds.ts, everything here works on one personality's store for one API key; routes.ts reads the requests
// and render.ts shapes the answers.
import { z } from 'zod';
import { amountSchema, findPayment, invalidState, type RouteResult } from './payments.ts';
import { ApiError } from './requests.ts';
import type { Dispute, DisputeChanges, DisputeStatus, Payment } from './resources.ts';
import type { SandboxStore } from './store.ts';

/** How long the merchant has to challenge a dispute with evidence, from its opening (`evidence_due_by`). */
const EVIDENCE_WINDOW_MS = 7 * 24 * 60 * 60 * 1000;
/** The reason of a dispute the test helper opens without one. */
const DEFAULT_REASON = 'general';
const MAX_EVIDENCE_KEYS = 20;
const MAX_EVIDENCE_KEY_LENGTH = 40;
const MAX_EVIDENCE_VALUE_LENGTH = 5000;
/** One evidence entry at its longest, `"<key>":"<value>",` with every character taking JSON's 6 bytes (`\u0001`). */
const MAX_EVIDENCE_ENTRY_BYTES = 6 * (MAX_EVIDENCE_KEY_LENGTH + MAX_EVIDENCE_VALUE_LENGTH) + 6;
/** The largest body of an evidence request, more than the other requests may send: every entry at its longest, and room for the rest. */
export const MAX_EVIDENCE_BODY_BYTES = MAX_EVIDENCE_KEYS * MAX_EVIDENCE_ENTRY_BYTES + 1024;

/**
 * Every move of a dispute: who makes it, from which statuses, to which one. The merchant's moves are its own
 * API calls (`POST …/disputes/{id}/<action>`), answered with the change and nothing else, like a capture; the
 * network's are the test helpers (`POST …/test_helpers/disputes/{id}/<action>`), away from the caller, so
 * they get their callback. A status no action leaves is final. `done` completes "This dispute cannot be …".
 */
export const DISPUTE_ACTIONS = {
  accept: { by: 'merchant', from: ['needs_response'], to: 'accepted', done: 'accepted' },
  evidence: { by: 'merchant', from: ['needs_response'], to: 'under_review', done: 'challenged' },
  win: { by: 'network', from: ['under_review'], to: 'won', done: 'won' },
  lose: { by: 'network', from: ['under_review'], to: 'lost', done: 'lost' },
  expire: { by: 'network', from: ['needs_response'], to: 'expired', done: 'expired' },
  cancel: { by: 'network', from: ['needs_response', 'under_review'], to: 'cancelled', done: 'cancelled' },
} as const satisfies Record<string, { by: 'merchant' | 'network'; from: readonly DisputeStatus[]; to: DisputeStatus; done: string }>;

export type DisputeAction = keyof typeof DISPUTE_ACTIONS;

/** Whether `value` is an action that `by` takes on a dispute (so its route exists). */
export const isDisputeAction = (value: string, by: 'merchant' | 'network'): value is DisputeAction =>
  Object.hasOwn(DISPUTE_ACTIONS, value) && DISPUTE_ACTIONS[value as DisputeAction].by === by;

export const openDisputeSchema = z.strictObject({
  amount: amountSchema.optional(),
  reason: z.string().max(100, 'must be at most 100 characters').optional(),
});

const evidenceKeyRule = `is not a valid evidence key: a key is 1 to ${MAX_EVIDENCE_KEY_LENGTH} characters of a-z, 0-9 and _`;

/**
 * Refuses a `__proto__` key like any other invalid one: JSON may hold it, but zod's records skip it without
 * a word (a JavaScript object would take it for its prototype), and the merchant's evidence would lose it.
 */
function refuseProtoKey(value: unknown, context: { addIssue(issue: z.core.$ZodRawIssue): void }): unknown {
  if (value !== null && typeof value === 'object' && Object.hasOwn(value, '__proto__')) {
    context.addIssue({ code: 'custom', message: evidenceKeyRule, path: ['__proto__'], input: value });
  }
  return value;
}

export const submitEvidenceSchema = z.strictObject({
  evidence: z.preprocess(
    refuseProtoKey,
    z
      .record(
        z
          .string()
          .max(MAX_EVIDENCE_KEY_LENGTH)
          .regex(/^[a-z0-9_]+$/),
        z.string().max(MAX_EVIDENCE_VALUE_LENGTH, `must be at most ${MAX_EVIDENCE_VALUE_LENGTH} characters`),
        {
          error: (issue) => {
            if (issue.code === 'invalid_key') return evidenceKeyRule;
            return issue.code === 'invalid_type' && issue.input !== undefined ? 'must be a JSON object of strings' : undefined;
          },
        },
      )
      .refine((evidence) => {
        const count = Object.keys(evidence).length;
        return count >= 1 && count <= MAX_EVIDENCE_KEYS;
      }, `must have 1 to ${MAX_EVIDENCE_KEYS} keys`),
  ),
});

/** Unix milliseconds after which the dispute's evidence is refused. */
export const evidenceDueByMs = (dispute: Dispute): number => dispute.createdMs + EVIDENCE_WINDOW_MS;

/** Opens a dispute of `payment` for `amount`, as its customer's bank does (with its callback). */
function disputePayment(store: SandboxStore, payment: Payment, amount: number, reason: string): Dispute {
  return store.openDispute({
    apiKey: payment.apiKey,
    paymentId: payment.id,
    amount,
    currency: payment.currency,
    status: 'needs_response',
    reason,
    evidence: null,
  });
}

/**
 * Lets the customer's bank dispute `payment` (which just succeeded) `delayMs` later, if its payment method
 * says so (the dispute test card): for all it captured by then, unless it no longer succeeded by then (voided).
 */
export function scheduleDisputeOpening(store: SandboxStore, payment: Payment, delayMs: number): void {
  const behaviour = payment.disputeBehaviour;
  if (behaviour.kind === 'none') return;
  store.whenDue(payment, Date.now() + delayMs, () => {
    if (payment.status === 'succeeded') disputePayment(store, payment, payment.amountCaptured, behaviour.reason);
  });
}

/** The test stand-in for a customer's bank disputing any succeeded payment of the key. */
export function openDispute(store: SandboxStore, apiKey: string, paymentId: string, input: z.infer<typeof openDisputeSchema>): RouteResult {
  const payment = findPayment(store, apiKey, paymentId);
  if (payment.status !== 'succeeded') throw invalidState(payment, 'disputed');
  const amount = input.amount ?? payment.amountCaptured;
  if (amount > payment.amountCaptured) {
    throw new ApiError(400, 'invalid_request', `amount must be at most ${payment.amountCaptured} (the amount captured).`);
  }
  return { httpStatus: 200, resource: disputePayment(store, payment, amount, input.reason ?? DEFAULT_REASON) };
}

export function findDispute(store: SandboxStore, apiKey: string, id: string): Dispute {
  const dispute = store.findDispute(apiKey, id);
  if (!dispute) throw new ApiError(404, 'resource_missing', `No dispute ${id}.`);
  return dispute;
}

/** A list answer (`{ data: [...] }`); only a GET answers one. */
export interface DisputeList {
  readonly object: 'list';
  readonly data: readonly Dispute[];
}

/** `GET …/disputes?payment=…`: the payment's disputes, newest first. */
export function listDisputes(store: SandboxStore, apiKey: string, query: URLSearchParams): RouteResult<DisputeList> {
  const paymentId = query.get('payment');
  if (!paymentId) throw new ApiError(400, 'invalid_request', 'payment is required as a query parameter (GET …/disputes?payment=…).');
  // Found first, so a read of the list opens a dispute that fell due, and another key's payment is a 404.
  const payment = findPayment(store, apiKey, paymentId);
  return { httpStatus: 200, resource: { object: 'list', data: store.disputesOf(payment).reverse() } };
}

const allows = (action: DisputeAction, dispute: Dispute) => (DISPUTE_ACTIONS[action].from as readonly DisputeStatus[]).includes(dispute.status);

/** Moves `dispute` by `action` as DISPUTE_ACTIONS allows, with `changes` beyond its status. */
function move(store: SandboxStore, dispute: Dispute, action: DisputeAction, changes: DisputeChanges = {}): RouteResult {
  const { by, to, done } = DISPUTE_ACTIONS[action];
  if (!allows(action, dispute)) throw invalidState(dispute, done);
  const moved = { ...changes, status: to };
  return { httpStatus: 200, resource: by === 'network' ? store.updateAndNotify(dispute, moved) : store.update(dispute, moved) };
}

/** Every action but `evidence`, which brings the evidence (submitEvidence): they take no parameters. */
export function actOnDispute(store: SandboxStore, apiKey: string, id: string, action: Exclude<DisputeAction, 'evidence'>): RouteResult {
  return move(store, findDispute(store, apiKey, id), action);
}

/**
 * Test evidence that decides the challenge, as Stripe's test mode does: an evidence value of exactly
 * `winning_evidence` or `losing_evidence` makes the network win or lose the dispute a moment later, with its
 * callback (docs/sandbox.md). Other evidence waits for the test helpers.
 */
export const DECIDING_EVIDENCE = { winning_evidence: 'win', losing_evidence: 'lose' } as const satisfies Record<string, DisputeAction>;
/** How long after the evidence the deciding evidence's decision comes: after the service has recorded the challenge. */
export const EVIDENCE_DECISION_MS = 1000;

/** The merchant's challenge: its evidence, before it is due. */
export function submitEvidence(store: SandboxStore, apiKey: string, id: string, input: z.infer<typeof submitEvidenceSchema>): RouteResult {
  const dispute = findDispute(store, apiKey, id);
  const dueMs = evidenceDueByMs(dispute);
  // Only a dispute that could take evidence is late: any other is refused for its status (in move).
  if (allows('evidence', dispute) && Date.now() > dueMs) {
    const dueBy = `${new Date(dueMs).toISOString()} (evidence_due_by ${Math.floor(dueMs / 1000)})`;
    throw new ApiError(409, 'invalid_state', `This dispute cannot be ${DISPUTE_ACTIONS.evidence.done}: the evidence was due by ${dueBy}.`);
  }
  const answer = move(store, dispute, 'evidence', { evidence: input.evidence });
  const decisive = Object.values(input.evidence).find((value): value is keyof typeof DECIDING_EVIDENCE => Object.hasOwn(DECIDING_EVIDENCE, value));
  if (decisive !== undefined) {
    const decision = DECIDING_EVIDENCE[decisive];
    store.whenDue(dispute, Date.now() + EVIDENCE_DECISION_MS, () => {
      if (allows(decision, dispute)) store.updateAndNotify(dispute, { status: DISPUTE_ACTIONS[decision].to });
    });
  }
  return answer;
}
