// The ledger module's public entry (docs/ledger.md).
export { LedgerService, captureMovement, termsOf, type LedgerPayment } from './service.ts';
export { hasTakenBack, movementInsert } from './store.ts';
export { capturedShares, type Share } from './allocation.ts';
