// The Medusa provider (packages/medusa) as Medusa runs it: Medusa's own payment module, started by its test
// utilities on PostgreSQL, with the provider registered as a medusa-config.ts would, against our running API,
// worker and sandbox processor. The test plays the storefront (it confirms with the publishable key and the
// session's client secret, as the browser SDK does) and the admin (captures and refunds through Medusa).
import { moduleIntegrationTestRunner } from '@medusajs/test-utils';
import type { IPaymentModuleService } from '@medusajs/framework/types';
import { Modules } from '@medusajs/framework/utils';
import { afterAll, describe, expect, it, vi } from 'vitest';
import orchestratorProvider, { PaymentsOrchestratorProviderService } from '../../packages/medusa/src/index.ts';
import { Payments } from '../../packages/node/src/index.ts';
import { CapturePaymentDocument, ConfirmPaymentDocument, CreatePaymentDocument } from '../gql/graphql.ts';
import { dataOf, errorOf } from '../support/graphql-client.ts';
import { startStack } from '../support/stack.ts';
import { answerChallenge, completeChallenge } from '../support/three-ds.ts';
import { card, shopWithReceiver } from '../support/webhooks.ts';
import { medusaDatabase, medusaWebhookPayload, PAYMENT_MODULE_PATH, processPaymentAsMedusaDoes, webhookOf } from './medusa.ts';

const THREE_DS_CARD = '4000002500003155';
const DECLINED_CARD = '4000000000000002';

// The API's and worker's own syncs of payments waiting on the customer wait their real schedule (15 s first),
// so that authorizing is what asks the processor about a challenge the customer completed.
const stack = await startStack({ env: { PAYMENT_SYNC_DELAY_SCALE: '1' } });
const shop = await shopWithReceiver(stack);
const database = medusaDatabase();
afterAll(async () => {
  await payments.close();
  await stack.close();
  await shop.receiver.close();
  await database.drop();
});
Object.assign(process.env, { DB_HOST: database.host, DB_PORT: database.port, DB_USERNAME: database.user });

const options = { apiKey: shop.secretKey, baseUrl: stack.api.url, webhookKey: shop.paymentResponseHashKey, returnUrl: 'https://shop.example/checkout' };
/** Medusa's provider ids: pp_{identifier}_{id} of medusa-config.ts's entries. */
const MANUAL = 'pp_payments-orchestrator_orchestrator';
const AUTOMATIC = 'pp_payments-orchestrator_orchestrator-capture';

/** Our payments as the merchant's backend reads them. */
const payments = new Payments({ apiKey: shop.secretKey, baseUrl: stack.api.url });
const ourPayment = (id: string) => payments.payments.retrieve(id);
/** The storefront's confirm: the browser SDK's call, with the publishable key and the session's client secret. */
const confirmAsStorefront = (clientSecret: string, number?: string) =>
  shop.publishable(ConfirmPaymentDocument, { input: { clientSecret, paymentMethodData: card(number) } });

moduleIntegrationTestRunner<IPaymentModuleService>({
  moduleName: Modules.PAYMENT,
  resolve: PAYMENT_MODULE_PATH,
  dbName: database.name,
  moduleOptions: {
    providers: [
      { resolve: orchestratorProvider, id: 'orchestrator', options },
      { resolve: orchestratorProvider, id: 'orchestrator-capture', options: { ...options, capture: true } },
    ],
  },
  testSuite: ({ service }) => {
    /** A cart's payment collection and its session with our provider. */
    async function sessionFor(amount: number, currencyCode = 'usd', providerId = MANUAL) {
      const collection = await service.createPaymentCollections({ currency_code: currencyCode, amount });
      const session = await service.createPaymentSession(collection.id, { provider_id: providerId, amount, currency_code: currencyCode, data: {} });
      return { collection, session, paymentId: session.data['id'] as string, clientSecret: session.data['client_secret'] as string };
    }
    const collectionOf = (id: string) => service.retrievePaymentCollection(id);
    /** Medusa's payment for an authorized session (Medusa answers null only for pending_authorization, which the provider never answers). */
    async function authorize(sessionId: string) {
      const payment = await service.authorizePaymentSession(sessionId, {});
      if (!payment) throw new Error(`session ${sessionId} is pending authorization`);
      return payment;
    }

    describe('a full order payment through Medusa’s payment module', () => {
      it('without 3DS: the session creates our payment, the storefront confirms, Medusa authorizes, captures and refunds', async () => {
        const { collection, session, paymentId, clientSecret } = await sessionFor(19.99);
        expect(session.status).toBe('pending');
        expect(session.data).toMatchObject({ id: expect.stringMatching(/^pay_/), status: 'REQUIRES_PAYMENT_METHOD', amount: 1999, currency: 'USD' });
        expect(clientSecret).toMatch(new RegExp(`^${paymentId}_secret_`));
        expect(await ourPayment(paymentId)).toMatchObject({
          captureMethod: 'MANUAL',
          returnUrl: options.returnUrl,
          metadata: { medusa_session_id: session.id },
        });

        expect(dataOf(await confirmAsStorefront(clientSecret)).confirmPayment.status).toBe('REQUIRES_CAPTURE');
        const payment = await authorize(session.id);
        expect(payment.data).toMatchObject({ id: paymentId, status: 'REQUIRES_CAPTURE', amount_capturable: 1999 });
        expect(await collectionOf(collection.id)).toMatchObject({ status: 'authorized', authorized_amount: 19.99 });

        await service.capturePayment({ payment_id: payment.id });
        expect(await ourPayment(paymentId)).toMatchObject({ status: 'SUCCEEDED', amountReceived: 1999 });
        expect(await collectionOf(collection.id)).toMatchObject({ status: 'completed', captured_amount: 19.99 });

        await service.refundPayment({ payment_id: payment.id, amount: 5.5 });
        expect(await ourPayment(paymentId)).toMatchObject({ amountRefunded: 550 });
        expect(await collectionOf(collection.id)).toMatchObject({ refunded_amount: 5.5 });
        const refunded = await service.retrievePayment(payment.id, { relations: ['refunds'] });
        expect(refunded.refunds!.map((refund) => refund.amount)).toEqual([5.5]);
        expect(refunded.data).toMatchObject({ amount_refunded: 550, refund_id: expect.stringMatching(/^ref_/), refund_status: 'SUCCEEDED' });
      });

      it('with 3DS: requires_more with the challenge’s URL, then authorized once the customer completed it', async () => {
        const { collection, session, clientSecret } = await sessionFor(42);
        expect(dataOf(await confirmAsStorefront(clientSecret, THREE_DS_CARD)).confirmPayment.status).toBe('REQUIRES_CUSTOMER_ACTION');
        await expect(service.authorizePaymentSession(session.id, {})).rejects.toThrow(`Session: ${session.id} was not authorized with the provider.`);
        const challenged = await service.retrievePaymentSession(session.id);
        expect(challenged.status).toBe('requires_more');
        const nextAction = challenged.data!['next_action'] as { type: string; redirect_to_url: string };
        expect(nextAction.type).toBe('REDIRECT_TO_URL');
        expect(nextAction.redirect_to_url.startsWith(stack.sandboxUrl)).toBe(true);

        const landing = await completeChallenge(nextAction.redirect_to_url, 'complete');
        expect(`${landing.origin}${landing.pathname}`).toBe(options.returnUrl);
        const payment = await authorize(session.id);
        expect(await collectionOf(collection.id)).toMatchObject({ status: 'authorized', authorized_amount: 42 });
        await service.capturePayment({ payment_id: payment.id });
        expect(await collectionOf(collection.id)).toMatchObject({ status: 'completed', captured_amount: 42 });
      });

      it('with 3DS completed at the processor by a customer who never came back: authorize asks the processor', async () => {
        const { session, paymentId, clientSecret } = await sessionFor(42);
        const pending = dataOf(await confirmAsStorefront(clientSecret, THREE_DS_CARD)).confirmPayment;
        await answerChallenge(pending.nextAction!.redirectToUrl, 'complete'); // the browser closes before our return route
        expect((await ourPayment(paymentId)).status).toBe('REQUIRES_CUSTOMER_ACTION');
        const payment = await authorize(session.id);
        expect(payment.data).toMatchObject({ status: 'REQUIRES_CAPTURE' });
      });

      it('automatic capture (capture: true): authorizing records the capture in Medusa', async () => {
        const { collection, session, paymentId, clientSecret } = await sessionFor(10, 'eur', AUTOMATIC);
        expect((await ourPayment(paymentId)).captureMethod).toBe('AUTOMATIC');
        expect(dataOf(await confirmAsStorefront(clientSecret)).confirmPayment.status).toBe('SUCCEEDED');
        await service.authorizePaymentSession(session.id, {});
        expect(await collectionOf(collection.id)).toMatchObject({ status: 'completed', captured_amount: 10 });
      });

      it('a declined card leaves the session in error, and Medusa does not authorize it', async () => {
        const { session, clientSecret } = await sessionFor(12);
        errorOf(await confirmAsStorefront(clientSecret, DECLINED_CARD), 'PAYMENT_DECLINED');
        await expect(service.authorizePaymentSession(session.id, {})).rejects.toThrow('was not authorized');
        expect((await service.retrievePaymentSession(session.id)).status).toBe('error');
      });

      it('a refund the processor refuses: Medusa keeps no refund, and its error names ours', async () => {
        const { collection, session, paymentId, clientSecret } = await sessionFor(19.99);
        dataOf(await confirmAsStorefront(clientSecret));
        const payment = await authorize(session.id);
        await service.capturePayment({ payment_id: payment.id });
        // Refunded in full at the processor itself (its own dashboard): the processor then refuses ours.
        const atProcessor = await fetch(`${stack.sandboxUrl}/v1/refunds`, {
          method: 'POST',
          headers: { authorization: `Bearer ${shop.sandboxKey}`, 'content-type': 'application/json' },
          body: JSON.stringify({ payment: (await ourPayment(paymentId)).activeAttempt!.connectorTransactionId }),
        });
        expect(atProcessor.status).toBe(200);

        await expect(service.refundPayment({ payment_id: payment.id, amount: 5 })).rejects.toMatchObject({
          type: 'not_allowed',
          message: expect.stringMatching(new RegExp(`^refundPayment: the processor refused refund ref_\\w+ of payment ${paymentId}: `)),
        });
        const ours = [];
        for await (const refund of payments.refunds.list({ paymentId })) ours.push(refund);
        expect(ours).toMatchObject([{ status: 'FAILED', amount: 500 }]);
        expect((await service.retrievePayment(payment.id, { relations: ['refunds'] })).refunds).toEqual([]);
        expect(await collectionOf(collection.id)).toMatchObject({ refunded_amount: 0 });
      });

      it('deleting a session cancels our payment', async () => {
        const { session, paymentId } = await sessionFor(12);
        await service.deletePaymentSession(session.id);
        expect((await ourPayment(paymentId)).status).toBe('CANCELLED');
      });
    });

    describe('idempotency', () => {
      it('Medusa’s idempotency key is the API’s: a retried initiate gets the payment the first one created', async () => {
        const provider = new PaymentsOrchestratorProviderService({}, options);
        const input = { amount: 15, currency_code: 'usd', data: { session_id: 'payses_retried' }, context: { idempotency_key: `payses_${Date.now()}` } };
        const first = await provider.initiatePayment(input);
        expect((await provider.initiatePayment(input)).id).toBe(first.id);
        expect((await provider.initiatePayment({ ...input, context: {} })).id).not.toBe(first.id);
      });
    });

    describe('errors', () => {
      it('our API’s errors reach Medusa as MedusaErrors with our message and code (not a 500 "An unknown error occurred")', async () => {
        const provider = new PaymentsOrchestratorProviderService({}, options);
        await expect(provider.retrievePayment({ data: { id: 'pay_unknown' } })).rejects.toMatchObject({
          __isMedusaError: true,
          type: 'not_found',
          code: 'NOT_FOUND',
          message: expect.stringContaining('pay_unknown'),
        });
      });
    });

    describe('amounts: Medusa’s major units as our minor units, by the currency’s ISO 4217 exponent', () => {
      it.each([
        ['usd', 19.99, 1999],
        ['jpy', 1999, 1999],
        ['kwd', 1.234, 1234],
        ['usd', 10.005, 1001],
        ['usd', 1.005, 101],
      ])('%s %s is %s', async (currencyCode, amount, minor) => {
        const { paymentId } = await sessionFor(amount, currencyCode);
        expect(await ourPayment(paymentId)).toMatchObject({ amount: minor, currency: currencyCode.toUpperCase() });
      });

      it('refunds a zero-decimal and a three-decimal currency in their own units', async () => {
        for (const [currencyCode, amount, refund, refundedMinor] of [
          ['jpy', 5000, 1234, 1234],
          ['kwd', 5, 1.005, 1005],
        ] as const) {
          const { session, paymentId, clientSecret } = await sessionFor(amount, currencyCode);
          dataOf(await confirmAsStorefront(clientSecret));
          const payment = await authorize(session.id);
          await service.capturePayment({ payment_id: payment.id });
          await service.refundPayment({ payment_id: payment.id, amount: refund });
          expect(await ourPayment(paymentId)).toMatchObject({ amountReceived: amount * (currencyCode === 'jpy' ? 1 : 1000), amountRefunded: refundedMinor });
        }
      });
    });

    describe('updating a session’s amount', () => {
      it('before the customer confirmed: our payment is replaced by one of the new amount', async () => {
        const { session, paymentId } = await sessionFor(20);
        const updated = await service.updatePaymentSession({ id: session.id, amount: 25, currency_code: 'usd', data: session.data });
        const replacementId = updated.data['id'] as string;
        expect(replacementId).not.toBe(paymentId);
        expect((await ourPayment(paymentId)).status).toBe('CANCELLED');
        expect(await ourPayment(replacementId)).toMatchObject({ amount: 2500, status: 'REQUIRES_PAYMENT_METHOD', metadata: { medusa_session_id: session.id } });
        expect(updated.data['client_secret']).toMatch(new RegExp(`^${replacementId}_secret_`));
        // Medusa retrying the update (its answer lost): the same replacement, no second one.
        const retried = await service.updatePaymentSession({ id: session.id, amount: 25, currency_code: 'usd', data: session.data });
        expect(retried.data['id']).toBe(replacementId);
        expect((await ourPayment(replacementId)).status).toBe('REQUIRES_PAYMENT_METHOD');
      });

      it('when the old payment can no longer be cancelled (confirmed meanwhile), the replacement is cancelled and the update refused', async () => {
        const { session, paymentId, clientSecret } = await sessionFor(20, 'usd', AUTOMATIC);
        const provider = new PaymentsOrchestratorProviderService({}, { ...options, capture: true });
        const sdk = (provider as unknown as { payments: Payments }).payments;
        const create = sdk.payments.create;
        const replacements: string[] = [];
        // The customer confirms the old payment between the provider's read of it and its cancel.
        vi.spyOn(sdk.payments, 'create').mockImplementation(async (...args) => {
          dataOf(await confirmAsStorefront(clientSecret));
          const replacement = await create(...args);
          replacements.push(replacement.id);
          return replacement;
        });
        await expect(provider.updatePayment({ amount: 25, currency_code: 'usd', data: session.data })).rejects.toMatchObject({ type: 'not_allowed' });
        expect(await ourPayment(paymentId)).toMatchObject({ status: 'SUCCEEDED', amount: 2000 });
        expect(replacements).toHaveLength(1);
        expect(await ourPayment(replacements[0]!)).toMatchObject({ status: 'CANCELLED', amount: 2500 });
      });

      it('the same amount changes nothing; after confirmation the amount is refused', async () => {
        const { session, paymentId, clientSecret } = await sessionFor(20);
        expect((await service.updatePaymentSession({ id: session.id, amount: 20, currency_code: 'usd', data: session.data })).data['id']).toBe(paymentId);
        dataOf(await confirmAsStorefront(clientSecret));
        await expect(service.updatePaymentSession({ id: session.id, amount: 30, currency_code: 'usd', data: session.data })).rejects.toThrow(
          `payment ${paymentId} is REQUIRES_CAPTURE, so its amount can no longer change`,
        );
        expect(await ourPayment(paymentId)).toMatchObject({ amount: 2000, status: 'REQUIRES_CAPTURE' });
      });
    });

    describe('our webhooks, as Medusa’s /hooks/payment route hands them to getWebhookActionAndData', () => {
      const provider = MANUAL.slice('pp_'.length); // the route's {provider} segment

      it('payment_authorized authorizes the session, payment_succeeded records the capture made in our dashboard', async () => {
        const { collection, session, paymentId, clientSecret } = await sessionFor(19.99);
        dataOf(await confirmAsStorefront(clientSecret));
        const authorized = await service.getWebhookActionAndData({
          provider,
          payload: medusaWebhookPayload(await webhookOf(shop.receiver, paymentId, 'payment_authorized')),
        });
        expect(authorized).toEqual({ action: 'authorized', data: { session_id: session.id, amount: 19.99 } });
        await processPaymentAsMedusaDoes(service, authorized);
        expect(await collectionOf(collection.id)).toMatchObject({ status: 'authorized', authorized_amount: 19.99 });

        dataOf(await shop.secret(CapturePaymentDocument, { input: { paymentId } }));
        const captured = await service.getWebhookActionAndData({
          provider,
          payload: medusaWebhookPayload(await webhookOf(shop.receiver, paymentId, 'payment_succeeded')),
        });
        expect(captured).toEqual({ action: 'captured', data: { session_id: session.id, amount: 19.99 } });
        await processPaymentAsMedusaDoes(service, captured);
        expect(await collectionOf(collection.id)).toMatchObject({ status: 'completed', captured_amount: 19.99 });
      });

      it('a partial capture in our dashboard: neither its webhook nor an admin’s capture make Medusa record more than was received', async () => {
        const { collection, session, paymentId, clientSecret } = await sessionFor(19.99);
        dataOf(await confirmAsStorefront(clientSecret));
        const payment = await authorize(session.id);
        dataOf(await shop.secret(CapturePaymentDocument, { input: { paymentId, amountToCapture: 1000 } }));
        const captured = await service.getWebhookActionAndData({
          provider,
          payload: medusaWebhookPayload(await webhookOf(shop.receiver, paymentId, 'payment_captured')),
        });
        expect(captured).toEqual({ action: 'captured', data: { session_id: session.id, amount: 10 } });
        const refusal = `capturePayment: payment ${paymentId} was partially captured outside Medusa (10 of 19.99 USD received) and cannot be captured again`;
        // Medusa gives capturePayment no amount, so the provider cannot tell the webhook's 10 from an admin's 19.99.
        await expect(processPaymentAsMedusaDoes(service, captured)).rejects.toMatchObject({ type: 'not_allowed', message: refusal });
        await expect(service.capturePayment({ payment_id: payment.id })).rejects.toMatchObject({ type: 'not_allowed', message: refusal });
        expect(await collectionOf(collection.id)).toMatchObject({ status: 'authorized', captured_amount: 0 });
        expect(await ourPayment(paymentId)).toMatchObject({ status: 'PARTIALLY_CAPTURED', amountReceived: 1000 });
      });

      it('automatic capture: payment_succeeded alone authorizes and captures in Medusa', async () => {
        const { collection, session, paymentId, clientSecret } = await sessionFor(7.5, 'eur', AUTOMATIC);
        dataOf(await confirmAsStorefront(clientSecret));
        const succeeded = await service.getWebhookActionAndData({
          provider: AUTOMATIC.slice('pp_'.length),
          payload: medusaWebhookPayload(await webhookOf(shop.receiver, paymentId, 'payment_succeeded')),
        });
        expect(succeeded).toEqual({ action: 'captured', data: { session_id: session.id, amount: 7.5 } });
        await processPaymentAsMedusaDoes(service, succeeded);
        expect(await collectionOf(collection.id)).toMatchObject({ status: 'completed', captured_amount: 7.5 });
      });

      it('action_required, payment_failed and payment_cancelled are requires_more, failed and canceled, with the session and amount', async () => {
        const challenged = await sessionFor(3);
        dataOf(await confirmAsStorefront(challenged.clientSecret, THREE_DS_CARD));
        const declined = await sessionFor(4);
        errorOf(await confirmAsStorefront(declined.clientSecret, DECLINED_CARD), 'PAYMENT_DECLINED');
        const deleted = await sessionFor(5);
        await service.deletePaymentSession(deleted.session.id);
        for (const [{ session, paymentId }, eventType, action, amount] of [
          [challenged, 'action_required', 'requires_more', 3],
          [declined, 'payment_failed', 'failed', 4],
          [deleted, 'payment_cancelled', 'canceled', 5],
        ] as const) {
          const payload = medusaWebhookPayload(await webhookOf(shop.receiver, paymentId, eventType));
          expect(await service.getWebhookActionAndData({ provider, payload })).toEqual({ action, data: { session_id: session.id, amount } });
        }
      });

      it('events of another merchant or another profile are not_supported, even signed with the key and naming our session', async () => {
        const { session } = await sessionFor(6);
        const other = await shopWithReceiver(stack);
        try {
          const foreign = dataOf(
            await other.secret(CreatePaymentDocument, { input: { amount: 600, currency: 'USD', metadata: { medusa_session_id: session.id } } }),
          ).createPayment;
          dataOf(await other.publishable(ConfirmPaymentDocument, { input: { clientSecret: foreign.clientSecret, paymentMethodData: card() } }));
          const foreignEvent = medusaWebhookPayload(await webhookOf(other.receiver, foreign.id, 'payment_succeeded'));
          // As a platform's profile is: its key signs its connected merchants' events too (docs/platforms.md).
          const signingOthers = new PaymentsOrchestratorProviderService({}, { ...options, webhookKey: other.paymentResponseHashKey });
          expect(await signingOthers.getWebhookActionAndData(foreignEvent)).toEqual({ action: 'not_supported' });
        } finally {
          await other.receiver.close();
        }

        const ours = await sessionFor(7);
        dataOf(await confirmAsStorefront(ours.clientSecret));
        const ourEvent = medusaWebhookPayload(await webhookOf(shop.receiver, ours.paymentId, 'payment_authorized'));
        const ofAnotherProfile = new PaymentsOrchestratorProviderService({}, { ...options, profileId: 'pro_another' });
        expect(await ofAnotherProfile.getWebhookActionAndData(ourEvent)).toEqual({ action: 'not_supported' });
        const ofOurProfile = new PaymentsOrchestratorProviderService({}, { ...options, profileId: shop.profileId });
        expect(await ofOurProfile.getWebhookActionAndData(ourEvent)).toEqual({ action: 'authorized', data: { session_id: ours.session.id, amount: 7 } });
      });

      it('a payment Medusa did not create is not_supported; a body or signature altered in transit is refused', async () => {
        const created = dataOf(await shop.secret(CreatePaymentDocument, { input: { amount: 900, currency: 'USD' } })).createPayment;
        dataOf(await confirmAsStorefront(created.clientSecret));
        const payload = medusaWebhookPayload(await webhookOf(shop.receiver, created.id, 'payment_succeeded'));
        expect(await service.getWebhookActionAndData({ provider, payload })).toEqual({ action: 'not_supported' });

        const tampered = Buffer.from(payload.rawData.toString().replace('"amount":900', '"amount":1'));
        await expect(service.getWebhookActionAndData({ provider, payload: { ...payload, rawData: tampered } })).rejects.toMatchObject({
          code: 'WEBHOOK_SIGNATURE_INVALID',
        });
        const otherKey = { ...payload, headers: { ...payload.headers, 'x-webhook-signature-512': '0'.repeat(128) } };
        await expect(service.getWebhookActionAndData({ provider, payload: otherKey })).rejects.toMatchObject({ code: 'WEBHOOK_SIGNATURE_INVALID' });
      });
    });
  },
});
