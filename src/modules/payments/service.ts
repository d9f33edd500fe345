// The payments use cases. Processor calls never happen inside a database transaction: the pending state is
// committed first (guarded by the intent's version, so of two concurrent requests exactly one proceeds to
// the processor), the processor is called, and its answer is committed in a second guarded transaction.
// A crash or timeout in between leaves a PROCESSING payment that `sync` resolves, never a guessed failure.
import { createHmac } from 'node:crypto';
import { ConnectorError, methodTypeOf, type Connector, type PaymentMethod, type ProcessorPayment } from '../connectors/port.ts';
import { returnLocation } from '../../kernel/return-url.ts';
import { AppError, invalidInput, notFound } from '../../kernel/errors.ts';
import { isId, newId } from '../../kernel/ids.ts';
import { secretsEqual } from '../../kernel/api-keys.ts';
import {
  ATTEMPT_TARGETS,
  planProcessorUpdate,
  processorAmountsProblem,
  transitionAttempt,
  type AttemptTransition,
} from './machine/attempt.ts';
import { AWAITING_PROCESSOR_INTENT_STATUSES, SYNCABLE_INTENT_STATUSES, UNCONFIRMED_INTENT_STATUSES, type AttemptStatus } from './machine/statuses.ts';
import { supportsManualCapture } from './methods.ts';
import { HARD_DECLINE_CODES, MAX_ATTEMPTS_PER_PAYMENT, retryDecision, type AttemptFailure } from './machine/retry.ts';
import { surchargeFor } from './surcharges.ts';
import { profileFor } from '../merchants/profile-service.ts';
import { profileSettings, type ProfileSettings } from '../merchants/profile-settings.ts';
import { Prisma, type ConnectorAccount, type PaymentAttempt, type PaymentIntent, type SavedPaymentMethod } from '../../generated/prisma/client.ts';
import type { ConnectorAccountService } from '../connectors/service.ts';
import type { ServiceContext } from '../../platform/context.ts';
import type { CustomerService } from '../customers/service.ts';
import type { CommittedEvent } from '../events/outbox.ts';
import type { MandateService } from '../mandates/service.ts';
import { connectionPage, DEFAULT_PAGE_SIZE, olderThanCursor } from '../../platform/db/pagination.ts';
import type { MerchantPrincipal, Principal, SecretKeyPrincipal } from '../../kernel/principal.ts';
import { parseInput } from '../../platform/validation.ts';
import { cancelPaymentInput, capturePaymentInput, confirmPaymentInput, createPaymentInput, listPaymentsInput } from './inputs.ts';
import { keptFields } from './kept-fields.ts';
import { PaymentStore, type Commit, type Payment, type PaymentPublisher } from './store.ts';
import type { PaymentSyncJob, PaymentSyncScheduler } from '../processor-sync/scheduler.ts';
import { askProcessor, runSyncStep } from '../processor-sync/steps.ts';

/** How many times an answer is re-applied when a concurrent request moved the payment first. */
const MAX_COMMIT_RETRIES = 3;

/** Attempt statuses in which the customer is in the middle of 3DS (or a redirect) at the processor. */
const AWAITING_CUSTOMER: ReadonlySet<AttemptStatus> = new Set(['DEVICE_DATA_COLLECTION_PENDING', 'AUTHENTICATION_PENDING']);

/** Failed attempts after which the customer may confirm again with another method (not a failed capture or void). */
const MANUALLY_RETRYABLE: ReadonlySet<AttemptStatus> = new Set(['AUTHORIZATION_FAILED', 'AUTHENTICATION_FAILED', 'FAILURE']);

/** Intent states in which the customer's money is authorized or taken. */
const PAID: ReadonlySet<Payment['status']> = new Set(['REQUIRES_CAPTURE', 'PARTIALLY_AUTHORIZED', 'SUCCEEDED', 'PARTIALLY_CAPTURED']);

interface ConfirmOptions {
  returnUrl: string | null;
  /** Ask the processor for the card's reusable token, kept on the payment's customer once it is paid. */
  saveCard: boolean;
  /** The saved card the payment is confirmed with. */
  saved: SavedPaymentMethod | null;
}

type AuthorizeOutcome = { answer: ProcessorPayment } | { error: ConnectorError };

/** The failure of an authorization, as retry rules see it; null when it did not fail (or left the outcome unknown). */
function attemptFailureOf(outcome: AuthorizeOutcome): AttemptFailure | null {
  if ('error' in outcome) {
    return outcome.error.outcomeUnknown ? null : { kind: 'not_processed', code: outcome.error.processorCode ?? `connector_${outcome.error.kind}` };
  }
  const { answer } = outcome;
  return answer.status === 'failed' && answer.error ? { kind: 'declined', code: answer.error.code, retryable: answer.error.retryable } : null;
}

function failureMessage(outcome: AuthorizeOutcome): string {
  return 'error' in outcome ? outcome.error.message : (outcome.answer.error?.message ?? 'failed');
}

export class PaymentService {
  readonly store: PaymentStore;
  readonly #clientSecretKey: Buffer;
  readonly #fingerprintKey: Buffer;
  readonly #redirectKey: Buffer;

  constructor(
    private readonly context: ServiceContext,
    private readonly connectorAccounts: ConnectorAccountService,
    private readonly customers: CustomerService,
    private readonly mandates: MandateService,
    publisher: PaymentPublisher,
    private readonly syncScheduler: PaymentSyncScheduler,
  ) {
    this.store = new PaymentStore(context.db, publisher);
    // Separate keys derived from ENCRYPTION_KEY, so one purpose's values say nothing about another's.
    this.#clientSecretKey = createHmac('sha256', context.config.encryptionKey).update('client-secret').digest();
    this.#fingerprintKey = createHmac('sha256', context.config.encryptionKey).update('card-fingerprint').digest();
    this.#redirectKey = createHmac('sha256', context.config.encryptionKey).update('redirect-return').digest();
  }

  /** `<payment id>_secret_<HMAC>`: derived, so it is never stored and can be shown again to the merchant. */
  clientSecretFor(paymentId: string): string {
    return `${paymentId}_secret_${createHmac('sha256', this.#clientSecretKey).update(paymentId).digest('base64url').slice(0, 24)}`;
  }

  /**
   * A payment's active attempt: the one it carries when this service returned it (the state it committed, so
   * a subscription's payload never mixes with a later read), otherwise read by id. Prisma batches the
   * findUnique reads of one tick into one query, so a page of payments costs one read, not one each.
   */
  async activeAttemptOf(payment: PaymentIntent | Payment): Promise<PaymentAttempt> {
    if ('activeAttempt' in payment) return payment.activeAttempt;
    return this.context.db.paymentAttempt.findUniqueOrThrow({ where: { id: payment.activeAttemptId! } });
  }

  /** The payment a client secret belongs to, checked in constant time; UNAUTHENTICATED otherwise. */
  paymentIdOfClientSecret(clientSecret: string): string {
    const paymentId = clientSecret.split('_secret_')[0] ?? '';
    if (!paymentId || !secretsEqual(clientSecret, this.clientSecretFor(paymentId))) {
      throw new AppError('UNAUTHENTICATED', 'The client secret is not valid.', { field: 'clientSecret' });
    }
    return paymentId;
  }

  /** The payment, if `principal` may see it: its merchant's key of the same mode, or a publishable key with its client secret. */
  async getVisible(principal: Principal, paymentId: string, clientSecret?: string | null): Promise<Payment> {
    if (principal.kind === 'publishableKey') {
      if (!clientSecret || this.paymentIdOfClientSecret(clientSecret) !== paymentId) {
        throw new AppError('FORBIDDEN', 'A publishable key needs this payment’s client secret.', { field: 'clientSecret' });
      }
    } else if (principal.kind !== 'secretKey') {
      throw new AppError('FORBIDDEN', 'This operation needs a secret key, or a publishable key with the client secret.');
    }
    const payment = await this.store.find(paymentId);
    if (payment === null || payment.merchantId !== principal.merchantId) throw notFound('payment', paymentId);
    if (payment.mode !== principal.mode) {
      throw new AppError('NOT_FOUND', `No payment with id "${paymentId}" exists in ${principal.mode.toLowerCase()} mode; it is a ${payment.mode.toLowerCase()} payment.`);
    }
    return payment;
  }

  /**
   * `origin` is set by the product, never by API input: the payment link a customer opened, or the
   * subscription period a worker charges (unique: a second charge of one period fails before the processor).
   */
  async create(principal: SecretKeyPrincipal, rawInput: unknown, origin: { paymentLinkId?: string; subscriptionPeriod?: string } = {}): Promise<Payment> {
    const input = parseInput(createPaymentInput, rawInput);
    const profile = await profileFor(this.context.db, principal.merchantId, input.profileId);
    const settings = profileSettings(profile, principal.mode);
    // A merchant-initiated payment charges the mandate's saved card, off session (no CVC, nobody to ask).
    const mandate = input.mandateId ? await this.mandates.chargeable(principal, input.mandateId, input.customerId ?? null) : null;
    const customerId = input.customerId ?? mandate?.customerId ?? null;
    const method: PaymentMethod | null = mandate
      ? { type: 'saved_card', token: this.mandates.processorToken(mandate), cvc: null }
      : (input.paymentMethodData ?? null);
    // A payment that could not be confirmed is refused before anything is written.
    if (input.confirm) {
      const routed = { ...principal, currency: input.currency, country: input.country ?? null, connectors: input.connectors ?? [] };
      await this.routeCandidates(routed, settings, method!, mandate?.savedPaymentMethod ?? null);
    }
    // The charge starts here: a revocation committed before this claim refuses it, before anything is written.
    if (mandate) await this.mandates.claimForCharge(mandate);

    const paymentId = newId('payment');
    const attemptId = newId('attempt');
    const now = new Date();
    // Every column, so the payment returned is the row as written (no read back).
    const created: Payment = {
      id: paymentId,
      merchantId: principal.merchantId,
      profileId: profile.id,
      mode: principal.mode,
      status: 'REQUIRES_PAYMENT_METHOD',
      amount: input.amount,
      currency: input.currency,
      captureMethod: input.captureMethod,
      authenticationType: input.authenticationType,
      amountCapturable: 0,
      amountReceived: 0,
      amountRefunded: 0,
      surchargeAmount: 0,
      customerId,
      mandateId: mandate?.id ?? null,
      paymentLinkId: origin.paymentLinkId ?? null,
      subscriptionPeriod: origin.subscriptionPeriod ?? null,
      country: input.country ?? null,
      description: input.description ?? null,
      metadata: input.metadata ?? null,
      returnUrl: input.returnUrl ?? null,
      setupFutureUsage: input.setupFutureUsage ?? null,
      connectors: input.connectors ?? [],
      expiresAt: new Date(now.getTime() + settings.sessionExpirySeconds * 1000),
      activeAttemptId: attemptId,
      attemptCount: 1,
      cancellationReason: null,
      errorCode: null,
      errorMessage: null,
      syncExhaustedAt: null,
      version: 0,
      createdAt: now,
      updatedAt: now,
      activeAttempt: {
        id: attemptId,
        paymentId,
        attemptNumber: 1,
        status: 'PAYMENT_METHOD_AWAITED',
        amount: input.amount,
        currency: input.currency,
        captureMethod: input.captureMethod,
        authenticationType: input.authenticationType,
        connectorAccountId: null,
        connectorName: null,
        connectorTransactionId: null,
        amountCapturable: 0,
        amountCaptured: 0,
        paymentMethodType: null,
        cardBrand: null,
        cardLast4: null,
        cardExpiryMonth: null,
        cardExpiryYear: null,
        cardHolderName: null,
        cardFingerprint: null,
        redirectUrl: null,
        nextAction: null,
        paymentMethodDetails: null,
        savedPaymentMethodId: null,
        errorCode: null,
        errorMessage: null,
        createdAt: now,
        updatedAt: now,
      },
    };
    let payment = await this.store.insert(created, principal.keyId);
    if (input.paymentMethodData) {
      payment = await this.store.commit(payment, {
        moves: [transitionAttempt(payment.activeAttempt.status, 'payment_method_supplied')],
        attempt: keptFields(input.paymentMethodData, this.fingerprintKey(principal.merchantId), null),
        actor: principal.keyId,
      });
    }
    if (mandate) {
      return this.confirmLoaded(principal, payment, method!, { returnUrl: null, saveCard: false, saved: mandate.savedPaymentMethod });
    }
    if (input.confirm) return this.confirmLoaded(principal, payment, method!, { returnUrl: null, saveCard: false, saved: null });
    return payment;
  }

  async confirm(principal: Principal, rawInput: unknown): Promise<Payment> {
    const input = parseInput(confirmPaymentInput, rawInput);
    const paymentId = this.paymentIdOfClientSecret(input.clientSecret);
    const payment = await this.expiredOrAsIs(await this.getVisible(principal, paymentId, input.clientSecret));
    if (payment.status === 'EXPIRED') {
      throw new AppError('INVALID_STATE', `This payment expired at ${payment.expiresAt!.toISOString()} without being confirmed; create a new one.`, { status: payment.status });
    }
    const returnUrl = input.returnUrl ?? null;
    if (returnUrl && principal.kind === 'publishableKey') this.refuseBrowserReturnUrl(payment, returnUrl);
    if (input.savePaymentMethod && payment.customerId === null) throw invalidInput('savePaymentMethod', 'needs a payment created with a customerId');
    let method: PaymentMethod;
    let saved: SavedPaymentMethod | null = null;
    if (input.paymentMethodId) {
      saved = await this.customers.savedCard(payment.merchantId, payment.mode, payment.customerId, input.paymentMethodId);
      method = { type: 'saved_card', token: this.customers.processorToken(saved), cvc: input.cardCvc! };
    } else if (input.paymentMethodData) {
      method = input.paymentMethodData;
    } else {
      // Card numbers and account details are never stored, so they come with the confirm even if given at create.
      // INVALID_STATE first, if the payment cannot be confirmed whatever it is given.
      if (!UNCONFIRMED_INTENT_STATUSES.has(payment.status) && payment.status !== 'FAILED') transitionAttempt(payment.activeAttempt.status, 'confirm');
      throw invalidInput('paymentMethodData', 'payment method details (or a saved paymentMethodId) are required to confirm; card numbers are never stored');
    }
    if (payment.captureMethod === 'MANUAL' && !supportsManualCapture(methodTypeOf(method))) {
      throw invalidInput('paymentMethodData', `${methodTypeOf(method)} settles later and cannot be captured manually; create the payment with captureMethod AUTOMATIC`);
    }
    return this.confirmLoaded(principal as MerchantPrincipal, payment, method, { returnUrl, saveCard: input.savePaymentMethod ?? false, saved });
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
  private async confirmLoaded(principal: MerchantPrincipal, payment: Payment, method: PaymentMethod, options: ConfirmOptions): Promise<Payment> {
    const profile = await this.context.db.businessProfile.findUniqueOrThrow({ where: { id: payment.profileId } });
    const settings = profileSettings(profile, payment.mode);
    const candidates = await this.routeCandidates(payment, settings, method, options.saved);
    const kept = keptFields(method, this.fingerprintKey(payment.merchantId), options.saved);
    const routedTo = (account: ConnectorAccount) => ({ ...kept, connectorAccountId: account.id, connectorName: account.connectorName });
    // The profile's surcharge for the method paid with is fixed at confirm, for every attempt of this confirm.
    const surchargeAmount = surchargeFor(payment.amount, methodTypeOf(method), settings.surcharges);
    const intent = { surchargeAmount, ...(options.returnUrl ? { returnUrl: options.returnUrl } : {}) };
    let pending: Payment;
    if (payment.status === 'FAILED') {
      if (!MANUALLY_RETRYABLE.has(payment.activeAttempt.status)) {
        throw new AppError('INVALID_STATE', `A FAILED payment whose attempt ended ${payment.activeAttempt.status} cannot be confirmed again.`, { status: payment.status });
      }
      if (payment.attemptCount >= MAX_ATTEMPTS_PER_PAYMENT) {
        throw new AppError('INVALID_STATE', `This FAILED payment has had ${payment.attemptCount} attempts, the most allowed; create a new payment.`, { status: payment.status });
      }
      await this.refuseHardDeclinedCard(payment, kept.cardFingerprint);
      pending = await this.store.startAttempt(payment, { closeMove: null, attempt: routedTo(candidates[0]!), intent: { ...intent, errorCode: null, errorMessage: null }, trigger: 'manual_retry', actor: principal.keyId });
    } else {
      const moves: AttemptTransition[] = [];
      let status = payment.activeAttempt.status;
      if (status === 'PAYMENT_METHOD_AWAITED' || status === 'CONFIRMATION_AWAITED') {
        const supplied = transitionAttempt(status, 'payment_method_supplied');
        // Re-supplying the same card at confirm is not a change worth a history row.
        if (supplied.to !== status || payment.activeAttempt.cardFingerprint !== kept.cardFingerprint) moves.push(supplied);
        status = supplied.to;
      }
      moves.push(transitionAttempt(status, 'confirm'));
      pending = await this.store.commit(payment, { moves, attempt: routedTo(candidates[0]!), intent, actor: principal.keyId });
    }
    for (let index = 0, retriesUsed = 0; ; index += 1) {
      const account = candidates[index]!;
      // A setup for future off-session payments needs the processor's reusable token of the card.
      const saveCard = options.saveCard || (pending.setupFutureUsage === 'OFF_SESSION' && method.type === 'card');
      // Partial authorization leaves an amount to capture: only for payments captured by the merchant.
      // Not with 3DS either: the table has no partial row after authentication.
      const allowPartialAuthorization = settings.allowPartialAuthorization && pending.captureMethod === 'MANUAL' && pending.authenticationType === 'NO_THREE_DS';
      const outcome = await this.authorizeAt(pending, account, method, { saveCard, allowPartialAuthorization });
      const failure = attemptFailureOf(outcome);
      if (failure !== null) {
        const decision = retryDecision(failure, {
          retriesUsed,
          maxRetries: settings.maxRetries,
          retryableDeclineCodes: settings.retryableDeclineCodes,
          nextConnectorAvailable: index + 1 < candidates.length && pending.attemptCount < MAX_ATTEMPTS_PER_PAYMENT,
        });
        if (decision.retry) {
          const error = { errorCode: failure.code, errorMessage: failureMessage(outcome) };
          try {
            pending = await this.store.startAttempt(pending, {
              closeMove: transitionAttempt('PENDING', 'processor_call', { result: 'failure', retry: true }),
              closeFields: { ...error, connectorTransactionId: 'answer' in outcome ? outcome.answer.transactionId : null },
              attempt: routedTo(candidates[index + 1]!),
              trigger: 'retry',
              actor: 'processor',
            });
          } catch (conflict) {
            // A callback or sync moved the payment first (it learnt the same failure): what it did stands.
            if (!(conflict instanceof AppError && conflict.code === 'CONFLICT')) throw conflict;
            return this.settled(pending, await this.store.get(pending.id));
          }
          retriesUsed += 1;
          continue;
        }
        this.context.logger.info({ paymentId: pending.id, code: failure.code, reason: decision.reason }, 'attempt failed without retry');
      }
      if ('error' in outcome) return this.settled(pending, await this.afterConnectorError(pending, outcome.error, 'processor_call'));
      const result = await this.applyAnswer(pending, outcome.answer, 'processor');
      if (options.saved && result.activeAttempt.id === pending.activeAttempt.id && PAID.has(result.status)) await this.customers.markUsed(options.saved.id);
      return this.settled(pending, this.declinedOrResult(result, outcome.answer));
    }
  }

  /**
   * A manual retry may not send a card back to be declined again for a reason that will not change
   * (insufficient funds, stolen, ...): it would only test the card. Another method is welcome.
   */
  private async refuseHardDeclinedCard(payment: Payment, cardFingerprint: string | null | undefined): Promise<void> {
    if (!cardFingerprint) return;
    const declined = await this.context.db.paymentAttempt.findFirst({
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
    options: { saveCard: boolean; allowPartialAuthorization: boolean },
  ): Promise<AuthorizeOutcome> {
    try {
      const answer = await this.connectorAccounts.connectorFor(account).authorize({
        reference: pending.activeAttempt.id,
        amount: pending.amount + pending.surchargeAmount,
        currency: pending.currency,
        captureMethod: pending.captureMethod,
        threeDs: pending.authenticationType === 'THREE_DS',
        paymentMethod: method,
        ...options,
        returnUrl: this.redirectReturnUrl(pending.id, pending.activeAttempt.id, account.connectorName),
      });
      return { answer };
    } catch (error) {
      if (error instanceof ConnectorError) return { error };
      throw error;
    }
  }

  /**
   * The connector accounts a payment may use, in routing order; a saved card is usable only at the account
   * that issued its token. INVALID_INPUT naming the method when none accepts it.
   */
  private async routeCandidates(
    payment: Pick<Payment, 'merchantId' | 'mode' | 'currency' | 'country' | 'connectors'>,
    settings: Pick<ProfileSettings, 'routing'>,
    method: PaymentMethod,
    saved: SavedPaymentMethod | null,
  ): Promise<ConnectorAccount[]> {
    const paymentMethodType = methodTypeOf(method);
    const eligible = await this.connectorAccounts.eligible({
      merchantId: payment.merchantId,
      mode: payment.mode,
      paymentMethodType,
      currency: payment.currency,
      country: payment.country,
      paymentConnectors: payment.connectors,
      profileRouting: settings.routing,
    });
    const candidates = saved ? eligible.filter((account) => account.id === saved.connectorAccountId) : eligible;
    if (candidates.length === 0) {
      const field = saved ? 'paymentMethodId' : 'paymentMethodData';
      const where = `${payment.currency}${payment.country ? ` from ${payment.country}` : ''} in ${payment.mode.toLowerCase()} mode`;
      throw invalidInput(field, `no connector account of this merchant accepts ${paymentMethodType} payments in ${where}${saved ? ' at the account that saved this card' : ''}; see paymentMethods, or createConnectorAccount`);
    }
    return candidates;
  }

  async capture(principal: SecretKeyPrincipal, rawInput: unknown): Promise<Payment> {
    const input = parseInput(capturePaymentInput, rawInput);
    const payment = await this.getVisible(principal, input.paymentId);
    const move = transitionAttempt(payment.activeAttempt.status, 'capture');
    const capturable = payment.activeAttempt.amountCapturable;
    const amount = input.amountToCapture ?? capturable;
    if (amount < 1 || amount > capturable) throw invalidInput('amountToCapture', `must be between 1 and the capturable amount ${capturable}`);
    const initiated = await this.store.commit(payment, { moves: [move], actor: principal.keyId });
    const connector = await this.connectorOf(initiated);
    try {
      const answer = await connector.capture(initiated.activeAttempt.connectorTransactionId!, amount, `${initiated.activeAttempt.id}_capture`);
      return this.settled(initiated, this.declinedOrResult(await this.applyAnswer(initiated, answer, 'processor'), answer));
    } catch (error) {
      return this.settled(initiated, await this.afterConnectorError(initiated, error, 'capture_at_processor'));
    }
  }

  /**
   * Cancels a payment that is not paid: before confirm or during 3DS here only (the seed: such a payment is
   * not voided at the processor), an authorization by a void at the processor. Never a payment that took
   * money: that is cancelPostCapture's.
   */
  async cancel(principal: SecretKeyPrincipal, rawInput: unknown): Promise<Payment> {
    const input = parseInput(cancelPaymentInput, rawInput);
    let payment = await this.getVisible(principal, input.paymentId);
    // During 3DS the customer may have completed the challenge a moment ago: read the processor's view first,
    // so a payment it has already authorized is voided there rather than forgotten here, and one it has
    // already charged is refused (a void after capture is its own operation).
    if (payment.activeAttempt.connectorTransactionId !== null && AWAITING_CUSTOMER.has(payment.activeAttempt.status)) {
      // A processor that cannot be asked does not block the cancel.
      payment = await this.syncPayment(payment, 'sync').catch((error: unknown) => {
        if (error instanceof AppError && error.code === 'CONNECTOR_ERROR') return payment;
        throw error;
      });
    }
    return this.voided(principal, payment, transitionAttempt(payment.activeAttempt.status, 'void'), input.cancellationReason);
  }

  /** Voids a captured payment at the processor, where it supports that: all the money goes back. */
  async cancelPostCapture(principal: SecretKeyPrincipal, rawInput: unknown): Promise<Payment> {
    const input = parseInput(cancelPaymentInput, rawInput);
    const payment = await this.getVisible(principal, input.paymentId);
    const move = transitionAttempt(payment.activeAttempt.status, 'void_after_capture');
    await this.refuseVoidAfterRefundOrDispute(payment);
    return this.voided(principal, payment, move, input.cancellationReason);
  }

  /** Commits a cancel's `move` and, when it is a void at the processor, asks the processor for it. */
  private async voided(principal: SecretKeyPrincipal, payment: Payment, move: AttemptTransition, cancellationReason: string | null | undefined): Promise<Payment> {
    const cancelled = await this.store.commit(payment, { moves: [move], intent: { cancellationReason: cancellationReason ?? null }, actor: principal.keyId });
    if (move.effect !== 'void_at_processor') return cancelled;
    const connector = await this.connectorOf(cancelled);
    try {
      const answer = await connector.void(cancelled.activeAttempt.connectorTransactionId!, `${cancelled.activeAttempt.id}_void`);
      return this.settled(cancelled, await this.applyAnswer(cancelled, answer, 'processor'));
    } catch (error) {
      return this.settled(cancelled, await this.afterConnectorError(cancelled, error, 'void_at_processor'));
    }
  }

  /**
   * A void after capture gives all the money back: not once a refund holds part of it or a dispute is open
   * (the processor would refuse, and the amounts would no longer add up). A refund reserved after this
   * check bumps the payment's version, so the void's own commit then fails with CONFLICT.
   */
  private async refuseVoidAfterRefundOrDispute(payment: Payment): Promise<void> {
    if (payment.amountRefunded > 0) {
      throw new AppError('INVALID_STATE', `A ${payment.status} payment with refunds cannot be voided after capture; refund the rest instead.`, { status: payment.status });
    }
    if ((await this.context.db.dispute.count({ where: { paymentId: payment.id } })) > 0) {
      throw new AppError('INVALID_STATE', `A disputed ${payment.status} payment cannot be voided after capture.`, { status: payment.status });
    }
  }

  /** Asks the processor for the truth of a payment that is waiting on it; terminal payments are returned as they are. */
  async sync(principal: Principal, paymentId: string): Promise<Payment> {
    return this.syncPayment(await this.getVisible(principal, paymentId), 'sync');
  }

  /**
   * A processor's callback about the payment whose attempt has `answer.transactionId` at the connector
   * account: applied through the same table as every other answer, so a duplicate, late or out-of-order
   * one changes nothing. Null when the account has no such attempt. Only the active attempt's news moves
   * the payment (an earlier attempt's outcome is history).
   */
  async applyCallback(
    connectorAccountId: string,
    answer: ProcessorPayment,
    reference: string | null,
  ): Promise<{ paymentId: string; outcome: 'committed' | 'unchanged' | 'deferred' } | null> {
    // By the processor's id, or (an attempt whose authorization timed out has none yet) by our reference.
    const attempt = await this.context.db.paymentAttempt.findFirst({
      where: {
        connectorAccountId,
        OR: [{ connectorTransactionId: answer.transactionId }, ...(reference !== null && isId('attempt', reference) ? [{ id: reference }] : [])],
      },
      select: { id: true, paymentId: true },
    });
    if (attempt === null) return null;
    // A callback is a snapshot from when it was sent (a processor's retry may be minutes old): it moves the
    // payment along the table's ordinary rows only, never the recovery rows a stalled sync may take.
    const { payment, outcome } = await this.applyAnswerTo(attempt.paymentId, answer, 'callback', { attemptId: attempt.id, recoveryRows: false });
    return { paymentId: payment.id, outcome };
  }

  /**
   * Where the processor returns the customer after 3DS or a redirect: sync, then tell the caller where to
   * send the browser. No key: the route is public, so it needs the token of the return URL the processor was
   * given for the active attempt; anything else is NOT_FOUND, before any sync, as for an unknown payment.
   */
  async returnFromRedirect(paymentId: string, connectorName: string, token: string): Promise<{ payment: Payment; location: string | null }> {
    const found = await this.store.find(paymentId);
    if (found === null || found.activeAttempt.connectorName !== connectorName || !secretsEqual(token, this.redirectToken(found.activeAttempt.id))) {
      throw notFound('payment', paymentId);
    }
    const payment = await this.syncPayment(found, 'redirect');
    if (!payment.returnUrl) return { payment, location: null };
    return { payment, location: returnLocation(payment.returnUrl, payment.id, payment.status) };
  }

  async list(principal: SecretKeyPrincipal, rawInput: unknown) {
    const input = parseInput(listPaymentsInput, rawInput);
    const first = input.first ?? DEFAULT_PAGE_SIZE;
    const where: Prisma.PaymentIntentWhereInput = {
      merchantId: principal.merchantId,
      mode: principal.mode,
      ...(input.status ? { status: input.status as Payment['status'] } : {}),
      ...(input.customerId ? { customerId: input.customerId } : {}),
      createdAt: { ...(input.createdAfter ? { gte: input.createdAfter } : {}), ...(input.createdBefore ? { lt: input.createdBefore } : {}) },
      ...olderThanCursor(input.after, 'payment'),
    };
    const rows = await this.context.db.paymentIntent.findMany({ where, orderBy: [{ createdAt: 'desc' }, { id: 'desc' }], take: first + 1 });
    return connectionPage(rows, first);
  }

  /**
   * One step of the sync schedule (run by the worker): syncs a payment still waiting on its processor, then
   * schedules the next step, or flags the payment for the merchant when the schedule has run out. A payment
   * that moved on (final, or retried on another attempt, which has its own schedule) ends the chain.
   */
  runScheduledSync(job: PaymentSyncJob): Promise<void> {
    return runSyncStep(
      { kind: 'payment', id: job.paymentId, step: job.step },
      {
        load: (id) => this.store.find(id),
        isOpen: (payment) => payment.activeAttempt.id === job.attemptId && AWAITING_PROCESSOR_INTENT_STATUSES.has(payment.status),
        sync: (payment) => this.syncPayment(payment, 'scheduled_sync'),
        scheduleStep: (step) => this.syncScheduler.schedule({ ...job, step }),
        flagExhausted: (id) => this.store.markSyncExhausted(id),
      },
      this.context.logger,
    );
  }

  /**
   * Expires the unconfirmed payments whose session expiry has passed, at most `limit` of them (run by the
   * worker's sweep); returns how many it expired. A payment confirmed meanwhile is left alone.
   */
  async expireDue(limit: number, now = new Date()): Promise<number> {
    const due = await this.context.db.paymentIntent.findMany({
      where: { status: { in: [...UNCONFIRMED_INTENT_STATUSES] }, expiresAt: { lte: now } },
      select: { id: true },
      orderBy: { expiresAt: 'asc' },
      take: limit,
    });
    let expired = 0;
    for (const { id } of due) {
      const payment = await this.expiredOrAsIs(await this.store.get(id), now).catch((error: unknown) => {
        // Confirmed or expired by someone else a moment ago: nothing to do.
        if (error instanceof AppError && (error.code === 'CONFLICT' || error.code === 'INVALID_STATE')) return null;
        throw error;
      });
      if (payment?.status === 'EXPIRED') expired += 1;
    }
    return expired;
  }

  /** `payment`, expired first if it is unconfirmed and its session expiry has passed (payment_expired). */
  private async expiredOrAsIs(payment: Payment, now = new Date()): Promise<Payment> {
    if (!UNCONFIRMED_INTENT_STATUSES.has(payment.status) || payment.expiresAt === null || payment.expiresAt > now) return payment;
    const error = { errorCode: 'payment_expired', errorMessage: 'The payment was not confirmed within its session expiry.' };
    return this.store.commit(payment, { moves: [transitionAttempt(payment.activeAttempt.status, 'expire')], attempt: error, intent: error, actor: 'expiry' });
  }

  /**
   * After a processor call about `sent` (its pending state, committed with no event): announced if it
   * rests in PROCESSING, then watched while it waits on its processor.
   */
  private async settled(sent: Payment, result: Payment): Promise<Payment> {
    return this.watched(await this.announcedIfResting(sent, result));
  }

  /**
   * A payment the call left PROCESSING (the processor answered pending, or the call timed out) rests there:
   * that is news (payment_processing), written now. Anywhere else the answer's commit emitted the event of
   * where it landed; a process that died before it leaves that to the sync that resolves the payment. A void
   * after capture on its way stays quiet: the payment is paid until the void succeeds.
   */
  private async announcedIfResting(sent: Payment, result: Payment): Promise<Payment> {
    let payment = result;
    for (let conflicts = 0; ; ) {
      const resting = payment.status === 'PROCESSING' && payment.activeAttempt.id === sent.activeAttempt.id && payment.activeAttempt.status !== 'VOID_POST_CHARGE_INITIATED';
      if (!resting) return payment;
      try {
        return await this.store.commit(payment, { moves: [], announce: true, actor: 'processor' });
      } catch (error) {
        if (!(error instanceof AppError && error.code === 'CONFLICT')) throw error;
        // Moved meanwhile (a callback, a sync): announce what it rests in now, unless it moved on.
        if (++conflicts >= MAX_COMMIT_RETRIES) return payment;
        payment = await this.store.get(sent.id);
      }
    }
  }

  /** Starts the sync schedule of a payment left waiting on its processor by the call that just returned. */
  private async watched(payment: Payment): Promise<Payment> {
    if (!AWAITING_PROCESSOR_INTENT_STATUSES.has(payment.status)) return payment;
    try {
      await this.syncScheduler.schedule({ paymentId: payment.id, attemptId: payment.activeAttempt.id, step: 0 });
    } catch (error) {
      // The processor has acted and the state is committed: the caller must learn it. The payment stays
      // syncable (syncPayment, the redirect route); operators see the failure here and in /ready.
      this.context.logger.error({ paymentId: payment.id, err: error }, 'could not schedule the sync of a payment waiting on its processor');
    }
    return payment;
  }

  private async syncPayment(payment: Payment, actor: string): Promise<Payment> {
    if (!SYNCABLE_INTENT_STATUSES.has(payment.status) || payment.activeAttempt.connectorAccountId === null) return payment;
    const connector = await this.connectorOf(payment);
    const { connectorTransactionId, id: attemptId } = payment.activeAttempt;
    // A timed-out authorization left no transaction id: find it by our reference.
    const answer = await askProcessor(connectorTransactionId, (id) => connector.sync(id), () => connector.findByReference(attemptId));
    if (answer !== null) return this.applyAnswer(payment, answer, actor);
    // The processor has no payment for the attempt. Once its authorization request has certainly ended,
    // that is final: the request never reached the processor, and the attempt failed without a charge.
    if (payment.activeAttempt.status !== 'PENDING' || !this.isStalled(payment)) return payment;
    const error = { errorCode: 'not_received_by_processor', errorMessage: 'The authorization request never reached the processor.' };
    return this.store.commit(payment, {
      moves: [transitionAttempt('PENDING', 'processor_call', { result: 'failure' })],
      attempt: error,
      intent: error,
      actor,
    });
  }

  /**
   * Moves the payment to what the processor reports, along the table's rows only. An answer that no row
   * leads to (late, duplicate or out of order) changes nothing; neither does `pending` (still working).
   * Re-reads and re-plans when a concurrent request moved the payment first.
   */
  /**
   * The processor's answer about `asked`'s active attempt: applied to that attempt only. If another attempt
   * became active meanwhile (a retry, a manual retry after a callback), the answer changes nothing.
   */
  private async applyAnswer(asked: Payment, answer: ProcessorPayment, actor: string): Promise<Payment> {
    return (await this.applyAnswerTo(asked.id, answer, actor, { attemptId: asked.activeAttempt.id, held: asked })).payment;
  }

  /**
   * applyAnswer, saying whether it committed a change, changed nothing, or gave up to concurrent changes
   * (deferred to sync). `attemptId`: only while that attempt is the active one (on every re-read).
   * `recoveryRows: false`: never the stalled-request recovery rows (for answers that may be old).
   * `held`: the state the caller committed just before asking the processor, tried first without reading
   * it again (two statements fewer on every confirm, capture and void): the commit's version guard refuses
   * it if anything changed meanwhile, and then the payment is read. Only a fresh read may conclude that the
   * answer changes nothing, and a conflict on the held state does not count against the retries.
   */
  private async applyAnswerTo(
    paymentId: string,
    answer: ProcessorPayment,
    actor: string,
    options: { attemptId?: string; recoveryRows?: boolean; held?: Payment } = {},
  ): Promise<{ payment: Payment; outcome: 'committed' | 'unchanged' | 'deferred' }> {
    let held = options.held;
    for (let conflicts = 0; ; ) {
      const payment = held ?? (await this.store.get(paymentId));
      const onHeld = held !== undefined;
      held = undefined;
      const plan = this.planAnswer(payment, answer, options);
      if ('unchanged' in plan) {
        if (onHeld) continue;
        if (plan.unchanged) this.context.logger[plan.unchanged.level]({ paymentId, status: payment.activeAttempt.status, answer: answer.status, actor }, plan.unchanged.message);
        return { payment, outcome: 'unchanged' };
      }
      try {
        const moved = await this.store.commit(payment, { ...plan.commit, actor, alsoInTransaction: (after) => this.cardToKeep(payment, after, answer) });
        return { payment: moved, outcome: 'committed' };
      } catch (error) {
        if (!(error instanceof AppError && error.code === 'CONFLICT')) throw error;
        if (!onHeld && ++conflicts >= MAX_COMMIT_RETRIES) {
          // The processor acted; its answer is not lost but deferred: a sync reads it again.
          this.context.logger.warn({ paymentId, answer: answer.status }, 'processor answer deferred to sync after repeated concurrent changes');
          return { payment: await this.store.get(paymentId), outcome: 'deferred' };
        }
      }
    }
  }

  /**
   * What the processor's answer does to `payment` as it stands: the commit it makes, or nothing (with what
   * to log, if it is worth a line). Pure: the caller reads and commits.
   */
  private planAnswer(
    payment: Payment,
    answer: ProcessorPayment,
    options: { attemptId?: string; recoveryRows?: boolean },
  ): { commit: Omit<Commit, 'actor'> } | { unchanged: { level: 'info' | 'error'; message: string } | null } {
    if (options.attemptId !== undefined && payment.activeAttempt.id !== options.attemptId) return { unchanged: null };
    const amountsProblem = answer.status === 'pending' ? null : processorAmountsProblem(answer.status, answer.amountCaptured, answer.amountCapturable, payment.amount + payment.surchargeAmount);
    if (amountsProblem !== null) return { unchanged: { level: 'error', message: `ignored a processor answer whose amounts do not fit the payment: ${amountsProblem}` } };
    const path =
      answer.status === 'pending'
        ? []
        : planProcessorUpdate(payment.activeAttempt.status, ATTEMPT_TARGETS[answer.status], {
            captureMethod: payment.captureMethod,
            stalled: options.recoveryRows !== false && this.isStalled(payment),
          });
    if (path === null) return { unchanged: { level: 'info', message: 'ignored a processor answer no transition leads to' } };
    if (path.length === 0) {
      // Still learn the processor's id of a pending attempt (a timed-out call), without moving it.
      return payment.activeAttempt.connectorTransactionId === null ? { commit: { moves: [], attempt: { connectorTransactionId: answer.transactionId } } } : { unchanged: null };
    }
    return {
      commit: {
        moves: path,
        attempt: {
          connectorTransactionId: answer.transactionId,
          amountCapturable: answer.amountCapturable,
          amountCaptured: answer.amountCaptured,
          redirectUrl: answer.nextAction?.url ?? null,
          nextAction: (answer.nextAction ?? Prisma.DbNull) as Prisma.InputJsonValue,
          errorCode: answer.error?.code ?? null,
          errorMessage: answer.error?.message ?? null,
        },
        intent: {
          amountCapturable: answer.amountCapturable,
          amountReceived: answer.amountCaptured,
          errorCode: answer.error?.code ?? null,
          errorMessage: answer.error?.message ?? null,
        },
      },
    };
  }

  /**
   * A processor gives a reusable card token only when asked (confirm with savePaymentMethod, or a setup for
   * off-session use); it is kept on the customer once the attempt is paid (authorized or charged), whether
   * that took one answer or a 3DS challenge and a sync later. A card that was declined or failed
   * authentication is never saved. A setup payment (setupFutureUsage OFF_SESSION) then gets its mandate,
   * on the card just saved or the saved card it was paid with. All in the transaction that records the
   * payment paid, so a crash cannot leave a paid setup without its mandate. Null when the move `before` →
   * `after` keeps nothing (most answers: the commit is then one statement, with no transaction around it).
   */
  private cardToKeep(before: Payment, after: Payment, answer: ProcessorPayment): ((tx: Prisma.TransactionClient) => Promise<CommittedEvent[]>) | null {
    const customerId = after.customerId;
    if (customerId === null || PAID.has(before.status) || !PAID.has(after.status)) return null;
    const { savedPaymentMethodId } = after.activeAttempt;
    if (savedPaymentMethodId === null && !answer.paymentMethodToken) return null;
    return async (tx) => {
      const customer = { merchantId: after.merchantId, mode: after.mode, customerId };
      const saved =
        savedPaymentMethodId !== null
          ? await tx.savedPaymentMethod.findUniqueOrThrow({ where: { id: savedPaymentMethodId } })
          : await this.customers.saveCard(customer, after.activeAttempt, answer.paymentMethodToken!, tx);
      // A mandate is a setup's, never a merchant-initiated payment's (which charges one already), on the token
      // this payment was paid with.
      if (after.setupFutureUsage !== 'OFF_SESSION' || after.mandateId !== null) return [];
      const token = answer.paymentMethodToken ?? this.customers.processorToken(saved);
      return this.mandates.recordForPayment(tx, { ...after, customerId }, saved, token);
    };
  }

  /** Whether the request that moved the attempt last has certainly ended (see AttemptConditions.stalled). */
  private isStalled(payment: Payment, now = Date.now()): boolean {
    return now - payment.activeAttempt.updatedAt.getTime() > 2 * this.context.config.CONNECTOR_TIMEOUT_MS;
  }

  /** A processor call that gave no answer: unknown outcome stays pending (sync resolves it); a refusal fails the step. */
  private async afterConnectorError(payment: Payment, error: unknown, trigger: 'processor_call' | 'capture_at_processor' | 'void_at_processor'): Promise<Payment> {
    if (!(error instanceof ConnectorError)) throw error;
    this.context.logger.warn({ paymentId: payment.id, kind: error.kind, err: error.message }, 'processor call failed');
    if (error.outcomeUnknown) return payment;
    // A refused void after capture leaves the charge as it was; every other refusal fails the step.
    const move =
      payment.activeAttempt.status === 'VOID_POST_CHARGE_INITIATED'
        ? transitionAttempt(payment.activeAttempt.status, 'void_refused')
        : transitionAttempt(payment.activeAttempt.status, trigger, { result: 'failure' });
    const failed = await this.store.commit(payment, {
      moves: [move],
      attempt: { errorCode: error.processorCode ?? 'connector_error', errorMessage: error.message },
      intent: { errorCode: error.processorCode ?? 'connector_error', errorMessage: error.message },
      actor: 'processor',
    });
    // A processor that answered "no" did not fail: its refusal is about this payment, so the caller gets a
    // 4xx to act on. Of an authorization (a bank, network or wallet it does not take), as a decline is: the
    // customer may pay another way. Of a capture or void, the payment's state at the processor forbids it
    // (the authorization lapsed, a refund holds part of it). Refused credentials are the merchant's setup.
    if (error.kind === 'rejected') {
      const processor = { processorCode: error.processorCode ?? null, processorMessage: error.message, paymentId: failed.id, status: failed.status };
      if (trigger === 'processor_call') {
        throw new AppError('PAYMENT_DECLINED', `The payment was declined: ${error.message}.`, { declineCode: processor.processorCode ?? 'processor_refused', declineMessage: error.message, ...processor });
      }
      throw new AppError('INVALID_STATE', `The processor refused the ${trigger === 'capture_at_processor' ? 'capture' : 'void'}: ${error.message}; the payment is ${failed.status}.`, processor);
    }
    throw new AppError('CONNECTOR_ERROR', `The processor failed: ${error.message}.`, { paymentId: failed.id, status: failed.status });
  }

  /** A definite decline is an error for the caller (the payment is FAILED and stays queryable). */
  private declinedOrResult(payment: Payment, answer: ProcessorPayment): Payment {
    if (payment.status === 'FAILED' && answer.error) {
      throw new AppError('PAYMENT_DECLINED', `The payment was declined: ${answer.error.message}`, {
        declineCode: answer.error.code,
        declineMessage: answer.error.message,
        paymentId: payment.id,
        status: payment.status,
      });
    }
    return payment;
  }

  private async connectorOf(payment: Payment): Promise<Connector> {
    const account = await this.context.db.connectorAccount.findUniqueOrThrow({ where: { id: payment.activeAttempt.connectorAccountId! } });
    return this.connectorAccounts.connectorFor(account);
  }

  /** The merchant's own fingerprint key, so merchants cannot match cards across accounts. */
  private fingerprintKey(merchantId: string): Buffer {
    return createHmac('sha256', this.#fingerprintKey).update(merchantId).digest();
  }

  /** The return URL a processor is given for one attempt: only its redirect carries the attempt's token. */
  redirectReturnUrl(paymentId: string, attemptId: string, connectorName: string): string {
    return `${this.context.publicUrl.replace(/\/$/, '')}/payments/${paymentId}/redirect/response/${connectorName}?token=${this.redirectToken(attemptId)}`;
  }

  private redirectToken(attemptId: string): string {
    return createHmac('sha256', this.#redirectKey).update(attemptId).digest('base64url');
  }
}
