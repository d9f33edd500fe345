// The PaymentAttempt state machine as data. Rows marked `seed` are the seed's table, letter for letter;
// rows marked `anchor` complete it as Hyperswitch does (cancel before confirm, void at the processor,
// partial capture). The service asks `transitionAttempt` for every move; the tests enumerate the rows and
// their complement. `planProcessorUpdate` finds, in the same rows, how a status the processor reports is
// reached, so a callback or a sync can never take a path the table does not allow.
import { AppError } from '../../../kernel/errors.ts';
import { intentStatusOf, type AttemptStatus, type CaptureMethod } from './statuses.ts';

export type AttemptTrigger =
  | 'payment_method_supplied'
  | 'confirm'
  | 'processor_call'
  | 'collect_device_data'
  | 'authenticate'
  | 'capture_method_selection'
  | 'capture'
  | 'capture_at_processor'
  | 'void'
  | 'void_after_capture'
  | 'void_at_processor'
  | 'void_refused'
  | 'expire';

/** What a row's condition can depend on. */
export interface AttemptConditions {
  result?: 'success' | 'failure';
  threeDs?: boolean;
  captureMethod?: CaptureMethod;
  captured?: 'full' | 'partial';
  /**
   * The request that put the attempt in its current status ended long ago (more than twice the processor
   * timeout): an answer saying the processor never acted on it is the truth, not a race with that request.
   */
  stalled?: boolean;
  /** Another attempt, on the next eligible connector, follows this failure (retry.ts decides). */
  retry?: boolean;
  /** The processor sends the customer to a page of its own (a bank's, transfer instructions), not to 3DS. */
  redirect?: boolean;
  /** The processor authorized less than the amount (the profile allows partial authorization). */
  partial?: boolean;
  /**
   * The processor reports that a capture failed after it had reported it done (Adyen's CAPTURE_FAILED after
   * CAPTURE: the card scheme refused it): only an answer saying exactly that undoes a charge.
   */
  captureReversed?: boolean;
}

/** Work the service must do after committing the move, outside the transaction. */
export type AttemptEffect = 'authorize_at_processor' | 'capture_at_processor' | 'void_at_processor';

export interface AttemptTransition {
  from: AttemptStatus;
  trigger: AttemptTrigger;
  when?: AttemptConditions;
  to: AttemptStatus;
  effect?: AttemptEffect;
  source: 'seed' | 'anchor';
}

export const ATTEMPT_TRANSITIONS: readonly AttemptTransition[] = [
  { from: 'PAYMENT_METHOD_AWAITED', trigger: 'payment_method_supplied', to: 'CONFIRMATION_AWAITED', source: 'seed' },
  { from: 'CONFIRMATION_AWAITED', trigger: 'confirm', to: 'PENDING', effect: 'authorize_at_processor', source: 'seed' },
  { from: 'PENDING', trigger: 'processor_call', when: { result: 'failure' }, to: 'AUTHORIZATION_FAILED', source: 'seed' },
  { from: 'PENDING', trigger: 'processor_call', when: { result: 'success', threeDs: false, captureMethod: 'AUTOMATIC' }, to: 'CHARGED', source: 'seed' },
  { from: 'PENDING', trigger: 'processor_call', when: { result: 'success', threeDs: false, captureMethod: 'MANUAL' }, to: 'AUTHORIZED', source: 'seed' },
  { from: 'PENDING', trigger: 'processor_call', when: { result: 'success', threeDs: true }, to: 'DEVICE_DATA_COLLECTION_PENDING', source: 'seed' },
  { from: 'DEVICE_DATA_COLLECTION_PENDING', trigger: 'collect_device_data', to: 'AUTHENTICATION_PENDING', source: 'seed' },
  { from: 'AUTHENTICATION_PENDING', trigger: 'authenticate', when: { result: 'success' }, to: 'AUTHENTICATION_SUCCESSFUL', source: 'seed' },
  { from: 'AUTHENTICATION_PENDING', trigger: 'authenticate', when: { result: 'failure' }, to: 'AUTHENTICATION_FAILED', source: 'seed' },
  { from: 'AUTHENTICATION_SUCCESSFUL', trigger: 'capture_method_selection', when: { captureMethod: 'AUTOMATIC' }, to: 'CHARGED', source: 'seed' },
  { from: 'AUTHENTICATION_SUCCESSFUL', trigger: 'capture_method_selection', when: { captureMethod: 'MANUAL' }, to: 'AUTHORIZED', source: 'seed' },
  { from: 'AUTHORIZED', trigger: 'capture', to: 'CAPTURE_INITIATED', effect: 'capture_at_processor', source: 'seed' },
  { from: 'CAPTURE_INITIATED', trigger: 'capture_at_processor', when: { result: 'success', captured: 'full' }, to: 'CHARGED', source: 'seed' },
  { from: 'CAPTURE_INITIATED', trigger: 'capture_at_processor', when: { result: 'failure' }, to: 'CAPTURE_FAILED', source: 'seed' },
  // The seed: "the payment is not voided at the processor" in these two states.
  { from: 'DEVICE_DATA_COLLECTION_PENDING', trigger: 'void', to: 'VOIDED', source: 'seed' },
  { from: 'AUTHENTICATION_PENDING', trigger: 'void', to: 'VOIDED', source: 'seed' },
  // Completions from the anchors.
  { from: 'CONFIRMATION_AWAITED', trigger: 'payment_method_supplied', to: 'CONFIRMATION_AWAITED', source: 'anchor' },
  { from: 'CAPTURE_INITIATED', trigger: 'capture_at_processor', when: { result: 'success', captured: 'partial' }, to: 'PARTIAL_CHARGED', source: 'anchor' },
  { from: 'PAYMENT_METHOD_AWAITED', trigger: 'void', to: 'VOIDED', source: 'anchor' },
  { from: 'CONFIRMATION_AWAITED', trigger: 'void', to: 'VOIDED', source: 'anchor' },
  { from: 'AUTHORIZED', trigger: 'void', to: 'VOID_INITIATED', effect: 'void_at_processor', source: 'anchor' },
  { from: 'VOID_INITIATED', trigger: 'void_at_processor', when: { result: 'success' }, to: 'VOIDED', source: 'anchor' },
  { from: 'VOID_INITIATED', trigger: 'void_at_processor', when: { result: 'failure' }, to: 'VOID_FAILED', source: 'anchor' },
  // Bank redirects, transfers and crypto: the customer acts on the processor's page after confirm, with no
  // device-data step (Hyperswitch's AuthenticationPending for redirect flows).
  { from: 'PENDING', trigger: 'processor_call', when: { result: 'success', redirect: true }, to: 'AUTHENTICATION_PENDING', source: 'anchor' },
  // A failure that an automatic retry follows: the attempt ends as FAILURE and the intent stays PROCESSING
  // with the next attempt (Hyperswitch's Failure). More specific than the seed row, so it wins when `retry`.
  { from: 'PENDING', trigger: 'processor_call', when: { result: 'failure', retry: true }, to: 'FAILURE', source: 'anchor' },
  // Recovery: a capture or void request whose call never reached the processor (it still reports the
  // payment authorized) gives the authorization back, so the merchant can capture or cancel again.
  { from: 'CAPTURE_INITIATED', trigger: 'capture_at_processor', when: { stalled: true }, to: 'AUTHORIZED', source: 'anchor' },
  { from: 'VOID_INITIATED', trigger: 'void_at_processor', when: { stalled: true }, to: 'AUTHORIZED', source: 'anchor' },
  // Partial authorization (Hyperswitch's PartiallyAuthorized): less than the amount is held, to capture or void.
  {
    from: 'PENDING',
    trigger: 'processor_call',
    when: { result: 'success', threeDs: false, captureMethod: 'MANUAL', partial: true },
    to: 'PARTIALLY_AUTHORIZED',
    source: 'anchor',
  },
  { from: 'PARTIALLY_AUTHORIZED', trigger: 'capture', to: 'CAPTURE_INITIATED', effect: 'capture_at_processor', source: 'anchor' },
  { from: 'PARTIALLY_AUTHORIZED', trigger: 'void', to: 'VOID_INITIATED', effect: 'void_at_processor', source: 'anchor' },
  // Recovery, as for AUTHORIZED: a capture or void of a partial authorization that never reached the processor.
  { from: 'CAPTURE_INITIATED', trigger: 'capture_at_processor', when: { stalled: true, partial: true }, to: 'PARTIALLY_AUTHORIZED', source: 'anchor' },
  { from: 'VOID_INITIATED', trigger: 'void_at_processor', when: { stalled: true, partial: true }, to: 'PARTIALLY_AUTHORIZED', source: 'anchor' },
  // A void after capture, where the processor supports it (Hyperswitch's VoidedPostCharge): its own operation,
  // never a cancel (Hyperswitch and Stripe cancel nothing that succeeded). A refusal is its own trigger, not a
  // processor row, so no answer about the charge itself can undo a void on its way.
  { from: 'CHARGED', trigger: 'void_after_capture', to: 'VOID_POST_CHARGE_INITIATED', effect: 'void_at_processor', source: 'anchor' },
  { from: 'VOID_POST_CHARGE_INITIATED', trigger: 'void_at_processor', when: { result: 'success' }, to: 'VOIDED_POST_CHARGE', source: 'anchor' },
  { from: 'VOID_POST_CHARGE_INITIATED', trigger: 'void_refused', to: 'CHARGED', source: 'anchor' },
  { from: 'VOID_POST_CHARGE_INITIATED', trigger: 'void_at_processor', when: { stalled: true }, to: 'CHARGED', source: 'anchor' },
  // An authentication or bank redirect that succeeded, then the authorization it led to failed (Adyen's
  // AUTHORISATION with success "false" after its Received or Pending): an authorization failure.
  { from: 'AUTHENTICATION_SUCCESSFUL', trigger: 'processor_call', when: { result: 'failure' }, to: 'AUTHORIZATION_FAILED', source: 'anchor' },
  // A capture the processor confirmed and then reported failed (captureReversed): the money was not taken.
  { from: 'CHARGED', trigger: 'capture_at_processor', when: { result: 'failure', captureReversed: true }, to: 'CAPTURE_FAILED', source: 'anchor' },
  { from: 'PARTIAL_CHARGED', trigger: 'capture_at_processor', when: { result: 'failure', captureReversed: true }, to: 'CAPTURE_FAILED', source: 'anchor' },
  // Session expiry: a payment not confirmed in time can no longer be (nothing reached a processor).
  { from: 'PAYMENT_METHOD_AWAITED', trigger: 'expire', to: 'EXPIRED', source: 'anchor' },
  { from: 'CONFIRMATION_AWAITED', trigger: 'expire', to: 'EXPIRED', source: 'anchor' },
];

/** Operation names as a merchant reads them in an INVALID_STATE message. */
const OPERATION_NAMES: Record<AttemptTrigger, string> = {
  payment_method_supplied: 'update the payment method of',
  confirm: 'confirm',
  processor_call: 'apply a processor response to',
  collect_device_data: 'collect device data for',
  authenticate: 'authenticate',
  capture_method_selection: 'select the capture method of',
  capture: 'capture',
  capture_at_processor: 'apply a capture result to',
  void: 'cancel',
  void_after_capture: 'cancel after capture',
  void_at_processor: 'apply a void result to',
  void_refused: 'apply a refused void to',
  expire: 'expire',
};

function matches(row: AttemptTransition, conditions: AttemptConditions): boolean {
  return Object.entries(row.when ?? {}).every(([key, value]) => conditions[key as keyof AttemptConditions] === value);
}

/**
 * The move `trigger` makes from `from`, or INVALID_STATE naming the operation and the payment's status (the
 * intent's, which the merchant sees; the attempt's is in the message and `attemptStatus`). When several
 * rows match, the one with the most conditions wins (a failure that is retried is still a failure).
 */
export function transitionAttempt(from: AttemptStatus, trigger: AttemptTrigger, conditions: AttemptConditions = {}): AttemptTransition {
  const rows = ATTEMPT_TRANSITIONS.filter((row) => row.from === from && row.trigger === trigger);
  if (rows.length === 0) {
    const status = intentStatusOf(from);
    throw new AppError('INVALID_STATE', `Cannot ${OPERATION_NAMES[trigger]} a payment in status ${status} (its attempt is ${from}).`, {
      status,
      attemptStatus: from,
    });
  }
  const row = rows.filter((candidate) => matches(candidate, conditions)).sort((a, b) => Object.keys(b.when ?? {}).length - Object.keys(a.when ?? {}).length)[0];
  // A pair in the table without a matching condition means the caller did not say enough: a bug, not bad input.
  if (!row) throw new Error(`attempt transition ${from} --${trigger}--> needs conditions ${JSON.stringify(rows.map((r) => r.when))}`);
  return row;
}

/** Triggers that only a processor's answer (response, callback or sync) may fire. */
export const PROCESSOR_TRIGGERS: ReadonlySet<AttemptTrigger> = new Set([
  'processor_call',
  'collect_device_data',
  'authenticate',
  'capture_method_selection',
  'capture_at_processor',
  'void_at_processor',
]);

/**
 * What the planner may not choose: the payment's capture method, whether the attempt is stalled, and whether
 * the answer reports a capture reversed (a plain failure never takes those rows).
 */
export type FixedConditions = Pick<AttemptConditions, 'captureMethod' | 'stalled' | 'captureReversed'>;
const FIXED_KEYS = ['captureMethod', 'stalled', 'captureReversed'] as const satisfies readonly (keyof FixedConditions)[];

/**
 * The rows that take an attempt from `from` to one of `targets` using processor triggers only, shortest
 * first; [] when it is already there; null when no such path exists (a stale or out-of-order answer, which
 * the caller ignores). A row conditioned on a fixed condition is taken only when `fixed` says the same.
 */
export function planProcessorUpdate(from: AttemptStatus, targets: ReadonlySet<AttemptStatus>, fixed: FixedConditions): AttemptTransition[] | null {
  if (targets.has(from)) return [];
  const queue: { status: AttemptStatus; path: AttemptTransition[] }[] = [{ status: from, path: [] }];
  const seen = new Set<AttemptStatus>([from]);
  while (queue.length > 0) {
    const { status, path } = queue.shift()!;
    for (const row of ATTEMPT_TRANSITIONS) {
      if (row.from !== status || !PROCESSOR_TRIGGERS.has(row.trigger) || seen.has(row.to)) continue;
      const compatible = FIXED_KEYS.every((key) => row.when?.[key] === undefined || row.when[key] === fixed[key]);
      if (!compatible) continue;
      const next = [...path, row];
      if (targets.has(row.to)) return next;
      seen.add(row.to);
      queue.push({ status: row.to, path: next });
    }
  }
  return null;
}

/** A processor's answer, normalised by its connector. */
export type ProcessorPaymentStatus =
  /** Still working on it: changes nothing. */
  | 'pending'
  /** Working on it after the customer's part (a debit settling, a transfer on its way). */
  | 'processing'
  | 'requires_device_data'
  | 'requires_authentication'
  | 'authorized'
  | 'captured'
  | 'partially_captured'
  | 'failed'
  /** A capture failed, even one reported done before (Adyen's CAPTURE_FAILED). */
  | 'capture_failed'
  | 'authentication_failed'
  | 'voided'
  /** Authorized for less than the amount. */
  | 'partially_authorized'
  /** Voided after it was captured: the money went back. */
  | 'voided_post_capture';

/** The attempt statuses each processor answer may land on (the planner picks the reachable one). */
export const ATTEMPT_TARGETS: Record<ProcessorPaymentStatus, ReadonlySet<AttemptStatus>> = {
  pending: new Set(),
  processing: new Set(['PENDING', 'AUTHENTICATION_SUCCESSFUL']),
  requires_device_data: new Set(['DEVICE_DATA_COLLECTION_PENDING']),
  requires_authentication: new Set(['AUTHENTICATION_PENDING']),
  authorized: new Set(['AUTHORIZED']),
  captured: new Set(['CHARGED']),
  partially_captured: new Set(['PARTIAL_CHARGED']),
  // A plain failure during 3DS (a decline after authentication) can only end the authentication.
  failed: new Set(['AUTHORIZATION_FAILED', 'CAPTURE_FAILED', 'VOID_FAILED', 'AUTHENTICATION_FAILED']),
  // Before the authorization's own news (Adyen does not promise order), a failed capture fails the authorization.
  capture_failed: new Set(['CAPTURE_FAILED', 'AUTHORIZATION_FAILED']),
  authentication_failed: new Set(['AUTHENTICATION_FAILED']),
  // Voided at the processor while a capture was on its way: that capture has failed.
  voided: new Set(['VOIDED', 'CAPTURE_FAILED']),
  partially_authorized: new Set(['PARTIALLY_AUTHORIZED']),
  voided_post_capture: new Set(['VOIDED_POST_CHARGE']),
};

/**
 * The rule a processor's amounts break for a payment it was asked to charge `charged` (amount plus
 * surcharge) in minor units, or null when they fit the status: nothing beyond what was asked, all of it
 * for a full authorization or capture, part of it for a partial one, and nothing captured otherwise. An
 * answer that breaks one (a processor's bug, a forged or mixed-up callback) is not about this payment as
 * we know it, and must not be written over its amounts.
 */
export function processorAmountsProblem(status: ProcessorPaymentStatus, amountCaptured: number, amountCapturable: number, charged: number): string | null {
  const within = (amount: number) => Number.isSafeInteger(amount) && amount >= 0 && amount <= charged;
  if (!within(amountCaptured) || !within(amountCapturable))
    return `amounts ${amountCaptured} captured and ${amountCapturable} capturable do not fit ${charged}`;
  switch (status) {
    case 'captured':
      return amountCaptured === charged ? null : `captured ${amountCaptured} of ${charged}, not all of it`;
    case 'partially_captured':
      return amountCaptured > 0 && amountCaptured < charged ? null : `partially captured ${amountCaptured} of ${charged}`;
    case 'authorized':
      return amountCapturable === charged ? null : `authorized ${amountCapturable} of ${charged}, not all of it`;
    case 'partially_authorized':
      return amountCapturable > 0 && amountCapturable < charged ? null : `partially authorized ${amountCapturable} of ${charged}`;
    default:
      return amountCaptured === 0 ? null : `${status} with ${amountCaptured} captured`;
  }
}
