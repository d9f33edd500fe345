// Mandates: the customer's permission to charge a saved card off session. One is created when a payment
// made with setupFutureUsage OFF_SESSION for a customer is paid by card (the processor's reusable token is
// kept as the customer's saved card); later merchant-initiated payments name it with mandateId. Revoking it
// (revokeMandate, or the processor's callback when the customer revokes at their bank) is final, and every
// charge claims the mandate while it is ACTIVE, so a revoked mandate is never charged.
import { AppError, notFound } from '../../kernel/errors.ts';
import { mandateWireObject } from './wire.ts';
import { isId, newId } from '../../kernel/ids.ts';
import { MANDATE_STATUS_EVENTS, REVOCABLE_MANDATE_STATUSES } from './machine.ts';
import type { Mandate, PaymentIntent, Prisma, SavedPaymentMethod } from '../../generated/prisma/client.ts';
import type { ServiceContext } from '../../platform/context.ts';
import type { CustomerService } from '../customers/index.ts';
import type { CommittedEvent, EventOutbox } from '../events/index.ts';
import { customerId as customerIdSchema } from '../customers/index.ts';
import type { MerchantPrincipal, SecretKeyPrincipal } from '../../kernel/principal.ts';
import { parseInput } from '../../kernel/validation.ts';
import { mandateIdInput } from './inputs.ts';

export type MandateWithCard = Mandate & { savedPaymentMethod: SavedPaymentMethod };

export class MandateService {
  constructor(
    private readonly context: ServiceContext,
    private readonly outbox: EventOutbox,
    private readonly customers: CustomerService,
  ) {}

  async get(principal: MerchantPrincipal, mandateId: string): Promise<MandateWithCard> {
    const mandate = isId('mandate', mandateId)
      ? await this.context.db.mandate.findUnique({ where: { id: mandateId }, include: { savedPaymentMethod: true } })
      : null;
    if (mandate === null || mandate.merchantId !== principal.merchantId || mandate.mode !== principal.mode) throw notFound('mandate', mandateId);
    return mandate;
  }

  /** A customer's mandates, newest first. */
  list(principal: MerchantPrincipal, rawCustomerId: unknown): Promise<MandateWithCard[]> {
    const customerId = parseInput(customerIdSchema, rawCustomerId);
    return this.context.db.mandate.findMany({
      where: { merchantId: principal.merchantId, mode: principal.mode, customerId },
      include: { savedPaymentMethod: true },
      orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
    });
  }

  /** The mandate a setup payment created, if any. */
  ofPayment(paymentId: string): Promise<MandateWithCard | null> {
    return this.context.db.mandate.findUnique({ where: { paymentId }, include: { savedPaymentMethod: true } });
  }

  /**
   * Inside the transaction that records a setup payment paid: its mandate on `token`, the processor token
   * that payment set up, and the mandate_active event; the same payment never makes two.
   */
  async recordForPayment(
    tx: Prisma.TransactionClient,
    payment: PaymentIntent & { customerId: string },
    saved: SavedPaymentMethod,
    token: string,
  ): Promise<CommittedEvent[]> {
    const now = new Date();
    const [created] = await tx.mandate.createManyAndReturn({
      data: {
        id: newId('mandate'),
        merchantId: payment.merchantId,
        profileId: payment.profileId,
        mode: payment.mode,
        customerId: payment.customerId,
        paymentId: payment.id,
        savedPaymentMethodId: saved.id,
        processorTokenEncrypted: this.context.secretBox.seal(token),
        processorTokenHash: this.customers.processorTokenHash(token),
        status: 'ACTIVE',
        createdAt: now,
        updatedAt: now,
      },
      skipDuplicates: true,
    });
    if (created === undefined) return [];
    const event = await this.outbox.recordChange(tx, created, MANDATE_STATUS_EVENTS.ACTIVE, mandateWireObject({ ...created, savedPaymentMethod: saved }));
    return event === null ? [] : [event];
  }

  /**
   * The mandate a merchant-initiated payment of `customerId` may charge: ACTIVE, of this merchant, mode and
   * customer. INVALID_STATE for a revoked one, NOT_FOUND otherwise.
   */
  async chargeable(principal: SecretKeyPrincipal, mandateId: string, customerId: string | null): Promise<MandateWithCard> {
    const mandate = await this.get(principal, mandateId);
    if (customerId !== null && mandate.customerId !== customerId) throw notFound('mandate of this customer', mandateId);
    this.refuseRevoked(mandate);
    return mandate;
  }

  /**
   * Claims the mandate for one charge, just before the processor is asked: succeeds only while it is ACTIVE
   * (one guarded statement), so a charge either started before a revocation or never starts after it.
   */
  async claimForCharge(mandate: Mandate): Promise<void> {
    const { count } = await this.context.db.mandate.updateMany({ where: { id: mandate.id, status: 'ACTIVE' }, data: { updatedAt: new Date() } });
    if (count === 0) this.refuseRevoked({ ...mandate, status: 'REVOKED' });
  }

  async revoke(principal: SecretKeyPrincipal, rawInput: unknown): Promise<MandateWithCard> {
    const mandate = await this.get(principal, parseInput(mandateIdInput, rawInput).mandateId);
    if (mandate.status === 'REVOKED') throw new AppError('INVALID_STATE', 'This mandate is already revoked.', { status: mandate.status });
    return (await this.moveToRevoked(mandate.id, principal.keyId)) ?? (await this.get(principal, mandate.id));
  }

  /**
   * A verified processor callback saying a token was revoked at the customer's bank: every active mandate on
   * that token is revoked. Null when the account has no mandate on it.
   */
  async applyRevocation(connectorAccountId: string, token: string): Promise<{ paymentId: string | null; outcome: 'committed' | 'unchanged' } | null> {
    const mandates = await this.context.db.mandate.findMany({
      where: { processorTokenHash: this.customers.processorTokenHash(token), savedPaymentMethod: { connectorAccountId } },
      select: { id: true, paymentId: true, status: true },
    });
    if (mandates.length === 0) return null;
    let revoked = 0;
    for (const mandate of mandates) if (mandate.status === 'ACTIVE' && (await this.moveToRevoked(mandate.id, 'processor')) !== null) revoked += 1;
    return { paymentId: mandates[0]!.paymentId, outcome: revoked > 0 ? 'committed' : 'unchanged' };
  }

  /** The processor token a mandate charges: the one its setup payment set up. */
  processorToken(mandate: Mandate): string {
    return this.context.secretBox.open(mandate.processorTokenEncrypted);
  }

  private refuseRevoked(mandate: Pick<Mandate, 'id' | 'status'>): void {
    if (mandate.status !== 'ACTIVE') {
      throw new AppError('INVALID_STATE', `Mandate ${mandate.id} is revoked and can no longer be charged; the customer must set up a new one.`, {
        status: mandate.status,
      });
    }
  }

  /** ACTIVE → REVOKED with mandate_revoked, once: null when it was already revoked (by a concurrent request). */
  private async moveToRevoked(mandateId: string, actor: string): Promise<MandateWithCard | null> {
    let event: CommittedEvent | null = null;
    const revoked = await this.context.db.$transaction(async (tx) => {
      const [changed] = await tx.mandate.updateManyAndReturn({
        where: { id: mandateId, status: { in: [...REVOCABLE_MANDATE_STATUSES] } },
        data: { status: 'REVOKED', revokedAt: new Date(), revokedBy: actor, version: { increment: 1 }, updatedAt: new Date() },
      });
      if (changed === undefined) return null;
      const savedPaymentMethod = await tx.savedPaymentMethod.findUniqueOrThrow({ where: { id: changed.savedPaymentMethodId } });
      const mandate = { ...changed, savedPaymentMethod };
      event = await this.outbox.recordChange(tx, changed, MANDATE_STATUS_EVENTS.REVOKED, mandateWireObject(mandate));
      return mandate;
    });
    if (event !== null) this.outbox.afterCommit(event);
    return revoked;
  }
}
