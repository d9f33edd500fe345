// The Stripe connector's tables, row by row, and its Stripe-Signature check against the signatures Stripe's own
// library makes (generateTestHeaderString): exactly those verify, nothing tampered with does.
import Stripe from 'stripe';
import { describe, expect, it } from 'vitest';
import { DECLINE_CATALOG, isDeclineCode, type DeclineCode } from '../../src/kernel/declines.ts';
import { retryDecision } from '../../src/modules/payments/machine/retry.ts';
import { CALLBACK_TOLERANCE_SECONDS, parseStripeCallback, verifyStripeSignature } from '../../src/modules/connectors/stripe/callbacks.ts';
import { connectorErrorOf, DECLINE_CODES, declineOf } from '../../src/modules/connectors/stripe/decline-map.ts';
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

  it('a 3DS intent carries its redirect; a declined one our code, with Stripe’s beside it and in the message', () => {
    const challenged = toProcessorPayment(intent(rows[4]![1]));
    expect(challenged.nextAction).toEqual({ type: 'redirect', url: 'https://hooks.stripe.com/3ds' });
    expect(toProcessorPayment(intent(rows[0]![1])).error).toEqual({
      code: 'card_declined',
      processorCode: 'generic_decline',
      message: 'Your card was declined. (stripe: card_declined/generic_decline)',
      processorBody: declined,
    });
  });

  it('an intent paid with setup_future_usage and a Customer gives our saved card token, `cus_…:pm_…`; one without, none', () => {
    const paid = { status: 'succeeded', customer: 'cus_1', payment_method: 'pm_1' } as const;
    expect(toProcessorPayment(intent({ ...paid, setup_future_usage: 'off_session' })).paymentMethodToken).toBe('cus_1:pm_1');
    expect(toProcessorPayment(intent(paid)).paymentMethodToken).toBeNull();
    // Ids not of the shape a later charge needs are never sealed as a token that every charge would refuse.
    expect(toProcessorPayment(intent({ ...paid, payment_method: 'card_1', setup_future_usage: 'off_session' })).paymentMethodToken).toBeNull();
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
  // [Stripe's decline_code, the catalog's code, sent on to the next processor (without the profile listing it)]
  const rows: [string, DeclineCode, boolean][] = [
    ['generic_decline', 'card_declined', false],
    ['card_declined', 'card_declined', false],
    ['do_not_honor', 'card_declined', false],
    ['call_issuer', 'card_declined', false],
    ['no_action_taken', 'card_declined', false],
    ['try_again_later', 'processing_error', true],
    ['processing_error', 'processing_error', true],
    ['reenter_transaction', 'processing_error', true],
    ['issuer_not_available', 'issuer_unavailable', true],
    ['card_not_supported', 'card_not_supported', true],
    ['currency_not_supported', 'currency_not_supported', true],
    ['authentication_required', 'authentication_required', true],
    ['invalid_amount', 'invalid_amount', false],
    ['not_permitted', 'transaction_not_allowed', false],
    ['service_not_allowed', 'transaction_not_allowed', false],
    ['transaction_not_allowed', 'transaction_not_allowed', false],
    ['card_velocity_exceeded', 'card_velocity_exceeded', false],
    ['withdrawal_count_limit_exceeded', 'card_velocity_exceeded', false],
    ['incorrect_zip', 'incorrect_address', false],
    ['incorrect_pin', 'incorrect_pin', false],
    ['invalid_pin', 'incorrect_pin', false],
    ['pin_try_exceeded', 'pin_tries_exceeded', false],
    ['offline_pin_required', 'online_pin_required', false],
    ['online_or_offline_pin_required', 'online_pin_required', false],
    ['invalid_account', 'invalid_account', false],
    ['insufficient_funds', 'insufficient_funds', false],
    ['expired_card', 'expired_card', false],
    ['incorrect_cvc', 'incorrect_cvc', false],
    ['invalid_cvc', 'incorrect_cvc', false],
    ['incorrect_number', 'invalid_number', false],
    ['invalid_expiry_month', 'invalid_expiry_date', false],
    ['invalid_expiry_year', 'invalid_expiry_date', false],
    ['invalid_number', 'invalid_number', false],
    ['lost_card', 'lost_card', false],
    ['stolen_card', 'stolen_card', false],
    ['pickup_card', 'pickup_card', false],
    ['restricted_card', 'restricted_card', false],
    ['security_violation', 'restricted_card', false],
    ['fraudulent', 'fraudulent', false],
    ['merchant_blacklist', 'fraudulent', false],
    ['payment_intent_authentication_failure', 'authentication_failed', false],
    ['revocation_of_authorization', 'revocation_of_authorization', false],
    ['revocation_of_all_authorizations', 'revocation_of_authorization', false],
    ['stop_payment_order', 'revocation_of_authorization', false],
    ['do_not_try_again', 'do_not_try_again', false],
    ['card_decline_rate_limit_exceeded', 'do_not_try_again', false],
    ['duplicate_transaction', 'duplicate_transaction', false],
  ];
  const noProfileCodes = { retriesUsed: 0, maxRetries: 3, retryableDeclineCodes: [], nextConnectorAvailable: true };

  it('every code of the table has a row here, each on a code of the catalog', () => {
    expect(rows.map(([code]) => code).sort()).toEqual(Object.keys(DECLINE_CODES).sort());
    for (const ours of Object.values(DECLINE_CODES)) expect(isDeclineCode(ours)).toBe(true);
  });

  it.each(rows)('%s → %s (sent on: %s), Stripe’s code kept beside it', (stripeCode, ours, sentOn) => {
    const stripeError = { type: 'card_error', code: 'card_declined', decline_code: stripeCode, message: 'Declined.' };
    const decline = declineOf(stripeError);
    expect(decline).toEqual({ code: ours, processorCode: stripeCode, message: `Declined. (stripe: card_declined/${stripeCode})`, processorBody: stripeError });
    // The decision is the catalog's: the same as any processor's decline with that code.
    expect(retryDecision({ kind: 'declined', code: decline.code }, noProfileCodes).retry).toBe(sentOn);
    expect(sentOn).toBe(DECLINE_CATALOG[ours].retry === 'soft' || DECLINE_CATALOG[ours].retry === 'processor_error');
  });

  it('a code without decline_code is read by its code; an unknown one is a decline not sent on', () => {
    expect(declineOf({ type: 'card_error', code: 'expired_card', message: 'Expired.' })).toMatchObject({ code: 'expired_card', processorCode: 'expired_card' });
    const unknown = declineOf({ type: 'card_error', code: 'something_new', message: 'No.' });
    expect(unknown).toEqual({
      code: 'unknown_decline',
      processorCode: 'something_new',
      message: 'No. (stripe: something_new)',
      processorBody: { type: 'card_error', code: 'something_new', message: 'No.' },
    });
    expect(retryDecision({ kind: 'declined', code: unknown.code }, noProfileCodes).retry).toBe(false);
    // A profile that retries plain declines does not retry what no map read.
    expect(retryDecision({ kind: 'declined', code: unknown.code }, { ...noProfileCodes, retryableDeclineCodes: ['card_declined'] }).retry).toBe(false);
  });

  it('a decline_code it has no row for is unknown, whatever its code (card_declined) maps to', () => {
    for (const declineCode of ['new_account_information_available', 'testmode_decline']) {
      expect(DECLINE_CODES[declineCode]).toBeUndefined();
      expect(declineOf({ type: 'card_error', code: 'card_declined', decline_code: declineCode, message: 'No.' })).toMatchObject({
        code: 'unknown_decline',
        processorCode: declineCode,
      });
    }
    // Not a row: an inherited property of the table is no Stripe code.
    expect(declineOf({ type: 'card_error', code: 'card_declined', decline_code: 'constructor', message: 'No.' }).code).toBe('unknown_decline');
  });

  it('an identical charge that just went through, and a card declined too often lately, are hard: never sent on, even when the profile retries plain declines', () => {
    const everything = { ...noProfileCodes, retryableDeclineCodes: ['card_declined', 'unknown_decline'] };
    for (const [declineCode, ours] of [
      ['duplicate_transaction', 'duplicate_transaction'],
      ['card_decline_rate_limit_exceeded', 'do_not_try_again'],
    ] as const) {
      const decline = declineOf({ type: 'card_error', code: 'card_declined', decline_code: declineCode, message: 'No.' });
      expect(decline).toMatchObject({ code: ours, processorCode: declineCode });
      expect(retryDecision({ kind: 'declined', code: decline.code }, everything)).toEqual({ retry: false, reason: `${ours} is a hard decline` });
    }
  });

  it('a card error before any PaymentIntent (Stripe refused the card details) is a refusal carrying the catalog code, Stripe’s beside', () => {
    for (const [code, ours] of [
      ['incorrect_number', 'invalid_number'],
      ['invalid_expiry_year', 'invalid_expiry_date'],
      ['invalid_cvc', 'incorrect_cvc'],
    ] as const) {
      const raw = { type: 'card_error' as const, code, message: 'Refused.', param: 'number' };
      const refusal = connectorErrorOf(new Stripe.errors.StripeCardError(raw), 1000);
      expect(refusal).toMatchObject({ kind: 'rejected', outcomeUnknown: false, processorCode: code, declineCode: ours });
      // Stripe's error object is kept, scrubbed, as with any refusal.
      expect(refusal.processorBody).toEqual(raw);
      expect(retryDecision({ kind: 'not_processed', code: refusal.declineCode! }, noProfileCodes).retry).toBe(false);
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
