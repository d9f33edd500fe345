// Creating a payment: its intent and first attempt as one new row each, with the payment method when one
// is given, and confirmed at once when asked (or when it charges a mandate).
import type { PaymentMethod } from '../../connectors/port.ts';
import { invalidInput } from '../../../kernel/errors.ts';
import { newId } from '../../../kernel/ids.ts';
import type { SecretKeyPrincipal } from '../../../kernel/principal.ts';
import { connectedAmong, platformSpokenFor, profileFor } from '../../merchants/index.ts';
import { profileSettings } from '../../merchants/index.ts';
import { parseInput } from '../../../kernel/validation.ts';
import type { IdempotencyClaim } from '../../../platform/http/idempotency.ts';
import { transitionAttempt } from '../machine/attempt.ts';
import { createPaymentInput } from '../inputs.ts';
import { keptFields } from '../kept-fields.ts';
import type { Payment } from '../store.ts';
import type { PaymentConfirmation } from './confirm.ts';
import type { PaymentDependencies } from './dependencies.ts';

/**
 * A keyed createPayment's claim on its Idempotency-Key, taken by the payment's first write, and whether the request's
 * answer reads nothing stored (every field it selects resolves from the payment returned: RESOLVES_FROM_PARENT).
 */
export interface CreationKey {
  claim: IdempotencyClaim;
  answerReadsNothingStored: boolean;
}

export class PaymentCreation {
  constructor(
    private readonly deps: PaymentDependencies,
    private readonly confirmation: PaymentConfirmation,
  ) {}

  /**
   * `origin` is set by the product, never by API input: the payment link a customer opened, or the
   * subscription period a worker charges (unique: a second charge of one period fails before the processor).
   * `key`: a keyed request's claim (CreationKey).
   */
  async create(
    principal: SecretKeyPrincipal,
    rawInput: unknown,
    origin: { paymentLinkId?: string; subscriptionPeriod?: string } = {},
    key?: CreationKey,
  ): Promise<Payment> {
    const idempotencyClaim = key?.claim;
    const input = parseInput(createPaymentInput, rawInput);
    await this.refuseForeignSplits(principal, input);
    const profile = await profileFor(this.deps.context, principal.merchantId, input.profileId);
    const settings = profileSettings(profile, principal.mode);
    // A merchant-initiated payment charges the mandate's saved card, off session (no CVC, nobody to ask).
    const mandate = input.mandateId ? await this.deps.mandates.chargeable(principal, input.mandateId, input.customerId ?? null) : null;
    const customerId = input.customerId ?? mandate?.customerId ?? null;
    const method: PaymentMethod | null = mandate
      ? { type: 'saved_card', token: this.deps.mandates.processorToken(mandate), cvc: null }
      : (input.paymentMethodData ?? null);
    // A payment that could not be confirmed is refused before anything is written.
    if (input.confirm) {
      const routed = {
        merchantId: principal.merchantId,
        profileId: profile.id,
        mode: principal.mode,
        amount: input.amount,
        currency: input.currency,
        country: input.country ?? null,
        metadata: input.metadata ?? null,
        connectors: input.connectors ?? [],
      };
      await this.deps.routing.refuseUnroutable(routed, settings.routing, method!, mandate?.savedPaymentMethod ?? null);
    }
    // The charge starts here: a revocation committed before this claim refuses it, before anything is written.
    if (mandate) {
      await idempotencyClaim?.takeBeforeWriting();
      await this.deps.mandates.claimForCharge(mandate);
    }

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
      routing: null,
      surchargeAmount: 0,
      customerId,
      mandateId: mandate?.id ?? null,
      paymentLinkId: origin.paymentLinkId ?? null,
      subscriptionPeriod: origin.subscriptionPeriod ?? null,
      initiatedByPlatformId: principal.platformMerchantId ?? null,
      applicationFeeAmount: input.applicationFeeAmount ?? 0,
      splits: input.splits ?? null,
      country: input.country ?? null,
      email: input.email ?? null,
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
      processorErrorCode: null,
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
        processorMerchantId: null,
        processorSplit: null,
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
        processorErrorCode: null,
        errorMessage: null,
        processorError: null,
        createdAt: now,
        updatedAt: now,
      },
    };
    // Routing's circuits are read while the payment is written, so the confirm's decision need not read them after.
    const circuitsAhead = input.confirm && !mandate ? this.deps.routing.circuitsAhead(principal.merchantId, principal.mode) : undefined;
    // Answered as created, by an answer that reads nothing stored, the payment is written with that answer, which then
    // needs no statement of its own (docs/architecture.md, "Idempotency"); not when a write follows the insert.
    const holdForAnswer = key?.answerReadsNothingStored === true && !input.paymentMethodData && !mandate && !input.confirm;
    let payment = await this.deps.store.insert(created, principal.keyId, idempotencyClaim, { holdForAnswer });
    if (input.paymentMethodData) {
      payment = await this.deps.store.commit(payment, {
        moves: [transitionAttempt(payment.activeAttempt.status, 'payment_method_supplied')],
        attempt: keptFields(input.paymentMethodData, this.deps.keys.fingerprintKey(principal.merchantId), null),
        actor: principal.keyId,
      });
    }
    if (mandate) {
      return this.confirmation.confirmLoaded(principal, payment, method!, { returnUrl: null, saveCard: false, saved: mandate.savedPaymentMethod });
    }
    if (input.confirm) return this.confirmation.confirmLoaded(principal, payment, method!, { returnUrl: null, saveCard: false, saved: null, circuitsAhead });
    return payment;
  }

  /**
   * A fee and splits are a platform's (docs/ledger.md): set by its own secret key, or acting for a connected
   * merchant; each split names a merchant connected to that platform. Refused naming the field, with one answer
   * for every merchant outside the platform, so a split cannot learn which merchants exist.
   */
  private async refuseForeignSplits(principal: SecretKeyPrincipal, input: { applicationFeeAmount?: number | null; splits?: { merchantId: string }[] | null }) {
    const field = input.splits ? 'splits' : 'applicationFeeAmount';
    if (!input.splits && !input.applicationFeeAmount) return;
    const { db } = this.deps.context;
    const platformId = await platformSpokenFor(db, principal);
    if (platformId === null) throw invalidInput(field, 'only a platform sets a fee or splits: with its own secret key, or acting for a connected merchant');
    if (!input.splits) return;
    const connected = await connectedAmong(
      db,
      platformId,
      input.splits.map((split) => split.merchantId),
    );
    const outside = input.splits.findIndex((split) => !connected.has(split.merchantId));
    if (outside !== -1) throw invalidInput(`splits.${outside}.merchantId`, 'must name a merchant connected to this platform');
  }
}
