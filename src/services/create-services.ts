// Builds every service of a process from one ServiceContext.
import { ActivityService } from './activity.ts';
import { ApiKeyService } from './api-keys.ts';
import { BusinessProfileService } from './business-profiles.ts';
import { ConnectorAccountService } from './connector-accounts.ts';
import { ConnectorCallbackService } from './connector-callbacks.ts';
import type { ServiceContext } from './context.ts';
import { CustomerService } from './customers.ts';
import { IdempotencyService } from './idempotency.ts';
import { MerchantAccountService } from './merchant-accounts.ts';
import { EligibleMethodsService } from './payments/eligible-methods.ts';
import { PaymentService } from './payments/payment-service.ts';
import type { PaymentSyncScheduler } from './payments/sync-scheduler.ts';
import { DisputeService } from './disputes/dispute-service.ts';
import { MandateService } from './mandates/mandate-service.ts';
import { PaymentLinkService } from './payment-links.ts';
import { PayoutService } from './payouts/payout-service.ts';
import { SubscriptionService } from './subscriptions/subscription-service.ts';
import { RefundService } from './refunds/refund-service.ts';
import { EventOutbox, type EventRelay, type LivePublisher } from './events/event-outbox.ts';
import { EventService } from './events/event-service.ts';
import { WebhookDeliveryService } from './events/webhook-delivery.ts';
import type { WebhookSender } from './events/webhook-sender.ts';

/** What services need from outside the process (the worker's queues, the network). */
export interface ServiceAdapters {
  paymentSyncScheduler: PaymentSyncScheduler;
  eventRelay: EventRelay;
  webhookSender: WebhookSender;
  livePublisher: LivePublisher;
}

export function createServices(context: ServiceContext, adapters: ServiceAdapters) {
  const connectorAccounts = new ConnectorAccountService(context);
  const customers = new CustomerService(context);
  const outbox = new EventOutbox(context, adapters.eventRelay, adapters.livePublisher);
  const mandates = new MandateService(context, outbox, customers);
  const payments = new PaymentService(context, connectorAccounts, customers, mandates, outbox, adapters.paymentSyncScheduler);
  const refunds = new RefundService(context, payments, connectorAccounts, outbox, adapters.paymentSyncScheduler);
  const disputes = new DisputeService(context, connectorAccounts, outbox);
  const payouts = new PayoutService(context, connectorAccounts, outbox, adapters.paymentSyncScheduler);
  const webhookDelivery = new WebhookDeliveryService(context, adapters.webhookSender);
  return {
    apiKeys: new ApiKeyService(context),
    merchantAccounts: new MerchantAccountService(context),
    businessProfiles: new BusinessProfileService(context),
    connectorAccounts,
    connectorCallbacks: new ConnectorCallbackService(context, connectorAccounts, { payments, refunds, disputes, mandates, payouts }),
    idempotency: new IdempotencyService(context),
    customers,
    payments,
    refunds,
    disputes,
    mandates,
    payouts,
    subscriptions: new SubscriptionService(context, payments, mandates, outbox),
    paymentLinks: new PaymentLinkService(context, payments),
    eligibleMethods: new EligibleMethodsService(context, payments, connectorAccounts, customers),
    webhookDelivery,
    events: new EventService(context, outbox, webhookDelivery),
    activity: new ActivityService(context),
  };
}

export type Services = ReturnType<typeof createServices>;
