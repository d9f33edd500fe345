// The refunds module's public entry: what other modules, the API and the processes may use of it.
export { type RefundService } from './service.ts';
