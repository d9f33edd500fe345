// Adyen's wire format (Checkout API v71 and its standard notifications): the answers as far as the connector
// reads them (zod: anything else is not an answer), and the request bodies it sends, in Adyen's names.
import { z } from 'zod';
import type { AuthorizeRequest, PaymentMethod, PaymentSplit } from '../port.ts';

/** The Checkout API version every path is under. */
export const CHECKOUT_API_VERSION = 'v71';

/** Text Adyen sends that may be stored: bounded and without NUL (PostgreSQL holds none). */
const adyenText = (max: number) =>
  z
    .string()
    .max(max)
    .refine((value) => !value.includes('\u0000'), 'must not contain NUL')
    .refine((value) => value.isWellFormed(), 'must be well-formed Unicode');
const adyenAmount = z.object({ value: z.number().int().nonnegative().max(2_147_483_647), currency: z.string().regex(/^[A-Z]{3}$/) });

export const RESULT_CODES = [
  'Authorised',
  'Refused',
  'RedirectShopper',
  'IdentifyShopper',
  'ChallengeShopper',
  'Pending',
  'Received',
  'Cancelled',
  'Error',
] as const;
export type ResultCode = (typeof RESULT_CODES)[number];

/** The answer of POST /payments and /payments/details. */
export const adyenPaymentResponseSchema = z
  .object({
    pspReference: adyenText(100).optional(),
    resultCode: z.enum(RESULT_CODES),
    merchantReference: adyenText(100).optional(),
    refusalReason: adyenText(1000).optional(),
    refusalReasonCode: adyenText(10).optional(),
    amount: adyenAmount.optional(),
    action: z
      .object({
        type: z.string(),
        method: z.enum(['GET', 'POST']).optional(),
        url: adyenText(2048).optional(),
        data: z.record(z.string(), adyenText(20_000)).optional(),
      })
      .optional(),
    // The rest as Adyen sent it (additionalData, ...): a refusal's answer is kept, scrubbed, on the failed attempt.
  })
  .catchall(z.unknown());
export type AdyenPaymentResponse = z.infer<typeof adyenPaymentResponseSchema>;

/** The answer of a capture, cancel or refund: Adyen received it; the outcome comes in a notification. */
export const adyenModificationSchema = z.object({
  pspReference: adyenText(100).pipe(z.string().min(1)),
  paymentPspReference: adyenText(100),
  status: z.literal('received'),
  amount: adyenAmount.optional(),
});
export type AdyenModification = z.infer<typeof adyenModificationSchema>;

/** Adyen's error body (ServiceError). */
export const adyenErrorSchema = z.object({
  status: z.number().int(),
  errorCode: adyenText(100),
  message: adyenText(1000),
  errorType: adyenText(100).optional(),
});

/** One NotificationRequestItem of a standard notification (its fields are strings, `success` too). */
export const notificationItemSchema = z.object({
  additionalData: z.record(z.string(), z.unknown()).optional(),
  amount: adyenAmount,
  eventCode: adyenText(100).pipe(z.string().min(1)),
  eventDate: z.string(),
  merchantAccountCode: z.string(),
  merchantReference: adyenText(100),
  originalReference: adyenText(100).optional(),
  pspReference: adyenText(100).pipe(z.string().min(1)),
  reason: adyenText(1000).optional(),
  success: z.enum(['true', 'false']),
});
export type NotificationItem = z.infer<typeof notificationItemSchema>;

export const notificationSchema = z.object({
  live: z.enum(['true', 'false']),
  notificationItems: z.array(z.object({ NotificationRequestItem: notificationItemSchema })).min(1),
});

/**
 * Adyen echoes a payment's metadata in its notifications: how the payment is captured travels with it, since an
 * AUTHORISATION alone does not say whether the money is taken.
 */
export const CAPTURE_METADATA_KEY = 'captureMethod';

/**
 * A string of a notification's additionalData. Metadata comes as `"metadata.<key>"` (Adyen's description) or as a
 * `metadata` object (the webhooks document's model of the same): both are read.
 */
export function additionalText(item: NotificationItem, key: string): string | undefined {
  const data = item.additionalData ?? {};
  const [prefix, rest] = key.split(/\.(.*)/s) as [string, string | undefined];
  const nested = rest === undefined ? undefined : (data[prefix] as Record<string, unknown> | undefined)?.[rest];
  const value = data[key] ?? nested;
  return typeof value === 'string' ? value : undefined;
}

/**
 * An Adyen for Platforms balance account's id (docs.adyen.com/api-explorer/balanceplatform/latest/get/balanceAccounts/_id_):
 * `BA` and upper-case letters and digits, as Adyen makes them.
 */
export const BALANCE_ACCOUNT_ID = /^BA[A-Z0-9]{1,62}$/;

/** Ends the reference of a capture of less than the payment charges (its CAPTURE notification reads it). */
export const PARTIAL_CAPTURE_SUFFIX = '.partial';

/** The PaymentRequest of POST /payments, in Adyen's names. */
export function paymentRequest(request: AuthorizeRequest, merchantAccount: string): Record<string, unknown> {
  const manual = request.captureMethod === 'MANUAL';
  return {
    merchantAccount,
    reference: request.reference,
    amount: { value: request.amount, currency: request.currency.toUpperCase() },
    paymentMethod: paymentMethodDetails(request.paymentMethod),
    returnUrl: request.returnUrl,
    channel: 'Web',
    shopperInteraction: 'Ecommerce',
    metadata: { [CAPTURE_METADATA_KEY]: manual ? 'manual' : 'automatic' },
    // Adyen's test cards authenticate by redirect; native 3DS2 (the Drop-in's fingerprint) is not used.
    authenticationData: { threeDSRequestData: { nativeThreeDS: 'disabled' }, ...(request.threeDs ? { attemptAuthentication: 'always' } : {}) },
    // Automatic capture asks Adyen to capture at once, whatever the merchant account's default capture delay:
    // an Authorised answer is then money taken, as our status map reads it.
    ...(manual ? { additionalData: { manualCapture: 'true' } } : { captureDelayHours: 0 }),
    ...(request.split ? { splits: splitItems(request.split, request.reference) } : {}),
  };
}

/**
 * A platform's payment split among balance accounts (Adyen for Platforms, docs.adyen.com/platforms/online-payments/split-transactions):
 * each connected merchant's share a BalanceAccount item to its balance account, the platform's own (its fee) a
 * Commission item, booked to the platform's liable balance account. Their amounts add up to the payment's, as Adyen
 * requires. No Remainder item: the amount is charged in its own currency, so no conversion leaves one; the
 * transaction fees, unnamed, are booked to the liable balance account (the platform's), as Adyen does by default.
 * Each item's reference is unique: the attempt's with the merchant's id, or `.commission`. A capture or refund is
 * split the same way, under the same references (Adyen's split refunds use the original split's), where a seller
 * whose share of it rounds to nothing is left out.
 */
export function splitItems(split: PaymentSplit, reference: string): Record<string, unknown>[] {
  return [
    ...split.recipients
      .filter((recipient) => recipient.amount > 0)
      .map((recipient) => ({
        type: 'BalanceAccount',
        account: recipient.accountId,
        amount: { value: recipient.amount },
        reference: `${reference}.${recipient.merchantId}`,
      })),
    ...(split.platformAmount > 0 ? [{ type: 'Commission', amount: { value: split.platformAmount }, reference: `${reference}.commission` }] : []),
  ];
}

/** The payment method details; cards are sent unencrypted, as Adyen allows PCI-compliant merchants. */
function paymentMethodDetails(method: PaymentMethod): Record<string, unknown> {
  switch (method.type) {
    case 'card':
      return {
        type: 'scheme',
        number: method.card.number,
        expiryMonth: String(method.card.expiryMonth).padStart(2, '0'),
        expiryYear: String(method.card.expiryYear),
        cvc: method.card.cvc,
        ...(method.card.holderName ? { holderName: method.card.holderName } : {}),
      };
    case 'bank_redirect':
      // iDEAL: the shopper picks the bank on iDEAL's own page (iDEAL 2.0 has no issuer list).
      return { type: 'ideal' };
    default:
      // The registry offers Adyen for the methods above only, so routing never sends another here.
      throw new Error(`the Adyen connector does not take ${method.type} payments`);
  }
}
