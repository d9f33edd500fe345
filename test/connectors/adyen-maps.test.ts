// Adyen's tables, row by row: resultCodes and notification eventCodes as our statuses, refusal reasons as our
// declines (with retry.ts's decision), and the HMAC of notifications as the official library computes it.
import { hmacValidator } from '@adyen/api-library';
import { describe, expect, it } from 'vitest';
import { parseAdyenNotification, verifyAdyenNotification, verifyItem } from '../../src/modules/connectors/adyen/callbacks.ts';
import { DECLINE_CATALOG, type DeclineCode } from '../../src/kernel/declines.ts';
import { CARD_VALIDATION_ERRORS, declineOf, paymentErrorOf, REFUSAL_REASONS, refusalOf } from '../../src/modules/connectors/adyen/decline-map.ts';
import { declineOf as stripeDeclineOf } from '../../src/modules/connectors/stripe/decline-map.ts';
import { DISPUTE_STATUSES, EVENT_CODES, RESULT_CODE_STATUSES, toProcessorPayment } from '../../src/modules/connectors/adyen/status-map.ts';
import { RESULT_CODES, type NotificationItem } from '../../src/modules/connectors/adyen/wire.ts';
import { HARD_DECLINE_CODES, retryDecision } from '../../src/modules/payments/machine/retry.ts';

const HMAC_KEY = '44782DEF547AAA06C910C43932B1EB0C71FC68D9D0C057550C48EC2ACF6BA056';

describe('resultCodes', () => {
  const expected = {
    Authorised: ['captured', 'authorized'],
    Refused: ['failed', 'failed'],
    RedirectShopper: ['requires_authentication', 'requires_authentication'],
    IdentifyShopper: ['requires_authentication', 'requires_authentication'],
    ChallengeShopper: ['requires_authentication', 'requires_authentication'],
    Pending: ['processing', 'processing'],
    Received: ['processing', 'processing'],
    Cancelled: ['voided', 'voided'],
    Error: ['failed', 'failed'],
  } as const;
  it.each(RESULT_CODES)('%s', (resultCode) => {
    expect(RESULT_CODE_STATUSES[resultCode]('AUTOMATIC')).toBe(expected[resultCode][0]);
    expect(RESULT_CODE_STATUSES[resultCode]('MANUAL')).toBe(expected[resultCode][1]);
  });

  it('a redirect is the next action; a refusal keeps both codes; an error may be retried elsewhere', () => {
    const redirect = toProcessorPayment(
      { resultCode: 'RedirectShopper', pspReference: 'P1', action: { type: 'redirect', method: 'GET', url: 'https://issuer.example/3ds' } },
      'AUTOMATIC',
      1000,
      'att_1',
    );
    expect(redirect).toMatchObject({
      transactionId: 'P1',
      status: 'requires_authentication',
      nextAction: { type: 'redirect', url: 'https://issuer.example/3ds' },
    });
    const refused = toProcessorPayment({ resultCode: 'Refused', refusalReasonCode: '12', refusalReason: 'Not enough balance' }, 'AUTOMATIC', 1000, 'att_1');
    expect(refused).toMatchObject({ transactionId: 'att_1', status: 'failed', error: { code: 'insufficient_funds', processorCode: '12' } });
    expect(refused.error?.message).toContain('Adyen refusalReasonCode 12');
    expect(toProcessorPayment({ resultCode: 'Error' }, 'MANUAL', 1000, 'att_1').error).toMatchObject({ code: 'processing_error', processorCode: null });
    expect(toProcessorPayment({ resultCode: 'Authorised', pspReference: 'P' }, 'MANUAL', 1000, 'a')).toMatchObject({
      amountCapturable: 1000,
      amountCaptured: 0,
    });
  });
});

describe('refusal reasons', () => {
  // [Adyen's refusalReasonCode, the catalog's code, sent on to the next processor (without the profile listing it)]
  const rows: [string, DeclineCode, boolean][] = [
    ['0', 'processing_error', true],
    ['2', 'card_declined', false],
    ['3', 'card_declined', false],
    ['4', 'processing_error', true],
    ['5', 'pickup_card', false],
    ['6', 'expired_card', false],
    ['7', 'invalid_amount', false],
    ['8', 'invalid_number', false],
    ['9', 'issuer_unavailable', true],
    ['10', 'card_not_supported', true],
    ['11', 'authentication_failed', false],
    ['12', 'insufficient_funds', false],
    ['14', 'fraudulent', false],
    ['15', 'card_declined', false],
    ['16', 'customer_cancelled', false],
    ['17', 'incorrect_pin', false],
    ['18', 'pin_tries_exceeded', false],
    ['19', 'processing_error', true],
    ['20', 'fraudulent', false],
    ['21', 'processing_error', true],
    ['22', 'fraudulent', false],
    ['23', 'transaction_not_allowed', false],
    ['24', 'incorrect_cvc', false],
    ['25', 'restricted_card', false],
    ['26', 'revocation_of_authorization', false],
    ['27', 'card_declined', false],
    ['28', 'card_velocity_exceeded', false],
    ['29', 'card_velocity_exceeded', false],
    ['31', 'fraudulent', false],
    ['32', 'incorrect_address', false],
    ['33', 'online_pin_required', false],
    ['34', 'invalid_account', false],
    ['35', 'invalid_account', false],
    ['36', 'online_pin_required', false],
    ['37', 'card_declined', false],
    ['38', 'authentication_required', true],
    ['39', 'authentication_failed', false],
    ['42', 'authentication_failed', false],
    ['46', 'do_not_try_again', false],
  ];
  const context = { retriesUsed: 0, maxRetries: 3, retryableDeclineCodes: [], nextConnectorAvailable: true };

  it('every code of the table has a row here', () => {
    expect(rows.map(([code]) => code)).toEqual(Object.keys(REFUSAL_REASONS));
  });

  it.each(rows)('%s → %s (sent on: %s), Adyen’s code kept beside it', (adyenCode, ours, sentOn) => {
    const reason = REFUSAL_REASONS[adyenCode]!.reason;
    expect(paymentErrorOf(adyenCode, reason)).toEqual({ code: ours, processorCode: adyenCode, message: `${reason} (Adyen refusalReasonCode ${adyenCode})` });
    // A notification carries the reason's text only: the same code, Adyen's found by its reason.
    expect(paymentErrorOf(undefined, reason)).toMatchObject({ code: ours, processorCode: adyenCode });
    // The decision is the catalog's: the same as any processor's decline with that code.
    expect(retryDecision({ kind: 'declined', code: ours }, context).retry).toBe(sentOn);
    expect(sentOn).toBe(DECLINE_CATALOG[ours].retry === 'soft' || DECLINE_CATALOG[ours].retry === 'processor_error');
  });

  it('fraud, lost or stolen cards and balance are never retried; an unknown code is the unknown decline, Adyen’s code kept', () => {
    for (const code of ['12', '14', '20', '22', '31', '6', '24', '8']) expect(HARD_DECLINE_CODES.has(declineOf(code, undefined))).toBe(true);
    expect(paymentErrorOf('999', 'Something new')).toEqual({
      code: 'unknown_decline',
      processorCode: '999',
      message: 'Something new (Adyen refusalReasonCode 999)',
    });
    expect(paymentErrorOf(undefined, 'Something new')).toMatchObject({ code: 'unknown_decline', processorCode: null });
    expect(declineOf('constructor', undefined)).toBe('unknown_decline');
  });

  it('Adyen and Stripe read the same decline as the same code (issuer unavailable, insufficient funds, fraud)', () => {
    const stripe = (declineCode: string) => stripeDeclineOf({ type: 'card_error', code: 'card_declined', decline_code: declineCode, message: 'No.' }).code;
    expect(declineOf('9', undefined)).toBe(stripe('issuer_not_available'));
    expect(declineOf('12', undefined)).toBe(stripe('insufficient_funds'));
    expect(declineOf('20', undefined)).toBe(stripe('fraudulent'));
    expect(declineOf('2', undefined)).toBe(stripe('generic_decline'));
    expect(declineOf('46', undefined)).toBe(stripe('do_not_try_again'));
  });
});

const item = (fields: Partial<NotificationItem> & Pick<NotificationItem, 'eventCode'>): NotificationItem => ({
  pspReference: 'PSP2',
  merchantAccountCode: 'TestMerchant',
  merchantReference: 'att_1',
  amount: { value: 1000, currency: 'EUR' },
  eventDate: '2026-01-01T00:00:00+01:00',
  success: 'true',
  ...fields,
});

describe('notification eventCodes', () => {
  const read = (fields: Parameters<typeof item>[0]) => EVENT_CODES[fields.eventCode]!(item(fields), 'e');
  it('AUTHORISATION: by the capture method the payment carries; a failure is a decline', () => {
    expect(read({ eventCode: 'AUTHORISATION', additionalData: { 'metadata.captureMethod': 'manual' } })).toMatchObject({
      kind: 'payment',
      reference: 'att_1',
      payment: { transactionId: 'PSP2', status: 'authorized', amountCapturable: 1000 },
    });
    expect(read({ eventCode: 'AUTHORISATION', additionalData: { metadata: { captureMethod: 'automatic' } } })).toMatchObject({
      payment: { status: 'captured', amountCaptured: 1000 },
    });
    expect(read({ eventCode: 'AUTHORISATION' })).toBeNull();
    expect(read({ eventCode: 'AUTHORISATION', success: 'false', reason: 'CVC Declined' })).toMatchObject({
      payment: { status: 'failed', error: { code: 'incorrect_cvc' } },
    });
  });
  it('CAPTURE of a partial capture (its reference says so): partially captured', () => {
    expect(read({ eventCode: 'CAPTURE', originalReference: 'PSP1', merchantReference: 'att_1_capture.partial' })).toMatchObject({
      payment: { status: 'partially_captured', amountCaptured: 1000 },
    });
  });
  it.each([
    ['CAPTURE', 'true', 'captured'],
    ['CAPTURE', 'false', 'capture_failed'],
    ['CAPTURE_FAILED', 'true', 'capture_failed'],
    ['CANCELLATION', 'true', 'voided'],
    ['CANCELLATION', 'false', 'failed'],
  ] as const)('%s success=%s: the payment %s', (eventCode, success, status) => {
    expect(read({ eventCode, success, originalReference: 'PSP1', merchantReference: 'att_1_capture' })).toMatchObject({
      kind: 'payment',
      reference: null,
      payment: { transactionId: 'PSP1', status },
    });
  });
  it.each([
    ['REFUND', 'true', 'succeeded'],
    ['REFUND', 'false', 'failed'],
    ['REFUND_FAILED', 'true', 'failed'],
  ] as const)('%s success=%s: the refund %s', (eventCode, success, status) => {
    expect(read({ eventCode, success, originalReference: 'PSP1', merchantReference: 'ref_1' })).toMatchObject({
      kind: 'refund',
      reference: 'ref_1',
      refund: { refundId: 'PSP2', status, amount: 1000 },
    });
  });
  it.each<[string, string | undefined, string]>([
    ['NOTIFICATION_OF_CHARGEBACK', undefined, 'opened'],
    ['CHARGEBACK', undefined, 'opened'],
    ['CHARGEBACK_REVERSED', undefined, 'won'],
    ['SECOND_CHARGEBACK', undefined, 'lost'],
    ['PREARBITRATION_WON', undefined, 'won'],
    ['PREARBITRATION_LOST', undefined, 'lost'],
    ...Object.entries(DISPUTE_STATUSES).map(([disputeStatus, status]): [string, string, string] => ['CHARGEBACK', disputeStatus, status]),
  ])('%s (disputeStatus %s): the dispute %s', (eventCode, disputeStatus, status) => {
    const additionalData = { chargebackReasonCode: '10.4', defensePeriodEndsAt: '2030-01-01T00:00:00+01:00', ...(disputeStatus ? { disputeStatus } : {}) };
    expect(read({ eventCode, originalReference: 'PSP1', additionalData })).toMatchObject({
      kind: 'dispute',
      dispute: {
        disputeId: 'PSP2',
        transactionId: 'PSP1',
        status,
        amount: 1000,
        currency: 'EUR',
        reason: '10.4',
        evidenceDueBy: new Date('2029-12-31T23:00:00Z'),
      },
    });
  });
});

describe('notification HMAC', () => {
  const signed = (fields: Parameters<typeof item>[0], key = HMAC_KEY) => {
    const unsigned = item(fields);
    const hmacSignature = new hmacValidator().calculateHmac(unsigned as never, key);
    return { ...unsigned, additionalData: { ...unsigned.additionalData, hmacSignature } };
  };
  const body = (...items: NotificationItem[]) =>
    Buffer.from(JSON.stringify({ live: 'false', notificationItems: items.map((i) => ({ NotificationRequestItem: i })) }));

  it('accepts exactly what the official library signs, and agrees with its validator', () => {
    const capture = signed({ eventCode: 'CAPTURE', originalReference: 'PSP1' });
    const authorisation = signed({ eventCode: 'AUTHORISATION', additionalData: { 'metadata.captureMethod': 'manual' } });
    for (const signedItem of [capture, authorisation]) {
      expect(verifyItem(signedItem, HMAC_KEY)).toBe(true);
      expect(new hmacValidator().validateHMAC(signedItem as never, HMAC_KEY)).toBe(true);
    }
    expect(verifyAdyenNotification(body(capture, authorisation), HMAC_KEY)).toBe(true);
    expect(parseAdyenNotification(body(capture), 'TestMerchant')).toMatchObject([{ kind: 'payment', eventId: 'PSP2:CAPTURE:true', eventType: 'CAPTURE' }]);
  });

  it('reads every item of a batch, in order; those of another merchant account and eventCodes not acted on are ignored', () => {
    const items = [
      item({ eventCode: 'CAPTURE', originalReference: 'PSP1' }),
      item({ eventCode: 'REFUND', pspReference: 'PSP3', originalReference: 'PSP1', success: 'false' }),
      item({ eventCode: 'REFUND', pspReference: 'PSP4', originalReference: 'PSP1', merchantAccountCode: 'OtherMerchant' }),
      item({ eventCode: 'REPORT_AVAILABLE', pspReference: 'PSP5' }),
      // Not a table row, though every object has one by that name.
      item({ eventCode: 'constructor', pspReference: 'PSP6' }),
    ];
    // Each event carries its own item as sent (its log row keeps that, not the whole batch).
    const own = (index: number) => JSON.stringify({ NotificationRequestItem: items[index] });
    expect(parseAdyenNotification(body(...items), 'TestMerchant')).toEqual([
      expect.objectContaining({ kind: 'payment', eventId: 'PSP2:CAPTURE:true', itemBody: own(0) }),
      expect.objectContaining({ kind: 'refund', eventId: 'PSP3:REFUND:false', refund: expect.objectContaining({ status: 'failed' }), itemBody: own(1) }),
      // The account it was for, named in the operator's warning.
      {
        kind: 'ignored',
        eventId: 'PSP4:REFUND:true',
        eventType: 'REFUND',
        reason: 'other_merchant_account',
        processorAccount: 'OtherMerchant',
        itemBody: own(2),
      },
      { kind: 'ignored', eventId: 'PSP5:REPORT_AVAILABLE:true', eventType: 'REPORT_AVAILABLE', reason: 'unrecognised_event', itemBody: own(3) },
      { kind: 'ignored', eventId: 'PSP6:constructor:true', eventType: 'constructor', reason: 'unrecognised_event', itemBody: own(4) },
    ]);
  });

  it('rejects another key, a changed signed field, a missing signature, one unsigned item, and bodies that are not notifications', () => {
    const capture = signed({ eventCode: 'CAPTURE', originalReference: 'PSP1' });
    expect(verifyAdyenNotification(body(capture), HMAC_KEY.replace('4', '5'))).toBe(false);
    for (const changed of [
      { amount: { value: 999, currency: 'EUR' } },
      { success: 'false' as const },
      { originalReference: 'PSP9' },
      { eventCode: 'REFUND' },
    ]) {
      const forged = { ...capture, ...changed };
      expect(verifyAdyenNotification(body(forged), HMAC_KEY)).toBe(false);
      expect(new hmacValidator().validateHMAC(forged as never, HMAC_KEY)).toBe(false);
    }
    expect(verifyAdyenNotification(body(item({ eventCode: 'CAPTURE' })), HMAC_KEY)).toBe(false);
    expect(verifyAdyenNotification(body(capture, item({ eventCode: 'REFUND' })), HMAC_KEY)).toBe(false);
    expect(verifyAdyenNotification(Buffer.from('[accepted]'), HMAC_KEY)).toBe(false);
    expect(verifyAdyenNotification(body(capture), 'not hex')).toBe(false);
  });
});

describe('HTTP refusals', () => {
  it('a 4xx did nothing, except errorCode 704: the same Idempotency-Key is in progress or done, so the first request may have acted', () => {
    const body = (errorCode: string) => ({ status: 422, errorCode, message: 'x', errorType: 'validation' });
    expect(refusalOf(422, body('101'), 'the payment')).toMatchObject({ kind: 'rejected', outcomeUnknown: false });
    for (const status of [409, 422]) expect(refusalOf(status, body('704'), 'the payment')).toMatchObject({ outcomeUnknown: true });
  });

  it('a validation error about the card (number, CVC, expiry) carries the catalog code, a hard decline; any other carries none', () => {
    const body = (errorCode: string) => ({ status: 422, errorCode, message: 'x', errorType: 'validation' });
    const expected = { '101': 'invalid_number', '103': 'incorrect_cvc', '129': 'invalid_expiry_date', '140': 'invalid_expiry_date' };
    expect(CARD_VALIDATION_ERRORS).toEqual(expected);
    for (const [errorCode, code] of Object.entries(expected)) {
      expect(refusalOf(422, body(errorCode), 'the payment')).toMatchObject({ kind: 'rejected', processorCode: errorCode, declineCode: code });
      expect(HARD_DECLINE_CODES.has(code)).toBe(true);
    }
    expect(refusalOf(422, body('167'), 'the capture').declineCode).toBeUndefined();
    expect(refusalOf(422, body('constructor'), 'the payment').declineCode).toBeUndefined();
  });
});
