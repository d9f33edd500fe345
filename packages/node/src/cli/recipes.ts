// How `payments trigger <event_type>` makes each of the 33 events happen: through the API only, with the test
// key, on the sandbox processor's test cards, IBANs and amounts (docs/sandbox.md). One table for the CLI, the
// table in docs/cli.md and test/cli/trigger.test.ts. A recipe returns the id of the object whose event it is.
import { randomBytes } from 'node:crypto';
import { ApiError, type Transport } from '@payments-orchestrator/client-core';
import type { Payments } from '../client.ts';
import {
  CliCancelSubscriptionDocument,
  CliCreatedMandateDocument,
  CliCreateSubscriptionDocument,
  CliRevokeMandateDocument,
  type EventType,
} from '../gql/graphql.ts';
import { firstOf } from './first-of.ts';
import type { BusinessProfile, CreatePaymentInput, Payment, PaymentMethodDataInput, PayoutDestinationInput } from '../types.ts';

export type WebhookEventType = Lowercase<EventType>;

export interface TriggerContext {
  /** The server SDK's client, for all it covers. */
  payments: Payments;
  /** A transport keyed and retried as the client's, for what only the CLI asks (./operations.graphql). */
  api: Pick<Transport, 'request'>;
  profile: BusinessProfile;
  /** Asks `check` again until it gives a value (or the trigger's timeout passes); `what` names what is awaited. */
  poll: <T>(what: string, check: () => Promise<T | null | undefined>) => Promise<T>;
}

export type Recipe =
  | {
      /** What it does, for people (docs/cli.md's table is printed from these). */
      steps: string;
      /** Why the profile cannot have it as it is set up, or null. The trigger never changes the profile's settings. */
      needs?: (profile: BusinessProfile) => string | null;
      run: (context: TriggerContext) => Promise<string>;
      /** Undoes what would go on after the event (a monthly subscription's next charges), once it is recorded or given up on. */
      cleanUp?: (context: TriggerContext, objectId: string) => Promise<void>;
    }
  | { refused: string };

/** The longest profile session expiry payment_expired waits out. */
export const MAX_EXPIRY_WAIT_SECONDS = 120;

const card = (number: string): PaymentMethodDataInput => ({
  card: { number, expiryMonth: 12, expiryYear: new Date().getUTCFullYear() + 2, cvc: '123', holderName: 'payments trigger' },
});
const payoutCard = (number: string): PayoutDestinationInput => ({ card: { number, expiryMonth: 12, expiryYear: new Date().getUTCFullYear() + 2 } });

/** Creates a payment on the profile and confirms it with `method`; a decline still answers the (failed) payment. */
async function paid(context: TriggerContext, method: PaymentMethodDataInput, extra: Partial<CreatePaymentInput> = {}): Promise<Payment> {
  const input = { amount: 2000, currency: 'USD', profileId: context.profile.id, returnUrl: 'https://example.com/return', ...extra };
  const created = await context.payments.payments.create(input);
  try {
    return await context.payments.payments.confirm(created, { paymentMethodData: method });
  } catch (error) {
    if (error instanceof ApiError && error.code === 'PAYMENT_DECLINED') return created;
    throw error;
  }
}

const refunded = async (context: TriggerContext, paymentId: string) => (await context.payments.refunds.create({ paymentId })).id;

/** A payment with the sandbox's dispute test card, and the dispute its customer's bank opens a moment later. */
async function disputed(context: TriggerContext): Promise<string> {
  const payment = await paid(context, card('4000000000000259'));
  return context.poll(
    'the dispute (the sandbox opens it by a callback: is the connector account’s callback registered?)',
    async () => (await firstOf(context.payments.disputes.list({ paymentId: payment.id })))?.id,
  );
}

const challenged = async (context: TriggerContext, evidence: string) => {
  const disputeId = await disputed(context);
  await context.payments.disputes.challenge(disputeId, { uncategorized_text: evidence });
  return disputeId;
};

/** A customer's card saved off session by a paid set-up payment: its mandate. */
async function mandate(context: TriggerContext): Promise<{ customerId: string; mandateId: string }> {
  const customerId = `cus_trigger_${randomBytes(6).toString('hex')}`;
  const payment = await paid(context, card('4242424242424242'), { customerId, setupFutureUsage: 'OFF_SESSION' });
  const mandateId = await context.poll(
    'the mandate',
    async () => (await context.api.request(CliCreatedMandateDocument, { paymentId: payment.id })).payment.createdMandate?.id,
  );
  return { customerId, mandateId };
}

const payout = async (context: TriggerContext, destination: PayoutDestinationInput, amount = 1000) =>
  (await context.payments.payouts.create({ amount, currency: 'EUR', destination, profileId: context.profile.id })).id;

const succeeded = async (context: TriggerContext, number = '4242424242424242') => (await paid(context, card(number))).id;
const authorized = async (context: TriggerContext, number = '4242424242424242') => (await paid(context, card(number), { captureMethod: 'MANUAL' })).id;

const surcharged = (profile: BusinessProfile) =>
  profile.surcharges.some((rule) => rule.paymentMethodType === 'CARD')
    ? null
    : 'the profile has no CARD surcharge: set one with updateBusinessProfile(surcharges)';

const NETWORK_ONLY = 'only the card network moves a dispute there: the sandbox does it with a test helper outside the API (docs/sandbox.md)';

export const RECIPES: Record<WebhookEventType, Recipe> = {
  payment_succeeded: { steps: 'pay with card 4242424242424242', run: (context) => succeeded(context) },
  payment_failed: { steps: 'pay with card 4000000000000002 (declined)', run: (context) => succeeded(context, '4000000000000002') },
  payment_processing: {
    steps: 'pay by bank debit from IBAN DE89370400440532013000 (settles a moment later)',
    run: async (context) =>
      (await paid(context, { bankDebit: { accountHolderName: 'payments trigger', iban: 'DE89370400440532013000' } }, { currency: 'EUR' })).id,
  },
  payment_cancelled: {
    steps: 'create a payment, cancelPayment before confirming it',
    run: async (context) => {
      const input = { amount: 2000, currency: 'USD', profileId: context.profile.id };
      const { id } = await context.payments.payments.create(input);
      await context.payments.payments.cancel(id);
      return id;
    },
  },
  payment_cancelled_post_capture: {
    steps: 'pay with card 4242424242424242, cancelPaymentPostCapture',
    run: async (context) => {
      const paymentId = await succeeded(context);
      await context.payments.payments.cancelPostCapture(paymentId);
      return paymentId;
    },
  },
  payment_authorized: { steps: 'pay with card 4242424242424242, manual capture', run: (context) => authorized(context) },
  payment_partially_authorized: {
    steps: 'pay with card 4000000000001976 (funds for half), manual capture, on a profile that allows partial authorization',
    needs: (profile) => (profile.allowPartialAuthorization ? null : 'the profile does not allow partial authorization: set allowPartialAuthorization'),
    run: (context) => authorized(context, '4000000000001976'),
  },
  payment_captured: {
    steps: 'pay with card 4242424242424242, manual capture; capture half',
    run: async (context) => {
      const paymentId = await authorized(context);
      await context.payments.payments.capture(paymentId, { amountToCapture: 1000 });
      return paymentId;
    },
  },
  payment_expired: {
    steps: 'create a payment, wait out the profile’s sessionExpirySeconds, then confirm it (too late)',
    needs: (profile) =>
      profile.sessionExpirySeconds <= MAX_EXPIRY_WAIT_SECONDS
        ? null
        : `it waits out the profile's sessionExpirySeconds (${profile.sessionExpirySeconds} s): set it to at most ${MAX_EXPIRY_WAIT_SECONDS}`,
    run: async (context) => {
      const input = { amount: 2000, currency: 'USD', profileId: context.profile.id };
      const created = await context.payments.payments.create(input);
      const waitMs = Date.parse(created.expiresAt!) - Date.now() + 1000;
      await new Promise((resolve) => setTimeout(resolve, waitMs));
      // The worker's sweep may have expired it already; a confirm after expiresAt expires it otherwise.
      await context.payments.payments.confirm(created, { paymentMethodData: card('4242424242424242') }).catch(() => undefined);
      return created.id;
    },
  },
  action_required: { steps: 'pay with card 4000002500003155 (3D Secure challenge, left unanswered)', run: (context) => succeeded(context, '4000002500003155') },
  refund_succeeded: { steps: 'pay with card 4242424242424242, refund it', run: async (context) => refunded(context, await succeeded(context)) },
  refund_failed: {
    steps: 'pay with card 4000000000005126, refund it (the bank fails the refund a moment later)',
    run: async (context) => refunded(context, await succeeded(context, '4000000000005126')),
  },
  refund_review: {
    steps: 'pay with card 4000000000006975, refund it (held for review)',
    run: async (context) => refunded(context, await succeeded(context, '4000000000006975')),
  },
  dispute_opened: { steps: 'pay with card 4000000000000259 (disputed a moment later)', run: disputed },
  dispute_accepted: {
    steps: 'a disputed payment (card 4000000000000259), acceptDispute',
    run: async (context) => {
      const disputeId = await disputed(context);
      await context.payments.disputes.accept(disputeId);
      return disputeId;
    },
  },
  dispute_challenged: {
    steps: 'a disputed payment (card 4000000000000259), challengeDispute with evidence',
    run: (context) => challenged(context, 'The customer received the order.'),
  },
  dispute_won: {
    steps: 'a disputed payment (card 4000000000000259), challengeDispute with evidence "winning_evidence"',
    run: (context) => challenged(context, 'winning_evidence'),
  },
  dispute_lost: {
    steps: 'a disputed payment (card 4000000000000259), challengeDispute with evidence "losing_evidence"',
    run: (context) => challenged(context, 'losing_evidence'),
  },
  dispute_expired: { refused: NETWORK_ONLY },
  dispute_cancelled: { refused: NETWORK_ONLY },
  mandate_active: {
    steps: 'pay with card 4242424242424242 for a new customer, setupFutureUsage OFF_SESSION',
    run: async (context) => (await mandate(context)).mandateId,
  },
  mandate_revoked: {
    steps: 'a mandate (as mandate_active), revokeMandate',
    run: async (context) => {
      const { mandateId } = await mandate(context);
      await context.api.request(CliRevokeMandateDocument, { input: { mandateId } });
      return mandateId;
    },
  },
  payout_initiated: { steps: 'pay out 10.00 EUR to card 4242424242424242', run: (context) => payout(context, payoutCard('4242424242424242')) },
  payout_processing: {
    steps: 'pay out 10.00 EUR to card 4242424242424242 (in transit after the sandbox’s payout delay)',
    run: (context) => payout(context, payoutCard('4242424242424242')),
  },
  payout_success: {
    steps: 'pay out 10.00 EUR to card 4242424242424242 (paid after two payout delays)',
    run: (context) => payout(context, payoutCard('4242424242424242')),
  },
  payout_failed: {
    steps: 'pay out to card 4000000000000002 (fails after two payout delays)',
    run: (context) => payout(context, payoutCard('4000000000000002')),
  },
  payout_cancelled: {
    steps: 'pay out to card 4242424242424242, cancelPayout at once',
    run: async (context) => {
      const payoutId = await payout(context, payoutCard('4242424242424242'));
      await context.payments.payouts.cancel(payoutId);
      return payoutId;
    },
  },
  payout_expired: {
    steps: 'pay out to card 4000000000000077 (expires after a payout delay)',
    run: (context) => payout(context, payoutCard('4000000000000077')),
  },
  payout_reversed: { refused: 'only the bank returns a paid payout: the sandbox does it with a test helper outside the API (docs/sandbox.md)' },
  payout_not_permitted: {
    steps: 'pay out one unit more than the profile’s payoutLimit',
    needs: (profile) =>
      profile.payoutLimit === null || profile.payoutLimit === undefined ? 'the profile has no payoutLimit: set one with updateBusinessProfile' : null,
    run: (context) => payout(context, payoutCard('4242424242424242'), context.profile.payoutLimit! + 1),
  },
  invoice_paid: {
    steps: 'a mandate (as mandate_active), createSubscription monthly from now (the worker charges it), cancelSubscription once the event is recorded',
    run: async (context) => {
      const { customerId, mandateId } = await mandate(context);
      const input = { customerId, mandateId, amount: 990, currency: 'USD', interval: 'MONTH' as const };
      return (await context.api.request(CliCreateSubscriptionDocument, { input })).createSubscription.id;
    },
    cleanUp: async (context, subscriptionId) => {
      await context.api.request(CliCancelSubscriptionDocument, { input: { subscriptionId } });
    },
  },
  surcharge_payment_succeeded: {
    steps: 'pay with card 4242424242424242 on a profile with a CARD surcharge',
    needs: surcharged,
    run: (context) => succeeded(context),
  },
  surcharge_refund_succeeded: {
    steps: 'pay with card 4242424242424242 on a profile with a CARD surcharge, refund all of it',
    needs: surcharged,
    run: async (context) => refunded(context, await succeeded(context)),
  },
};

export const WEBHOOK_EVENT_TYPES = Object.keys(RECIPES) as WebhookEventType[];

export const isWebhookEventType = (value: string): value is WebhookEventType => Object.hasOwn(RECIPES, value);
