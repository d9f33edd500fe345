// Payment method types and the seed's "flow variation by payment method" table: when the customer acts and
// when the outcome is final. The service, the SDK's eligible-methods answer and the tests read this table.

export const PAYMENT_METHOD_TYPES = ['card', 'bank_debit', 'wallet', 'pay_later', 'bank_redirect', 'bank_transfer', 'crypto'] as const;
export type PaymentMethodType = (typeof PAYMENT_METHOD_TYPES)[number];

export function isPaymentMethodType(value: string): value is PaymentMethodType {
  return (PAYMENT_METHOD_TYPES as readonly string[]).includes(value);
}

export interface PaymentMethodGroup {
  /** The seed's name for the row. */
  group: string;
  types: readonly PaymentMethodType[];
  /** Only cards: the row applies when 3D Secure is (true) or is not (false) part of the flow. */
  threeDs?: boolean;
  customerAction:
    | 'before confirm, in the SDK'
    | 'before confirm, via a third-party redirect or SDK session token'
    | 'after confirm, via redirect'
    | 'after confirm, via redirect (show transfer instructions)';
  /** `later`: the payment stays PROCESSING after the customer's part until the processor reports the outcome. */
  finalization: 'immediate' | 'later';
}

export const PAYMENT_METHOD_GROUPS: readonly PaymentMethodGroup[] = [
  { group: 'cards without 3DS', types: ['card'], threeDs: false, customerAction: 'before confirm, in the SDK', finalization: 'immediate' },
  { group: 'bank debits', types: ['bank_debit'], customerAction: 'before confirm, in the SDK', finalization: 'later' },
  {
    group: 'wallets, buy-now-pay-later',
    types: ['wallet', 'pay_later'],
    customerAction: 'before confirm, via a third-party redirect or SDK session token',
    finalization: 'immediate',
  },
  { group: 'cards with 3DS', types: ['card'], threeDs: true, customerAction: 'after confirm, via redirect', finalization: 'immediate' },
  { group: 'bank redirects', types: ['bank_redirect'], customerAction: 'after confirm, via redirect', finalization: 'immediate' },
  {
    group: 'bank transfers, crypto wallets',
    types: ['bank_transfer', 'crypto'],
    customerAction: 'after confirm, via redirect (show transfer instructions)',
    finalization: 'later',
  },
];

/** The row of the table a payment's flow follows. */
export function paymentMethodGroup(type: PaymentMethodType, threeDs: boolean): PaymentMethodGroup {
  return PAYMENT_METHOD_GROUPS.find((row) => row.types.includes(type) && (row.threeDs === undefined || row.threeDs === threeDs))!;
}

/**
 * Whether funds can be held and captured later. Methods that settle later (debits, transfers, crypto)
 * move money only once, so a manual capture has nothing to hold.
 */
export function supportsManualCapture(type: PaymentMethodType): boolean {
  return paymentMethodGroup(type, false).finalization === 'immediate';
}
