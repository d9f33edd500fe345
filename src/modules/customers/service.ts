// Customers and their saved cards. A customer is the merchant's own id (`cus_…`) on its payments; a saved
// card is the processor's reusable token for it (sealed at rest), valid at the connector account that
// issued it, with what may be shown of the card. The card number itself is never stored.
import { createHmac } from 'node:crypto';
import { notFound } from '../../kernel/errors.ts';
import { newId } from '../../kernel/ids.ts';
import type { Mode } from '../../kernel/api-keys.ts';
import type { PaymentAttempt, Prisma, SavedPaymentMethod } from '../../generated/prisma/client.ts';
import type { ServiceContext } from '../../platform/context.ts';
import { customerId as customerIdSchema } from './inputs.ts';
import type { MerchantPrincipal } from '../../kernel/principal.ts';
import { parseInput } from '../../kernel/validation.ts';

export interface Customer {
  id: string;
  savedPaymentMethods: SavedPaymentMethod[];
}

export class CustomerService {
  readonly #tokenHashKey: Buffer;

  constructor(private readonly context: ServiceContext) {
    this.#tokenHashKey = createHmac('sha256', context.config.encryptionKey).update('processor-token').digest();
  }

  /** The keyed hash a processor token is found by when a processor's callback names it (never kept in clear). */
  processorTokenHash(token: string): string {
    return createHmac('sha256', this.#tokenHashKey).update(token).digest('hex');
  }

  /** The customer with its saved cards; NOT_FOUND when the merchant has neither payments nor cards for it. */
  async get(principal: MerchantPrincipal, rawId: unknown): Promise<Customer> {
    const id = parseInput(customerIdSchema, rawId);
    const { merchantId, mode } = principal;
    const savedPaymentMethods = await this.savedCards(merchantId, mode, id);
    if (savedPaymentMethods.length === 0) {
      const payment = await this.context.db.paymentIntent.findFirst({ where: { merchantId, mode, customerId: id }, select: { id: true } });
      if (payment === null) throw notFound('customer', id);
    }
    return { id, savedPaymentMethods };
  }

  async savedCards(merchantId: string, mode: Mode, customerId: string): Promise<SavedPaymentMethod[]> {
    return this.context.db.savedPaymentMethod.findMany({
      where: { merchantId, mode, customerId },
      orderBy: [{ lastUsedAt: { sort: 'desc', nulls: 'last' } }, { createdAt: 'desc' }],
    });
  }

  /** A saved card of this customer, for a payment of the same merchant and mode; NOT_FOUND otherwise. */
  async savedCard(merchantId: string, mode: Mode, customerId: string | null, id: string): Promise<SavedPaymentMethod> {
    const saved = customerId === null ? null : await this.context.db.savedPaymentMethod.findFirst({ where: { id, merchantId, mode, customerId } });
    if (saved === null) throw notFound('saved payment method of this payment’s customer', id);
    return saved;
  }

  processorToken(saved: SavedPaymentMethod): string {
    return this.context.secretBox.open(saved.processorTokenEncrypted);
  }

  /** Keeps the processor's token of the card `attempt` paid with; the same card saved again is refreshed, not duplicated. */
  /** `db`: the transaction of the change that paid with the card, when there is one. */
  async saveCard(
    payment: { merchantId: string; mode: Mode; customerId: string },
    attempt: PaymentAttempt,
    token: string,
    db: Prisma.TransactionClient = this.context.db,
  ): Promise<SavedPaymentMethod> {
    const card = {
      cardBrand: attempt.cardBrand,
      cardLast4: attempt.cardLast4,
      cardExpiryMonth: attempt.cardExpiryMonth,
      cardExpiryYear: attempt.cardExpiryYear,
      cardHolderName: attempt.cardHolderName,
    };
    const processorTokenEncrypted = this.context.secretBox.seal(token);
    const key = {
      merchantId: payment.merchantId,
      mode: payment.mode,
      customerId: payment.customerId,
      connectorAccountId: attempt.connectorAccountId!,
      cardFingerprint: attempt.cardFingerprint!,
    };
    return db.savedPaymentMethod.upsert({
      where: { merchantId_mode_customerId_connectorAccountId_cardFingerprint: key },
      create: { id: newId('paymentMethod'), ...key, ...card, paymentMethodType: 'card', processorTokenEncrypted, lastUsedAt: new Date() },
      update: { ...card, processorTokenEncrypted, lastUsedAt: new Date() },
    });
  }

  async markUsed(id: string): Promise<void> {
    await this.context.db.savedPaymentMethod.update({ where: { id }, data: { lastUsedAt: new Date() } });
  }
}
