// The sandbox processor's wire format: the objects it answers with, as far as the connector reads them (zod:
// anything else is not an answer), and the request fields it is sent, in its own names.
import { z } from 'zod';
import type { PaymentMethod, PayoutDestination } from '../port.ts';

/**
 * Text a processor sends that may be stored: bounded, without NUL, and well-formed (PostgreSQL holds
 * neither a NUL nor, in JSON such as a next action, a lone surrogate).
 */
const processorText = (max: number) =>
  z
    .string()
    .max(max)
    .refine((value) => !value.includes('\u0000'), 'must not contain NUL')
    .refine((value) => value.isWellFormed(), 'must be well-formed Unicode');
/** Amounts in minor units, within the database's integer range. */
const processorAmount = z.number().int().nonnegative().max(2_147_483_647);

/** The sandbox's payment object, as far as the service reads it; anything else is not an answer. */
export const sandboxPaymentSchema = z.object({
  id: processorText(100).pipe(z.string().min(1)),
  status: z.enum([
    'requires_device_data',
    'requires_authentication',
    'requires_customer_action',
    'requires_capture',
    'processing',
    'succeeded',
    'failed',
    'canceled',
  ]),
  amount: processorAmount,
  amount_capturable: processorAmount,
  amount_captured: processorAmount,
  next_action: z
    .discriminatedUnion('type', [
      z.object({ type: z.literal('redirect'), redirect_url: processorText(2048) }),
      z.object({
        type: z.literal('display_instructions'),
        redirect_url: processorText(2048),
        instructions: z.record(processorText(100), z.union([processorText(1000), z.number()])),
      }),
    ])
    .nullable(),
  payment_method_token: processorText(200).nullish(),
  // Its `retryable` is not read: the decline catalog decides (decline-map.ts). The whole object is kept, scrubbed, on the failed attempt.
  error: z
    .object({ code: processorText(100), message: processorText(1000) })
    .catchall(z.unknown())
    .nullable(),
  canceled_after_capture: z.boolean().optional(),
});
export type SandboxPayment = z.infer<typeof sandboxPaymentSchema>;

/** The sandbox's refund object, as far as the service reads it. */
export const sandboxRefundSchema = z.object({
  id: processorText(100).pipe(z.string().min(1)),
  object: z.literal('refund'),
  status: z.enum(['pending', 'succeeded', 'failed', 'requires_review']),
  amount: processorAmount,
  reference: processorText(100).nullish(),
  error: z.object({ code: processorText(100), message: processorText(1000) }).nullable(),
});
export type SandboxRefund = z.infer<typeof sandboxRefundSchema>;

/** The sandbox's dispute object, as far as the service reads it. */
export const sandboxDisputeSchema = z.object({
  id: processorText(100).pipe(z.string().min(1)),
  object: z.literal('dispute'),
  payment: processorText(100).pipe(z.string().min(1)),
  status: z.enum(['needs_response', 'accepted', 'under_review', 'won', 'lost', 'expired', 'cancelled']),
  amount: processorAmount,
  currency: z.string().regex(/^[a-z]{3}$/),
  reason: processorText(100).nullable(),
  evidence_due_by: z.number().int().min(0).max(253_402_300_799).nullable(),
});
export type SandboxDispute = z.infer<typeof sandboxDisputeSchema>;

/** The sandbox's payout object, as far as the service reads it. */
export const sandboxPayoutSchema = z.object({
  id: processorText(100).pipe(z.string().min(1)),
  object: z.literal('payout'),
  status: z.enum(['pending', 'in_transit', 'paid', 'failed', 'cancelled', 'expired', 'returned']),
  reference: processorText(100).nullish(),
  error: z.object({ code: processorText(100), message: processorText(1000) }).nullable(),
});
export type SandboxPayout = z.infer<typeof sandboxPayoutSchema>;

/** The sandbox's saved card (payment method) object, as far as the service reads it. */
const sandboxPaymentMethodSchema = z.object({
  id: processorText(200).pipe(z.string().min(1)),
  object: z.literal('payment_method'),
  status: z.enum(['active', 'revoked']),
});

const eventName = z.string().regex(/^[\x21-\x7e]{1,100}$/);

/** A sandbox callback: `{"id","type","created","data":{"object":<the payment or refund as GET returns it>}}`. */
export const sandboxCallbackSchema = z.object({
  id: eventName,
  type: eventName,
  data: z.object({
    object: z.union([
      sandboxRefundSchema,
      sandboxDisputeSchema,
      sandboxPayoutSchema,
      sandboxPaymentMethodSchema,
      sandboxPaymentSchema.extend({ reference: processorText(100).nullish() }),
    ]),
  }),
});

export const sandboxEndpointSchema = z.object({ id: z.string().min(1) });

export const sandboxSessionSchema = z.object({ wallet: z.string(), session_token: z.string().min(1), expires_at: z.number().int() });

export const sandboxErrorSchema = z.object({ error: z.object({ code: z.string(), message: z.string() }) });

/** The request body's payment method fields, in the sandbox's wire names. */
export function paymentMethodFields(method: PaymentMethod): Record<string, unknown> {
  switch (method.type) {
    case 'card':
      return {
        payment_method_type: 'card',
        card: {
          number: method.card.number,
          exp_month: method.card.expiryMonth,
          exp_year: method.card.expiryYear,
          cvc: method.card.cvc,
          ...(method.card.holderName ? { holder_name: method.card.holderName } : {}),
        },
      };
    case 'saved_card':
      return { payment_method_type: 'card', payment_method_token: method.token, ...(method.cvc === null ? { off_session: true } : { card_cvc: method.cvc }) };
    case 'bank_debit':
      return { payment_method_type: 'bank_debit', bank_debit: { account_holder_name: method.accountHolderName, iban: method.iban } };
    case 'wallet':
    case 'pay_later':
      return { payment_method_type: method.type, [method.type]: { type: method.provider, payment_token: method.paymentToken } };
    case 'bank_redirect':
      return { payment_method_type: 'bank_redirect', bank_redirect: { bank: method.bank } };
    case 'bank_transfer':
      return { payment_method_type: 'bank_transfer', bank_transfer: {} };
    case 'crypto':
      return { payment_method_type: 'crypto', crypto: { network: method.network } };
  }
}

/** A payout's destination in the sandbox's wire names. */
export function destinationFields(destination: PayoutDestination): Record<string, unknown> {
  return destination.type === 'card'
    ? {
        type: 'card',
        card: {
          number: destination.card.number,
          exp_month: destination.card.expiryMonth,
          exp_year: destination.card.expiryYear,
          ...(destination.card.holderName ? { holder_name: destination.card.holderName } : {}),
        },
      }
    : { type: 'bank_account', account_holder_name: destination.accountHolderName, iban: destination.iban };
}
