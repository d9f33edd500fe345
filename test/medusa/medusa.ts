// Medusa's side of the provider tests: its payment module on a database of the run's own, and what Medusa
// does with a webhook once the provider has read it.
import { randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import type { IPaymentModuleService, ProviderWebhookPayload, WebhookActionResult } from '@medusajs/framework/types';
import { PaymentActions } from '@medusajs/framework/utils';
import { expect, inject, vi } from 'vitest';
import { dropDatabase } from '../../src/platform/db/scratch-database.ts';
import type { Receiver, ReceivedRequest } from '../support/receiver.ts';

/** Where Medusa's payment module is installed (the test runner loads its models and service from there). */
export const PAYMENT_MODULE_PATH = dirname(createRequire(import.meta.url).resolve('@medusajs/payment/package.json'));

/**
 * A database name of this run's own for Medusa's tables (the runner creates it), and its drop: next to the
 * run's database, never one of the project's.
 */
export function medusaDatabase() {
  const runDatabase = new URL(inject('databaseUrl'));
  const name = `${runDatabase.pathname.slice(1)}_medusa_${randomBytes(3).toString('hex')}`;
  const drop = () => dropDatabase(runDatabase.toString(), name);
  return { name, host: runDatabase.hostname, port: runDatabase.port || '5432', user: decodeURIComponent(runDatabase.username), drop };
}

/** A webhook request as Medusa's /hooks/payment/{provider} route hands it to the payment module: parsed body, raw bytes, headers. */
export function medusaWebhookPayload(request: ReceivedRequest): ProviderWebhookPayload['payload'] {
  return { data: JSON.parse(request.body.toString('utf8')), rawData: request.body, headers: request.headers as Record<string, unknown> };
}

/** Waits for our webhook of `eventType` about `paymentId` at `receiver`. */
export function webhookOf(receiver: Receiver, paymentId: string, eventType: string): Promise<ReceivedRequest> {
  return vi.waitFor(
    () => {
      const request = receiver.received.find((candidate) => {
        const body = JSON.parse(candidate.body.toString('utf8'));
        return body.event_type === eventType && body.content.object.payment_id === paymentId;
      });
      expect(request, `${eventType} of ${paymentId}`).toBeDefined();
      return request!;
    },
    { timeout: 15_000, interval: 50 },
  );
}

/**
 * What Medusa's processPaymentWorkflow (@medusajs/core-flows, which its webhook subscriber runs) does with a
 * webhook action for a payment collection without a cart: `captured` records a capture of the amount (after
 * authorizing the session when no payment exists yet: automatic capture), `authorized` authorizes the
 * session, and every other action changes nothing. core-flows needs all of Medusa's modules, so the tests
 * take these steps through the payment module the workflow's steps call.
 */
export async function processPaymentAsMedusaDoes(service: IPaymentModuleService, { action, data }: WebhookActionResult): Promise<void> {
  if (!data) return;
  const [payment] = await service.listPayments({ payment_session_id: data.session_id });
  if (action === PaymentActions.SUCCESSFUL) {
    const paymentId = payment?.id ?? (await service.authorizePaymentSession(data.session_id, {}))?.id;
    if (!paymentId) throw new Error(`session ${data.session_id} was not authorized`);
    await service.capturePayment({ payment_id: paymentId, amount: data.amount });
  } else if (action === PaymentActions.AUTHORIZED) {
    await service.authorizePaymentSession(data.session_id, {});
  }
}
