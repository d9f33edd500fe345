// The package's entry, as Medusa loads a payment provider: a module provider of the payment module
// (medusa-config.ts: { resolve: "@payments-orchestrator/medusa", id, options }, docs/medusa.md).
import type { ModuleProviderExports } from '@medusajs/framework/types';
import { ModuleProvider, Modules } from '@medusajs/framework/utils';
import { PaymentsOrchestratorProviderService } from './provider.ts';

export { PaymentsOrchestratorProviderService, SESSION_ID_METADATA_KEY } from './provider.ts';
export type { PaymentsOrchestratorData, PaymentsOrchestratorOptions } from './provider.ts';
export { fromMinorUnits, toMinorUnits } from './amounts.ts';

const paymentsOrchestratorProvider: ModuleProviderExports = ModuleProvider(Modules.PAYMENT, { services: [PaymentsOrchestratorProviderService] });
export default paymentsOrchestratorProvider;
