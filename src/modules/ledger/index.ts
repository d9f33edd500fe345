export { LedgerService, captureMovement, termsOf, type LedgerPayment } from './service.ts';
export { movementInsert, type Balance } from './store.ts';
export { apportion, fullShares, type PaymentTerms } from './allocation.ts';
