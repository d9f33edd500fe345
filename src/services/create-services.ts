// Builds every service of a process from one ServiceContext.
import { ApiKeyService } from './api-keys.ts';
import { BusinessProfileService } from './business-profiles.ts';
import { ConnectorAccountService } from './connector-accounts.ts';
import type { ServiceContext } from './context.ts';
import { IdempotencyService } from './idempotency.ts';
import { MerchantAccountService } from './merchant-accounts.ts';
import { PaymentService } from './payments/payment-service.ts';

export function createServices(context: ServiceContext) {
  const connectorAccounts = new ConnectorAccountService(context);
  return {
    apiKeys: new ApiKeyService(context),
    merchantAccounts: new MerchantAccountService(context),
    businessProfiles: new BusinessProfileService(context),
    connectorAccounts,
    idempotency: new IdempotencyService(context),
    payments: new PaymentService(context, connectorAccounts),
  };
}

export type Services = ReturnType<typeof createServices>;
