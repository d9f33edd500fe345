// The Stripe connector's tables, row by row, and its Stripe-Signature check against the signatures Stripe's own
// library makes (generateTestHeaderString): exactly those verify, nothing tampered with does.
import Stripe from 'stripe';
import { describe, expect, it } from 'vitest';
import { HARD_DECLINE_CODES } from '../../src/modules/payments/machine/retry.ts';
import { CALLBACK_TOLERANCE_SECONDS, parseStripeCallback, verifyStripeSignature } from '../../src/modules/connectors/stripe/callbacks.ts';
import { DECLINE_CODES, declineOf } from '../../src/modules/connectors/stripe/decline-map.ts';
import {
  DISPUTE_STATUS_MAP,
  PAYMENT_STATUSES,
  REFUND_STATUS_MAP,
  toProcessorDispute,
  toProcessorPayment,
} from '../../src/modules/connectors/stripe/status-map.ts';
import type { StripeDispute, StripePaymentIntent } from '../../src/modules/connectors/stripe/wire.ts';
import fixtures from '../fakes/stripe/fixtures.json' with { type: 'json' };

const intent = (fields: Partial<StripePaymentIntent>): StripePaymentIntent => ({
  id: 'pi_1',
  object: 'payment_intent',
  status: 'succeeded',
  amount: 1000,
  amount_capturable: 0,
  amount_received: 1000,
  next_action: null,
  last_payment_error: null,
  metadata: {},
  ...fields,
});
const declined = { type: 'card_error', code: 'card_declined', decline_code: 'generic_decline', message: 'Your card was declined.' };

describe('PaymentIntent statuses', () => {
  // Written from Stripe's documentation of each status (docs.stripe.com/payments/paymentintents/lifecycle).
  const rows: [string, Partial<StripePaymentIntent>, string][] = [
    ['requires_payment_method, after a decline', { status: 'requires_payment_method', last_payment_error: declined }, 'failed'],
    [
      'requires_payment_method, after failed 3DS',
      { status: 'requires_payment_method', last_payment_error: { type: 'invalid_request_error', code: 'payment_intent_authentication_failure' } },
      'authentication_failed',
    ],
    ['requires_payment_method, never tried', { status: 'requires_payment_method' }, 'pending'],
    ['requires_confirmation', { status: 'requires_confirmation' }, 'pending'],
    [
      'requires_action',
      { status: 'requires_action', next_action: { type: 'redirect_to_url', redirect_to_url: { url: 'https://hooks.stripe.com/3ds' } } },
      'requires_authentication',
    ],
    ['processing', { status: 'processing' }, 'processing'],
    ['requires_capture, in full', { status: 'requires_capture', amount_capturable: 1000, amount_received: 0 }, 'authorized'],
    ['requires_capture, in part', { status: 'requires_capture', amount_capturable: 600, amount_received: 0 }, 'partially_authorized'],
    ['succeeded, in full', { status: 'succeeded' }, 'captured'],
    ['succeeded, in part', { status: 'succeeded', amount_received: 400 }, 'partially_captured'],
    ['canceled', { status: 'canceled', amount_received: 0 }, 'voided'],
  ];

  it('every status of the table has a row here', () => {
    expect(new Set(rows.map(([, fields]) => fields.status))).toEqual(new Set(Object.keys(PAYMENT_STATUSES)));
  });

  it.each(rows)('%s reads as %s', (_, fields, expected) => {
    expect(toProcessorPayment(intent(fields)).status).toBe(expected);
  });

  it('a 3DS intent carries its redirect; a declined one our code, with Stripe’s in the message', () => {
    const challenged = toProcessorPayment(intent(rows[4]![1]));
    expect(challenged.nextAction).toEqual({ type: 'redirect', url: 'https://hooks.stripe.com/3ds' });
    expect(toProcessorPayment(intent(rows[0]![1])).error).toEqual({
      code: 'card_declined',
      retryable: true,
      message: 'Your card was declined. (stripe: card_declined/generic_decline)',
    });
  });

  it('a lost dispute: conceded without evidence before its deadline, expired after it, lost after a challenge', () => {
    const dueBy = fixtures.dispute.evidence_details.due_by;
    const lost = (submissionCount: number) =>
      ({
        ...fixtures.dispute,
        payment_intent: 'pi_1',
        status: 'lost',
        evidence_details: { ...fixtures.dispute.evidence_details, submission_count: submissionCount },
      }) as StripeDispute;
    expect(toProcessorDispute(lost(0), dueBy - 60).status).toBe('accepted');
    expect(toProcessorDispute(lost(0), dueBy + 60).status).toBe('expired');
    expect(toProcessorDispute(lost(1), dueBy - 60).status).toBe('lost');
    expect(toProcessorDispute({ ...lost(0), status: 'won' } as StripeDispute, dueBy + 60).status).toBe('won');
  });

  it('refund and dispute statuses: each of Stripe’s has its row', () => {
    expect(REFUND_STATUS_MAP).toEqual({ pending: 'pending', requires_action: 'pending', succeeded: 'succeeded', failed: 'failed', canceled: 'failed' });
    expect(DISPUTE_STATUS_MAP).toEqual({
      warning_needs_response: 'opened',
      warning_under_review: 'challenged',
      warning_closed: 'cancelled',
      needs_response: 'opened',
      under_review: 'challenged',
      won: 'won',
      lost: 'lost',
      prevented: 'cancelled',
    });
  });
});

describe('declines', () => {
  // [Stripe's code, our code, may another processor be tried]
  const rows: [string, string, boolean][] = [
    ['generic_decline', 'card_declined', true],
    ['card_declined', 'card_declined', true],
    ['do_not_honor', 'card_declined', true],
    ['try_again_later', 'processing_error', true],
    ['processing_error', 'processing_error', true],
    ['issuer_not_available', 'processing_error', true],
    ['card_not_supported', 'card_not_supported', true],
    ['currency_not_supported', 'currency_not_supported', true],
    ['insufficient_funds', 'insufficient_funds', false],
    ['expired_card', 'expired_card', false],
    ['incorrect_cvc', 'incorrect_cvc', false],
    ['invalid_cvc', 'incorrect_cvc', false],
    ['incorrect_number', 'invalid_number', false],
    ['invalid_number', 'invalid_number', false],
    ['lost_card', 'lost_card', false],
    ['stolen_card', 'stolen_card', false],
    ['pickup_card', 'pickup_card', false],
    ['fraudulent', 'fraudulent', false],
    ['merchant_blacklist', 'fraudulent', false],
    ['payment_intent_authentication_failure', 'authentication_failed', false],
  ];

  it('every code of the table has a row here', () => {
    expect(rows.map(([code]) => code).sort()).toEqual(Object.keys(DECLINE_CODES).sort());
  });

  it.each(rows)('%s → %s (retryable: %s), Stripe’s code kept', (stripeCode, ours, retryable) => {
    const decline = declineOf({ type: 'card_error', code: 'card_declined', decline_code: stripeCode, message: 'Declined.' });
    expect(decline).toEqual({ code: ours, retryable, message: `Declined. (stripe: card_declined/${stripeCode})` });
    // A code our retry rules hold hard is never marked retryable here.
    if (HARD_DECLINE_CODES.has(ours)) expect(retryable).toBe(false);
  });

  it('a code without decline_code is read by its code; an unknown one is a decline not sent on', () => {
    expect(declineOf({ type: 'card_error', code: 'expired_card', message: 'Expired.' })).toMatchObject({ code: 'expired_card', retryable: false });
    expect(declineOf({ type: 'card_error', code: 'something_new', message: 'No.' })).toEqual({
      code: 'card_declined',
      retryable: false,
      message: 'No. (stripe: something_new)',
    });
  });

  it('a decline_code it has no row for is a decline not sent on, though its code (card_declined) has a retryable row', () => {
    for (const declineCode of ['do_not_try_again', 'security_violation', 'restricted_card', 'stop_payment_order', 'revocation_of_authorization']) {
      expect(DECLINE_CODES[declineCode]).toBeUndefined();
      expect(declineOf({ type: 'card_error', code: 'card_declined', decline_code: declineCode, message: 'No.' })).toMatchObject({
        code: 'card_declined',
        retryable: false,
      });
    }
  });
});

describe('Stripe-Signature', () => {
  const stripe = new Stripe('sk_test_signer');
  const secret = 'whsec_test_secret_0123456789';
  const payload = JSON.stringify({
    ...fixtures.event,
    type: 'payment_intent.succeeded',
    data: { object: { ...fixtures.payment_intent, status: 'succeeded' } },
  });
  const now = new Date();
  const sign = (options: Partial<Parameters<typeof stripe.webhooks.generateTestHeaderString>[0]> = {}) =>
    stripe.webhooks.generateTestHeaderString({ payload, secret, timestamp: Math.floor(now.getTime() / 1000), ...options });
  const verify = (header: string | undefined, body = payload, key = secret) => verifyStripeSignature(Buffer.from(body), header, key, now);

  it('accepts the header Stripe’s library makes, and one whose only good v1 is not the first', () => {
    expect(verify(sign())).toBe(true);
    const good = /v1=([0-9a-f]{64})/.exec(sign())![1];
    expect(verify(`t=${Math.floor(now.getTime() / 1000)},v1=${'0'.repeat(64)},v0=abc,v1=${good}`)).toBe(true);
  });

  it('rejects a changed body, another secret, a stale or future timestamp, a changed signature, and no header', () => {
    expect(verify(sign(), payload.replace('succeeded', 'canceled'))).toBe(false);
    expect(verify(sign(), payload, 'whsec_other_secret_000000')).toBe(false);
    expect(verify(sign({ timestamp: Math.floor(now.getTime() / 1000) - CALLBACK_TOLERANCE_SECONDS - 1 }))).toBe(false);
    expect(verify(sign({ timestamp: Math.floor(now.getTime() / 1000) + CALLBACK_TOLERANCE_SECONDS + 1 }))).toBe(false);
    const header = sign();
    expect(verify(header.replace(/v1=([0-9a-f])/, (_, digit: string) => `v1=${digit === '0' ? '1' : '0'}`))).toBe(false);
    expect(verify(header.replace('v1=', 'v0='))).toBe(false);
    expect(verify(undefined)).toBe(false);
    expect(verify('')).toBe(false);
  });
});

describe('events', () => {
  const event = (type: string, object: unknown) => Buffer.from(JSON.stringify({ ...fixtures.event, id: 'evt_1', type, data: { object } }));

  it('reads payment_intent.*, refund.* and charge.dispute.* events; ignores others and mismatched objects', () => {
    const paid = parseStripeCallback(
      event('payment_intent.succeeded', { ...fixtures.payment_intent, status: 'succeeded', amount_received: 1099, metadata: { reference: 'att_1' } }),
    );
    expect(paid).toMatchObject({ kind: 'payment', eventId: 'evt_1', reference: 'att_1', payment: { status: 'captured', amountCaptured: 1099 } });
    const refunded = parseStripeCallback(event('refund.updated', { ...fixtures.refund, metadata: { reference: 'ref_1' } }));
    expect(refunded).toMatchObject({ kind: 'refund', reference: 'ref_1', refund: { refundId: fixtures.refund.id, status: 'succeeded', amount: 100 } });
    const disputed = parseStripeCallback(event('charge.dispute.created', { ...fixtures.dispute, payment_intent: 'pi_1', status: 'needs_response' }));
    expect(disputed).toMatchObject({ kind: 'dispute', dispute: { transactionId: 'pi_1', status: 'opened', currency: 'USD', amount: 1000 } });
    expect(parseStripeCallback(event('plan.created', fixtures.event.data.object))).toBeNull();
    expect(parseStripeCallback(event('payment_intent.succeeded', fixtures.refund))).toBeNull();
    expect(parseStripeCallback(Buffer.from('not json'))).toBeNull();
  });
});
