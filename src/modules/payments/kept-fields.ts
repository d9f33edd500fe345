// What an attempt keeps of the method it pays with: enough to show the customer and the merchant what was
// used, never a card number, CVC, full IBAN or wallet token (those go to the processor and are forgotten).
import type { PaymentMethod } from '../connectors/port.ts';
import { methodTypeOf } from '../connectors/port.ts';
import { ibanLast4 } from '../payouts/bank-accounts.ts';
import { cardFingerprint } from '../../kernel/card-fingerprint.ts';
import { cardBrand, last4 } from '../../kernel/cards.ts';
import type { Prisma, SavedPaymentMethod } from '../../generated/prisma/client.ts';

export type KeptMethodFields = Pick<
  Prisma.PaymentAttemptUncheckedCreateInput,
  | 'paymentMethodType'
  | 'cardBrand'
  | 'cardLast4'
  | 'cardExpiryMonth'
  | 'cardExpiryYear'
  | 'cardHolderName'
  | 'cardFingerprint'
  | 'paymentMethodDetails'
  | 'savedPaymentMethodId'
>;

/** `fingerprintKey` is the merchant's own, so two merchants cannot match their customers' cards. */
export function keptFields(method: PaymentMethod, fingerprintKey: Buffer, saved: SavedPaymentMethod | null): KeptMethodFields {
  const paymentMethodType = methodTypeOf(method);
  switch (method.type) {
    case 'card':
      return {
        paymentMethodType,
        cardBrand: cardBrand(method.card.number),
        cardLast4: last4(method.card.number),
        cardExpiryMonth: method.card.expiryMonth,
        cardExpiryYear: method.card.expiryYear,
        cardHolderName: method.card.holderName ?? null,
        cardFingerprint: cardFingerprint(method.card.number, fingerprintKey),
      };
    case 'saved_card':
      return {
        paymentMethodType,
        cardBrand: saved!.cardBrand,
        cardLast4: saved!.cardLast4,
        cardExpiryMonth: saved!.cardExpiryMonth,
        cardExpiryYear: saved!.cardExpiryYear,
        cardHolderName: saved!.cardHolderName,
        cardFingerprint: saved!.cardFingerprint,
        savedPaymentMethodId: saved!.id,
      };
    case 'bank_debit':
      return { paymentMethodType, paymentMethodDetails: { accountHolderName: method.accountHolderName, ibanLast4: ibanLast4(method.iban) } };
    case 'wallet':
    case 'pay_later':
      return { paymentMethodType, paymentMethodDetails: { provider: method.provider } };
    case 'bank_redirect':
      return { paymentMethodType, paymentMethodDetails: { bank: method.bank } };
    case 'bank_transfer':
      return { paymentMethodType, paymentMethodDetails: {} };
    case 'crypto':
      return { paymentMethodType, paymentMethodDetails: { network: method.network } };
  }
}
