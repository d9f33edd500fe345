// Confirming a payment: routing it to the connector accounts that may take its method, then authorizing it
// at the first and, while an attempt fails in a way the profile retries, at the next ones.
import { ConnectorError, methodTypeOf, refusalCodeOf, type PaymentMethod, type PaymentSplit, type ProcessorPayment } from '../../connectors/port.ts';
import { AppError, invalidInput } from '../../../kernel/errors.ts';
import type { MerchantPrincipal, Principal } from '../../../kernel/principal.ts';
import { Prisma, type ConnectorAccount, type SavedPaymentMethod } from '../../../generated/prisma/client.ts';
import { profileById, profileSettings } from '../../merchants/index.ts';
import { parseInput } from '../../../kernel/validation.ts';
import { transitionAttempt, type AttemptTransition } from '../machine/attempt.ts';
import { HARD_DECLINE_CODES, MAX_ATTEMPTS_PER_PAYMENT, retryDecision, type AttemptFailure } from '../machine/retry.ts';
import { UNCONFIRMED_INTENT_STATUSES, type AttemptStatus } from '../machine/statuses.ts';
import { supportsManualCapture } from '../methods.ts';
import { surchargeFor } from '../surcharges.ts';
import { confirmPaymentInput } from '../inputs.ts';
import { keptFields } from '../kept-fields.ts';
import type { Payment } from '../store.ts';
import type { ProcessorCallOutcomes } from './call-outcomes.ts';
import type { PaymentDependencies } from './dependencies.ts';
import { attemptErrorFieldsOf, NO_ERROR, PAID, type ProcessorAnswers } from './processor-answers.ts';
import type { PaymentReads } from './reads.ts';
import type { CircuitsAhead } from '../../routing/index.ts';
import { expiredOrAsIs } from './sweeps.ts';
import { passThroughCandidates } from './pass-through.ts';

/** Failed attempts after which the customer may confirm again with another method (not a failed capture or void). */
const MANUALLY_RETRYABLE: ReadonlySet<AttemptStatus> = new Set(['AUTHORIZATION_FAILED', 'AUTHENTICATION_FAILED', 'FAILURE']);

export interface ConfirmOptions {
  returnUrl: string | null;
  /** Ask the processor for the card's reusable token, kept on the payment's customer once it is paid. */
  saveCard: boolean;
  /** The saved card the payment is confirmed with. */
  saved: SavedPaymentMethod | null;
  /** The merchant's circuits, read while the payment was read or written (RoutingService.circuitsAhead). */
  circuitsAhead?: Promise<CircuitsAhead>;
}

type AuthorizeOutcome = { answer: ProcessorPayment } | { error: ConnectorError };

/** What a customer's confirm is checked against besides the payment's own state. */
export interface ConfirmAdmission {
  /** Counts the confirm against its payment, given by its proven client secret, while the payment is read. */
  count(paymentId: string): Promise<void>;
  /** Asked with the payment as read, once it is counted; its throw refuses the confirm. */
  admit(payment: Payment): Promise<void>;
}

/** The failure of an authorization, as retry rules see it; null when it did not fail (or left the outcome unknown). */
function attemptFailureOf(outcome: AuthorizeOutcome): AttemptFailure | null {
  if ('error' in outcome) {
    // Read through the catalog as a decline is (refusalCodeOf), never by the processor's own code: Stripe's
    // incorrect_number is the catalog's invalid_number, a hard decline.
    return outcome.error.outcomeUnknown ? null : { kind: 'not_processed', code: refusalCodeOf(outcome.error) };
  }
  const { answer } = outcome;
  return answer.status === 'failed' && answer.error ? { kind: 'declined', code: answer.error.code } : null;
}

/** The error columns of an attempt whose authorization failed with `failure`: our code, the processor's code, message and error body. */
function failedAttemptFields(outcome: AuthorizeOutcome, failure: AttemptFailure) {
  const { processorCode, message, processorBody } =
    'error' in outcome ? outcome.error : (outcome.answer.error ?? { processorCode: null, message: 'failed', processorBody: null });
  return attemptErrorFieldsOf({ code: failure.code, processorCode: processorCode ?? null, message, processorBody });
}

export class PaymentConfirmation {
  constructor(
    private readonly deps: PaymentDependencies,
    private readonly reads: PaymentReads,
    private readonly answers: ProcessorAnswers,
    private readonly outcomes: ProcessorCallOutcomes,
  ) {}

  /**
   * `admission`, when given, holds the customer's limits (payment-links/service.ts); a throw of either step refuses
   * the confirm, before anything is written or sent.
   */
  async confirm(principal: Principal, rawInput: unknown, admission?: ConfirmAdmission): Promise<Payment> {
    const input = parseInput(confirmPaymentInput, rawInput);
    const paymentId = this.deps.keys.paymentIdOfClientSecret(input.clientSecret);
    // Routing's circuits are read while the payment is, so its decision need not read them after (RoutingService.circuitsAhead).
    // Not for a saved card: it goes to the account that issued its token, whatever their health.
    const readsAhead = (principal.kind === 'publishableKey' || principal.kind === 'secretKey') && !input.paymentMethodId;
    const circuitsAhead = readsAhead ? this.deps.routing.circuitsAhead(principal.merchantId, principal.mode) : undefined;
    // Counted while the payment is read: the client secret is already proven (an HMAC of the id), so only its holder
    // counts against it. The read's refusal comes first, then the link's (admit: the longer wait), then the count's.
    const [read, counted] = await Promise.allSettled([
      this.reads.getVisible(principal, paymentId, input.clientSecret),
      Promise.resolve().then(() => admission?.count(paymentId)),
    ]);
    if (read.status === 'rejected') throw read.reason;
    const visible = read.value;
    await admission?.admit(visible);
    if (counted.status === 'rejected') throw counted.reason;
    const payment = await expiredOrAsIs(this.deps.store, visible);
    if (payment.status === 'EXPIRED') {
      throw new AppError('INVALID_STATE', `This payment expired at ${payment.expiresAt!.toISOString()} without being confirmed; create a new one.`, {
        status: payment.status,
      });
    }
    const returnUrl = input.returnUrl ?? null;
    if (returnUrl && principal.kind === 'publishableKey') this.refuseBrowserReturnUrl(payment, returnUrl);
    if (input.savePaymentMethod && payment.customerId === null) throw invalidInput('savePaymentMethod', 'needs a payment created with a customerId');
    let method: PaymentMethod;
    let saved: SavedPaymentMethod | null = null;
    if (input.paymentMethodId) {
      saved = await this.deps.customers.savedCard(payment.merchantId, payment.mode, payment.customerId, input.paymentMethodId);
      method = { type: 'saved_card', token: this.deps.customers.processorToken(saved), cvc: input.cardCvc! };
    } else if (input.paymentMethodData) {
      method = input.paymentMethodData;
    } else {
      // Card numbers and account details are never stored, so they come with the confirm even if given at create.
      // INVALID_STATE first, if the payment cannot be confirmed whatever it is given.
      if (!UNCONFIRMED_INTENT_STATUSES.has(payment.status) && payment.status !== 'FAILED') transitionAttempt(payment.activeAttempt.status, 'confirm');
      throw invalidInput('paymentMethodData', 'payment method details (or a saved paymentMethodId) are required to confirm; card numbers are never stored');
    }
    if (payment.captureMethod === 'MANUAL' && !supportsManualCapture(methodTypeOf(method))) {
      throw invalidInput(
        'paymentMethodData',
        `${methodTypeOf(method)} settles later and cannot be captured manually; create the payment with captureMethod AUTOMATIC`,
      );
    }
    return this.confirmLoaded(principal as MerchantPrincipal, payment, method, {
      returnUrl,
      saveCard: input.savePaymentMethod ?? false,
      saved,
      circuitsAhead,
    });
  }

  /**
   * Where the customer is sent back is the merchant's to say (its secret key, at create or confirm): a
   * browser that could set or change it would make the service an open redirect. It may only repeat it.
   */
  private refuseBrowserReturnUrl(payment: Payment, returnUrl: string): void {
    if (payment.returnUrl === null) {
      throw new AppError('FORBIDDEN', 'A publishable key cannot set returnUrl; the merchant sets it with its secret key.', { field: 'returnUrl' });
    }
    if (new URL(returnUrl).href !== new URL(payment.returnUrl).href) {
      throw new AppError('FORBIDDEN', 'A publishable key cannot change the returnUrl the merchant set.', { field: 'returnUrl' });
    }
  }

  /**
   * Sends the payment to its first eligible connector and, while an attempt fails in a way the profile
   * retries, to the next one, each attempt its own record (Hyperswitch's auto-retry). A failed payment
   * confirmed again starts a new attempt (manual retry), within MAX_ATTEMPTS_PER_PAYMENT.
   */
  async confirmLoaded(principal: MerchantPrincipal, payment: Payment, method: PaymentMethod, options: ConfirmOptions): Promise<Payment> {
    // The routing algorithm is read alongside the profile, not after it: one round trip's wait per confirm.
    const [profile, algorithm] = await Promise.all([
      profileById(this.deps.context, payment.profileId),
      this.deps.routing.activeAlgorithm(payment.profileId, payment.mode),
    ]);
    const settings = profileSettings(profile, payment.mode);
    const kept = keptFields(method, this.deps.keys.fingerprintKey(payment.merchantId), options.saved);
    const routedTo = (account: ConnectorAccount) => ({
      ...kept,
      connectorAccountId: account.id,
      connectorName: account.connectorName,
      processorMerchantId: account.merchantId === payment.merchantId ? null : account.merchantId,
      // What it is asked to pay on, kept: its partial capture and its refunds are split from it (pass-through.ts).
      processorSplit: (splits.get(account.id) as Prisma.InputJsonObject | undefined) ?? Prisma.DbNull,
    });
    // A payment that cannot be confirmed is refused before it is routed: routing may claim a connector's probe.
    const moves = payment.status === 'FAILED' ? null : this.confirmMoves(payment, kept.cardFingerprint);
    if (moves === null) await this.refuseManualRetry(payment, kept.cardFingerprint);
    // The decision is stored on the payment (Payment.routing); its candidates are the attempts' order.
    const routed = await this.deps.routing.decideForPayment(
      payment,
      settings.routing,
      algorithm?.algorithm ?? null,
      method,
      options.saved,
      options.circuitsAhead,
    );
    // The profile's surcharge for the method paid with is fixed at confirm, for every attempt of this confirm.
    const surchargeAmount = surchargeFor(payment.amount, methodTypeOf(method), settings.surcharges);
    // Only accounts that can pay a platform's shares on to their merchants take its payment (docs/platforms.md).
    const { accounts: candidates, splits } = await passThroughCandidates(this.deps.context.db, { ...payment, surchargeAmount }, routed.accounts);
    const routing = routed.decision as unknown as Prisma.InputJsonObject;
    const intent = { surchargeAmount, routing, ...(options.returnUrl ? { returnUrl: options.returnUrl } : {}) };
    let pending: Payment;
    if (moves === null) {
      pending = await this.deps.store.startAttempt(payment, {
        closeMove: null,
        attempt: routedTo(candidates[0]!),
        intent: { ...intent, ...NO_ERROR },
        trigger: 'manual_retry',
        actor: principal.keyId,
      });
    } else {
      pending = await this.deps.store.commit(payment, { moves, attempt: routedTo(candidates[0]!), intent, actor: principal.keyId });
    }
    for (let index = 0, retriesUsed = 0; ; index += 1) {
      const account = candidates[index]!;
      // A setup for future off-session payments needs the processor's reusable token of the card.
      const saveCard = options.saveCard || (pending.setupFutureUsage === 'OFF_SESSION' && method.type === 'card');
      // Partial authorization leaves an amount to capture: only for payments captured by the merchant.
      // Not with 3DS either: the table has no partial row after authentication.
      const allowPartialAuthorization =
        settings.allowPartialAuthorization && pending.captureMethod === 'MANUAL' && pending.authenticationType === 'NO_THREE_DS';
      const outcome = await this.authorizeAt(pending, account, method, { saveCard, allowPartialAuthorization, split: splits.get(account.id) });
      // Recorded while the answer is saved, not after: the Redis round trip overlaps the save. Awaited in `finally`.
      // It never rejects; if it did, the catch keeps that from going unhandled until then, which would end the process.
      const recorded = this.deps.routing.recordAuthorization(routed.facts, account.id, outcome);
      recorded.catch(() => undefined);
      try {
        const failure = attemptFailureOf(outcome);
        if (failure !== null) {
          const decision = retryDecision(failure, {
            retriesUsed,
            maxRetries: settings.maxRetries,
            retryableDeclineCodes: settings.retryableDeclineCodes,
            nextConnectorAvailable: index + 1 < candidates.length && pending.attemptCount < MAX_ATTEMPTS_PER_PAYMENT,
          });
          if (decision.retry) {
            try {
              pending = await this.deps.store.startAttempt(pending, {
                closeMove: transitionAttempt('PENDING', 'processor_call', { result: 'failure', retry: true }),
                closeFields: { ...failedAttemptFields(outcome, failure), connectorTransactionId: 'answer' in outcome ? outcome.answer.transactionId : null },
                attempt: routedTo(candidates[index + 1]!),
                trigger: 'retry',
                actor: 'processor',
              });
            } catch (conflict) {
              // A callback or sync changed the payment first: what it did stands. (A failure it learnt is this
              // request's to apply while it waits for the answer, so that happens only if it seemed stalled.)
              if (!(conflict instanceof AppError && conflict.code === 'CONFLICT')) throw conflict;
              return this.outcomes.settled(pending, await this.deps.store.get(pending.id));
            }
            retriesUsed += 1;
            continue;
          }
          this.deps.context.logger.info({ paymentId: pending.id, code: failure.code, reason: decision.reason }, 'attempt failed without retry');
        }
        if ('error' in outcome) return this.outcomes.settled(pending, await this.outcomes.afterConnectorError(pending, outcome.error, 'processor_call'));
        const result = await this.answers.applyCallAnswer(pending, outcome.answer);
        if (options.saved && result.activeAttempt.id === pending.activeAttempt.id && PAID.has(result.status))
          await this.deps.customers.markUsed(options.saved.id);
        return this.outcomes.settled(pending, this.outcomes.declinedOrResult(result, outcome.answer));
      } finally {
        await recorded;
      }
    }
  }

  /** The moves confirming a payment that has not failed makes; INVALID_STATE when it cannot be confirmed. */
  private confirmMoves(payment: Payment, cardFingerprint: string | null | undefined): AttemptTransition[] {
    const moves: AttemptTransition[] = [];
    let status = payment.activeAttempt.status;
    if (status === 'PAYMENT_METHOD_AWAITED' || status === 'CONFIRMATION_AWAITED') {
      const supplied = transitionAttempt(status, 'payment_method_supplied');
      // Re-supplying the same card at confirm is not a change worth a history row.
      if (supplied.to !== status || payment.activeAttempt.cardFingerprint !== cardFingerprint) moves.push(supplied);
      status = supplied.to;
    }
    moves.push(transitionAttempt(status, 'confirm'));
    return moves;
  }

  /** Refuses confirming a FAILED payment again when its attempt cannot be retried, it has had its attempts, or its card will be declined again. */
  private async refuseManualRetry(payment: Payment, cardFingerprint: string | null | undefined): Promise<void> {
    if (!MANUALLY_RETRYABLE.has(payment.activeAttempt.status)) {
      throw new AppError('INVALID_STATE', `A FAILED payment whose attempt ended ${payment.activeAttempt.status} cannot be confirmed again.`, {
        status: payment.status,
      });
    }
    if (payment.attemptCount >= MAX_ATTEMPTS_PER_PAYMENT) {
      throw new AppError('INVALID_STATE', `This FAILED payment has had ${payment.attemptCount} attempts, the most allowed; create a new payment.`, {
        status: payment.status,
      });
    }
    await this.refuseHardDeclinedCard(payment, cardFingerprint);
  }

  /**
   * A manual retry may not send a card back to be declined again for a reason that will not change
   * (insufficient funds, stolen, ...): it would only test the card. Another method is welcome.
   */
  private async refuseHardDeclinedCard(payment: Payment, cardFingerprint: string | null | undefined): Promise<void> {
    if (!cardFingerprint) return;
    const declined = await this.deps.context.db.paymentAttempt.findFirst({
      where: { paymentId: payment.id, cardFingerprint, errorCode: { in: [...HARD_DECLINE_CODES] } },
      select: { errorCode: true },
    });
    if (declined !== null) {
      throw invalidInput('paymentMethodData', `this card was declined for this payment (${declined.errorCode}) and will be again; use another payment method`);
    }
  }

  /** One authorization at one connector: its answer, or the ConnectorError that stood for one. */
  private async authorizeAt(
    pending: Payment,
    account: ConnectorAccount,
    method: PaymentMethod,
    options: { saveCard: boolean; allowPartialAuthorization: boolean; split: PaymentSplit | undefined },
  ): Promise<AuthorizeOutcome> {
    try {
      const answer = await this.deps.connectorAccounts.connectorFor(account).authorize({
        reference: pending.activeAttempt.id,
        amount: pending.amount + pending.surchargeAmount,
        currency: pending.currency,
        captureMethod: pending.captureMethod,
        threeDs: pending.authenticationType === 'THREE_DS',
        paymentMethod: method,
        ...options,
        returnUrl: this.deps.keys.redirectReturnUrl(pending.id, pending.activeAttempt.id, account.connectorName),
      });
      return { answer };
    } catch (error) {
      if (error instanceof ConnectorError) return { error };
      throw error;
    }
  }
}
