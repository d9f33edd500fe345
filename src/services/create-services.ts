// Builds every service of a process from one ServiceContext.
import { ApiKeyService } from './api-keys.ts';
import { BusinessProfileService } from './business-profiles.ts';
import type { ServiceContext } from './context.ts';
import { MerchantAccountService } from './merchant-accounts.ts';

export function createServices(context: ServiceContext) {
  return {
    apiKeys: new ApiKeyService(context),
    merchantAccounts: new MerchantAccountService(context),
    businessProfiles: new BusinessProfileService(context),
  };
}

export type Services = ReturnType<typeof createServices>;
