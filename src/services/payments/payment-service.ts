// The payments use cases. Processor calls never happen inside a database transaction: the pending state is
// committed first (guarded by the intent's version, so of two concurrent requests exactly one proceeds to
// the processor), the processor is called, and its answer is committed in a second guarded transaction.
// A crash or timeout in between leaves a PROCESSING payment that `sync` resolves, never a guessed failure.
import { createHmac } from 'node:crypto';
import type { Connector, ProcessorPayment } from '../../connectors/connector.ts';
import { ConnectorError } from '../../connectors/connector.ts';
import { cardBrand, cardFingerprint, last4 } from '../../domain/cards.ts';
import { AppError, invalidInput, notFound } from '../../domain/errors.ts';
import { isId, newId } from '../../domain/ids.ts';
import { parseInstant } from '../../domain/instants.ts';
import { secretsEqual } from '../../domain/api-keys.ts';
import {
  ATTEMPT_TARGETS,
  planProcessorUpdate,
  transitionAttempt,
  type AttemptTransition,
} from '../../domain/payments/attempt-machine.ts';
import { SYNCABLE_INTENT_STATUSES, type AttemptStatus } from '../../domain/payments/statuses.ts';
import type { Prisma } from '../../generated/prisma/client.ts';
import type { ConnectorAccountService } from '../connector-accounts.ts';
import type { ServiceContext } from '../context.ts';
import type { MerchantPrincipal, Principal, SecretKeyPrincipal } from '../principal.ts';
import { parseInput } from '../validation.ts';
import { cancelPaymentInput, capturePaymentInput, confirmPaymentInput, createPaymentInput, listPaymentsInput, type PaymentMethodData } from './inputs.ts';
import { PaymentStore, type Payment } from './payment-store.ts';

/** How many times an answer is re-applied when a concurrent request moved the payment first. */
const MAX_COMMIT_RETRIES = 3;

/** Attempt statuses in which the customer is in the middle of 3DS at the processor. */
const AWAITING_CUSTOMER: ReadonlySet<AttemptStatus> = new Set(['DEVICE_DATA_COLLECTION_PENDING', 'AUTHENTICATION_PENDING']);

export class PaymentService {
  readonly store: PaymentStore;
  readonly #clientSecretKey: Buffer;
  readonly #fingerprintKey: Buffer;

  constructor(
    private readonly context: ServiceContext,
    private readonly connectorAccounts: ConnectorAccountService,
  ) {
    this.store = new PaymentStore(context.db);
    // Separate keys derived from ENCRYPTION_KEY, so one purpose's values say nothing about another's.
    this.#clientSecretKey = createHmac('sha256', context.config.encryptionKey).update('client-secret').digest();
    this.#fingerprintKey = createHmac('sha256', context.config.encryptionKey).update('card-fingerprint').digest();
  }

  /** `<payment id>_secret_<HMAC>`: derived, so it is never stored and can be shown again to the merchant. */
  clientSecretFor(paymentId: string): string {
    return `${paymentId}_secret_${createHmac('sha256', this.#clientSecretKey).update(paymentId).digest('base64url').slice(0, 24)}`;
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

  async create(principal: SecretKeyPrincipal, rawInput: unknown): Promise<Payment> {
    const input = parseInput(createPaymentInput, rawInput);
    const profile = input.profileId
      ? await this.context.db.businessProfile.findFirst({ where: { id: input.profileId, merchantId: principal.merchantId } })
      : await this.context.db.businessProfile.findFirst({ where: { merchantId: principal.merchantId, isDefault: true } });
    if (profile === null) throw invalidInput('profileId', input.profileId ? `no business profile ${input.profileId} for this merchant` : 'this merchant has no default business profile');
    // A payment that could not be confirmed is refused before anything is written.
    if (input.confirm) await this.eligibleAccount(principal.merchantId, principal.mode, input.connectors ?? []);

    const paymentId = newId('payment');
    const attemptId = newId('attempt');
    const now = new Date();
    await this.context.db.$transaction(async (tx) => {
      await tx.paymentIntent.create({
        data: {
          id: paymentId,
          merchantId: principal.merchantId,
          profileId: profile.id,
          mode: principal.mode,
          status: 'REQUIRES_PAYMENT_METHOD',
          amount: input.amount,
          currency: input.currency,
          captureMethod: input.captureMethod,
          authenticationType: input.authenticationType,
          customerId: input.customerId ?? null,
          description: input.description ?? null,
          metadata: (input.metadata ?? undefined) as Prisma.InputJsonValue | undefined,
          returnUrl: input.returnUrl ?? null,
          setupFutureUsage: input.setupFutureUsage ?? null,
          connectors: input.connectors ?? [],
          activeAttemptId: attemptId,
          attemptCount: 1,
          createdAt: now,
          updatedAt: now,
        },
      });
      await tx.paymentAttempt.create({
        data: {
          id: attemptId,
          paymentId,
          attemptNumber: 1,
          status: 'PAYMENT_METHOD_AWAITED',
          amount: input.amount,
          currency: input.currency,
          captureMethod: input.captureMethod,
          authenticationType: input.authenticationType,
          createdAt: now,
          updatedAt: now,
        },
      });
      await tx.paymentStatusHistory.createMany({
        data: [
          { paymentId, subject: 'intent', fromStatus: null, toStatus: 'REQUIRES_PAYMENT_METHOD', trigger: 'create', actor: principal.keyId, createdAt: now },
          { paymentId, attemptId, subject: 'attempt', fromStatus: null, toStatus: 'PAYMENT_METHOD_AWAITED', trigger: 'create', actor: principal.keyId, createdAt: now },
        ],
      });
    });
    let payment = await this.store.get(paymentId);
    if (input.paymentMethodData) {
      payment = await this.store.commit(payment, {
        moves: [transitionAttempt(payment.activeAttempt.status, 'payment_method_supplied')],
        attempt: this.cardFields(input.paymentMethodData, principal.merchantId),
        actor: principal.keyId,
      });
    }
    if (input.confirm) return this.confirmLoaded(principal, payment, input.paymentMethodData!, null);
    return payment;
  }

  async confirm(principal: Principal, rawInput: unknown): Promise<Payment> {
    const input = parseInput(confirmPaymentInput, rawInput);
    const paymentId = this.paymentIdOfClientSecret(input.clientSecret);
    const payment = await this.getVisible(principal, paymentId, input.clientSecret);
    if (!input.paymentMethodData) {
      // Card numbers are never stored, so the card must come with the confirm even if it was given at create.
      transitionAttempt(payment.activeAttempt.status, 'confirm'); // INVALID_STATE first, if that is the problem
      throw invalidInput('paymentMethodData', 'card details are required to confirm (card numbers are never stored)');
    }
    const returnUrl = input.returnUrl ?? null;
    // A browser may point the customer back elsewhere on the merchant's site, not to another site.
    if (returnUrl && principal.kind === 'publishableKey' && payment.returnUrl && new URL(returnUrl).origin !== new URL(payment.returnUrl).origin) {
      throw invalidInput('returnUrl', `with a publishable key, must be on the payment's own return origin ${new URL(payment.returnUrl).origin}`);
    }
    return this.confirmLoaded(principal as MerchantPrincipal, payment, input.paymentMethodData, returnUrl);
  }

  private async confirmLoaded(principal: MerchantPrincipal, payment: Payment, method: PaymentMethodData, returnUrl: string | null): Promise<Payment> {
    const moves: AttemptTransition[] = [];
    let status = payment.activeAttempt.status;
    if (status === 'PAYMENT_METHOD_AWAITED' || status === 'CONFIRMATION_AWAITED') {
      const supplied = transitionAttempt(status, 'payment_method_supplied');
      // Re-supplying the same card at confirm is not a change worth a history row.
      if (supplied.to !== status || payment.activeAttempt.cardFingerprint !== this.cardFields(method, payment.merchantId).cardFingerprint) moves.push(supplied);
      status = supplied.to;
    }
    const confirm = transitionAttempt(status, 'confirm');
    moves.push(confirm);
    const account = await this.eligibleAccount(payment.merchantId, payment.mode, payment.connectors);
    const pending = await this.store.commit(payment, {
      moves,
      attempt: { ...this.cardFields(method, payment.merchantId), connectorAccountId: account.id, connectorName: account.connectorName, paymentMethodType: 'card' },
      intent: returnUrl ? { returnUrl } : {},
      actor: principal.keyId,
    });
    const connector = this.connectorAccounts.connectorFor(account);
    let answer: ProcessorPayment;
    try {
      answer = await connector.authorize({
        reference: pending.activeAttempt.id,
        amount: pending.amount,
        currency: pending.currency,
        captureMethod: pending.captureMethod,
        threeDs: pending.authenticationType === 'THREE_DS',
        card: method.card,
        returnUrl: this.redirectReturnUrl(pending.id, account.connectorName),
      });
    } catch (error) {
      return this.afterConnectorError(pending, error, 'processor_call');
    }
    const result = await this.applyAnswer(pending.id, answer, 'processor');
    return this.declinedOrResult(result, answer);
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
      return this.declinedOrResult(await this.applyAnswer(initiated.id, answer, 'processor'), answer);
    } catch (error) {
      return this.afterConnectorError(initiated, error, 'capture_at_processor');
    }
  }

  async cancel(principal: SecretKeyPrincipal, rawInput: unknown): Promise<Payment> {
    const input = parseInput(cancelPaymentInput, rawInput);
    let payment = await this.getVisible(principal, input.paymentId);
    // During 3DS the customer may be completing the challenge right now: learn the processor's view first,
    // so a payment it has already authorized is voided there rather than forgotten here.
    const atProcessor = payment.activeAttempt.connectorTransactionId !== null;
    if (atProcessor && AWAITING_CUSTOMER.has(payment.activeAttempt.status)) {
      // A processor that cannot be asked does not block the cancel; abandonAtProcessor tries again below.
      payment = await this.syncPayment(payment, 'sync').catch((error: unknown) => {
        if (error instanceof AppError && error.code === 'CONNECTOR_ERROR') return payment;
        throw error;
      });
    }
    const move = transitionAttempt(payment.activeAttempt.status, 'void');
    const cancelled = await this.store.commit(payment, {
      moves: [move],
      intent: { cancellationReason: input.cancellationReason ?? null },
      actor: principal.keyId,
    });
    if (move.effect !== 'void_at_processor') {
      if (atProcessor) await this.abandonAtProcessor(cancelled);
      return cancelled;
    }
    const connector = await this.connectorOf(cancelled);
    try {
      const answer = await connector.void(cancelled.activeAttempt.connectorTransactionId!, `${cancelled.activeAttempt.id}_void`);
      return this.applyAnswer(cancelled.id, answer, 'processor');
    } catch (error) {
      return this.afterConnectorError(cancelled, error, 'void_at_processor');
    }
  }

  /**
   * The seed voids a payment awaiting 3DS locally only (nothing is authorized yet); the processor is still
   * told, best effort, so a challenge completed a moment later cannot authorize it. If it did anyway, the
   * anomaly is logged for operators: the payment is cancelled here but the processor holds or took funds.
   */
  private async abandonAtProcessor(payment: Payment): Promise<void> {
    try {
      const connector = await this.connectorOf(payment);
      const answer = await connector.void(payment.activeAttempt.connectorTransactionId!, `${payment.activeAttempt.id}_void`);
      if (answer.status !== 'voided' && answer.status !== 'failed' && answer.status !== 'authentication_failed') {
        this.context.logger.error({ paymentId: payment.id, processorStatus: answer.status }, 'cancelled payment is not cancelled at the processor');
      }
    } catch (error) {
      this.context.logger.warn({ paymentId: payment.id, err: (error as Error).message }, 'could not cancel an abandoned 3DS payment at the processor');
    }
  }

  /** Asks the processor for the truth of a payment that is waiting on it; terminal payments are returned as they are. */
  async sync(principal: Principal, paymentId: string): Promise<Payment> {
    return this.syncPayment(await this.getVisible(principal, paymentId), 'sync');
  }

  /**
   * Where the processor returns the customer after 3DS or a redirect: sync, then tell the caller where to
   * send the browser. No key: the route is public, and it only ever asks the processor for the truth.
   */
  async returnFromRedirect(paymentId: string, connectorName: string): Promise<{ payment: Payment; location: string | null }> {
    const found = await this.store.find(paymentId);
    if (found === null || found.activeAttempt.connectorName !== connectorName) throw notFound('payment', paymentId);
    const payment = await this.syncPayment(found, 'redirect');
    if (!payment.returnUrl) return { payment, location: null };
    const location = new URL(payment.returnUrl);
    location.searchParams.set('payment_id', payment.id);
    location.searchParams.set('status', payment.status.toLowerCase());
    return { payment, location: location.toString() };
  }

  async list(principal: SecretKeyPrincipal, rawInput: unknown) {
    const input = parseInput(listPaymentsInput, rawInput);
    const first = input.first ?? 20;
    const cursor = input.after ? decodeCursor(input.after) : null;
    const where: Prisma.PaymentIntentWhereInput = {
      merchantId: principal.merchantId,
      mode: principal.mode,
      ...(input.status ? { status: input.status as Payment['status'] } : {}),
      ...(input.customerId ? { customerId: input.customerId } : {}),
      createdAt: { ...(input.createdAfter ? { gte: input.createdAfter } : {}), ...(input.createdBefore ? { lt: input.createdBefore } : {}) },
      ...(cursor ? { OR: [{ createdAt: { lt: cursor.createdAt } }, { createdAt: cursor.createdAt, id: { lt: cursor.id } }] } : {}),
    };
    const rows = await this.context.db.paymentIntent.findMany({ where, orderBy: [{ createdAt: 'desc' }, { id: 'desc' }], take: first + 1 });
    const page = rows.slice(0, first);
    return {
      edges: page.map((node) => ({ node, cursor: encodeCursor(node.createdAt, node.id) })),
      pageInfo: { hasNextPage: rows.length > first, endCursor: page.length ? encodeCursor(page.at(-1)!.createdAt, page.at(-1)!.id) : null },
    };
  }

  private async syncPayment(payment: Payment, actor: string): Promise<Payment> {
    if (!SYNCABLE_INTENT_STATUSES.has(payment.status) || payment.activeAttempt.connectorAccountId === null) return payment;
    const connector = await this.connectorOf(payment);
    const { connectorTransactionId, id: attemptId } = payment.activeAttempt;
    let answer: ProcessorPayment | null;
    try {
      // A timed-out authorization left no transaction id: find it by our reference.
      answer = connectorTransactionId ? await connector.sync(connectorTransactionId) : await connector.findByReference(attemptId);
    } catch (error) {
      if (error instanceof ConnectorError) throw new AppError('CONNECTOR_ERROR', `The processor could not be asked: ${error.message}.`);
      throw error;
    }
    if (answer !== null) return this.applyAnswer(payment.id, answer, actor);
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
  private async applyAnswer(paymentId: string, answer: ProcessorPayment, actor: string): Promise<Payment> {
    for (let attempt = 1; ; attempt += 1) {
      const payment = await this.store.get(paymentId);
      const path =
        answer.status === 'pending'
          ? []
          : planProcessorUpdate(payment.activeAttempt.status, ATTEMPT_TARGETS[answer.status], {
              captureMethod: payment.captureMethod,
              stalled: this.isStalled(payment),
            });
      if (path === null) {
        this.context.logger.info({ paymentId, status: payment.activeAttempt.status, answer: answer.status }, 'ignored a processor answer no transition leads to');
        return payment;
      }
      const commit =
        path.length === 0
          ? // Still learn the processor's id of a pending attempt (a timed-out call), without moving it.
            payment.activeAttempt.connectorTransactionId === null
            ? { moves: [], attempt: { connectorTransactionId: answer.transactionId }, actor }
            : null
          : {
              moves: path,
              attempt: {
                connectorTransactionId: answer.transactionId,
                amountCapturable: answer.amountCapturable,
                amountCaptured: answer.amountCaptured,
                redirectUrl: answer.redirectUrl,
                errorCode: answer.error?.code ?? null,
                errorMessage: answer.error?.message ?? null,
              },
              intent: {
                amountCapturable: answer.amountCapturable,
                amountReceived: answer.amountCaptured,
                errorCode: answer.error?.code ?? null,
                errorMessage: answer.error?.message ?? null,
              },
              actor,
            };
      if (commit === null) return payment;
      try {
        return await this.store.commit(payment, commit);
      } catch (error) {
        if (!(error instanceof AppError && error.code === 'CONFLICT')) throw error;
        if (attempt >= MAX_COMMIT_RETRIES) {
          // The processor acted; its answer is not lost but deferred: a sync reads it again.
          this.context.logger.warn({ paymentId, answer: answer.status }, 'processor answer deferred to sync after repeated concurrent changes');
          return this.store.get(paymentId);
        }
      }
    }
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
    const failed = await this.store.commit(payment, {
      moves: [transitionAttempt(payment.activeAttempt.status, trigger, { result: 'failure' })],
      attempt: { errorCode: error.processorCode ?? 'connector_error', errorMessage: error.message },
      intent: { errorCode: error.processorCode ?? 'connector_error', errorMessage: error.message },
      actor: 'processor',
    });
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

  private async eligibleAccount(merchantId: string, mode: Payment['mode'], connectors: readonly string[]) {
    const account = await this.connectorAccounts.eligible(merchantId, mode, 'card', connectors);
    if (account === null) {
      throw invalidInput('paymentMethodData', `no connector account of this merchant accepts card payments in ${mode.toLowerCase()} mode; create one with createConnectorAccount`);
    }
    return account;
  }

  private async connectorOf(payment: Payment): Promise<Connector> {
    const account = await this.context.db.connectorAccount.findUniqueOrThrow({ where: { id: payment.activeAttempt.connectorAccountId! } });
    return this.connectorAccounts.connectorFor(account);
  }

  /** What is kept of a card. The fingerprint key is the merchant's own, so merchants cannot match cards across accounts. */
  private cardFields(method: PaymentMethodData, merchantId: string) {
    const { card } = method;
    return {
      paymentMethodType: 'card',
      cardBrand: cardBrand(card.number),
      cardLast4: last4(card.number),
      cardExpiryMonth: card.expiryMonth,
      cardExpiryYear: card.expiryYear,
      cardHolderName: card.holderName ?? null,
      cardFingerprint: cardFingerprint(card.number, createHmac('sha256', this.#fingerprintKey).update(merchantId).digest()),
    };
  }

  private redirectReturnUrl(paymentId: string, connectorName: string): string {
    return `${this.context.publicUrl.replace(/\/$/, '')}/payments/${paymentId}/redirect/response/${connectorName}`;
  }
}

function encodeCursor(createdAt: Date, id: string): string {
  return Buffer.from(`${createdAt.toISOString()}|${id}`).toString('base64url');
}

function decodeCursor(cursor: string): { createdAt: Date; id: string } {
  const [iso, id] = Buffer.from(cursor, 'base64url').toString().split('|');
  const createdAt = parseInstant(iso ?? '');
  if (!id || !isId('payment', id) || createdAt === null) throw invalidInput('after', 'is not a cursor this API returned');
  return { createdAt, id };
}
