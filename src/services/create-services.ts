// Builds every service of a process from one ServiceContext.
import { ApiKeyService } from './api-keys.ts';
import { BusinessProfileService } from './business-profiles.ts';
import { ConnectorAccountService } from './connector-accounts.ts';
import type { ServiceContext } from './context.ts';
import { CustomerService } from './customers.ts';
import { IdempotencyService } from './idempotency.ts';
import { MerchantAccountService } from './merchant-accounts.ts';
import { EligibleMethodsService } from './payments/eligible-methods.ts';
import { PaymentService } from './payments/payment-service.ts';
import type { PaymentSyncScheduler } from './payments/sync-scheduler.ts';

/** What services need from outside the process (the worker's queues). */
export interface ServiceAdapters {
  paymentSyncScheduler: PaymentSyncScheduler;
}

export function createServices(context: ServiceContext, adapters: ServiceAdapters) {
  const connectorAccounts = new ConnectorAccountService(context);
  const customers = new CustomerService(context);
  const payments = new PaymentService(context, connectorAccounts, customers, adapters.paymentSyncScheduler);
  return {
    apiKeys: new ApiKeyService(context),
    merchantAccounts: new MerchantAccountService(context),
    businessProfiles: new BusinessProfileService(context),
    connectorAccounts,
    idempotency: new IdempotencyService(context),
    customers,
    payments,
    eligibleMethods: new EligibleMethodsService(context, payments, connectorAccounts, customers),
  };
}

export type Services = ReturnType<typeof createServices>;
