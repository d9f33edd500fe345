// What every part of the payments service works with, built once by PaymentService (../service.ts) and
// shared by the parts it composes.
import type { ServiceContext } from '../../../platform/context.ts';
import type { ConnectorAccountService } from '../../connectors/index.ts';
import type { CustomerService } from '../../customers/index.ts';
import type { MandateService } from '../../mandates/index.ts';
import type { PaymentSyncScheduler } from '../../processor-sync/index.ts';
import type { RoutingService } from '../../routing/index.ts';
import type { PaymentStore } from '../store.ts';
import type { PaymentKeys } from './keys.ts';

export interface PaymentDependencies {
  readonly context: ServiceContext;
  readonly store: PaymentStore;
  readonly keys: PaymentKeys;
  readonly connectorAccounts: ConnectorAccountService;
  readonly customers: CustomerService;
  readonly mandates: MandateService;
  readonly syncScheduler: PaymentSyncScheduler;
  readonly routing: RoutingService;
}
