// Builds every service of a process from one ServiceContext.
import { ActivityService } from './events/activity.ts';
import { ApiKeyService } from './merchants/key-service.ts';
import { BusinessProfileService } from './merchants/profile-service.ts';
import { ConnectorAccountService } from './connectors/service.ts';
import { ConnectorCallbackService } from './connectors/callbacks.ts';
import type { ServiceContext } from '../platform/context.ts';
import { CustomerService } from './customers/service.ts';
import { IdempotencyService } from '../platform/http/idempotency.ts';
import { MerchantAccountService } from './merchants/service.ts';
import { EligibleMethodsService } from './payments/eligible-methods.ts';
import { PaymentEvents, type PaymentLivePublisher } from './payments/events.ts';
import { PaymentService } from './payments/service.ts';
import type { PaymentSyncScheduler } from './processor-sync/scheduler.ts';
import { DisputeService } from './disputes/service.ts';
import { MandateService } from './mandates/service.ts';
import { PaymentLinkService } from './payment-links/service.ts';
import { PayoutService } from './payouts/service.ts';
import { SubscriptionService } from './subscriptions/service.ts';
import { RefundService } from './refunds/service.ts';
import { EventOutbox, type EventRelay, type LivePublisher } from './events/outbox.ts';
import { EventService } from './events/service.ts';
import { WebhookDeliveryService } from './events/delivery.ts';
import { measuredSender, type WebhookSender } from './events/sender.ts';
import { RoutingService } from './routing/service.ts';
import { LedgerService } from './ledger/service.ts';
import { TeamService } from './team/service.ts';
import type { RoutingSignals } from './routing/index.ts';

/** What services need from outside the process (the worker's queues, the network). */
export interface ServiceAdapters {
  paymentSyncScheduler: PaymentSyncScheduler;
  eventRelay: EventRelay;
  webhookSender: WebhookSender;
  livePublisher: LivePublisher & PaymentLivePublisher;
  /** Connector health and success rates, in Redis so every process routes alike (docs/routing.md). */
  routingSignals: RoutingSignals;
  /**
   * The clock of the routing signals and of balances, in milliseconds since the epoch; tests pass their own to cross a
   * cool-down, or see pending money settle, without waiting.
   */
  clock?: () => number;
}

export function createServices(context: ServiceContext, adapters: ServiceAdapters) {
  const connectorAccounts = new ConnectorAccountService(context);
  const ledger = new LedgerService(context, adapters.clock);
  const customers = new CustomerService(context);
  const outbox = new EventOutbox(context, adapters.eventRelay, adapters.livePublisher);
  const mandates = new MandateService(context, outbox, customers);
  const paymentEvents = new PaymentEvents(outbox, adapters.livePublisher, context.logger);
  const routing = new RoutingService(context, connectorAccounts, adapters.routingSignals, adapters.clock);
  const payments = new PaymentService(context, connectorAccounts, customers, mandates, paymentEvents, adapters.paymentSyncScheduler, routing);
  const refunds = new RefundService(context, payments, connectorAccounts, outbox, adapters.paymentSyncScheduler, ledger);
  const disputes = new DisputeService(context, connectorAccounts, outbox, ledger);
  const payouts = new PayoutService(context, connectorAccounts, outbox, adapters.paymentSyncScheduler, ledger);
  const webhookDelivery = new WebhookDeliveryService(context, measuredSender(adapters.webhookSender, context.metrics));
  return {
    apiKeys: new ApiKeyService(context),
    merchantAccounts: new MerchantAccountService(context),
    businessProfiles: new BusinessProfileService(context),
    connectorAccounts,
    routing,
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
    ledger,
    team: new TeamService(context),
  };
}

export type Services = ReturnType<typeof createServices>;
