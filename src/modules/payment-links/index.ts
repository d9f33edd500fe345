// The payment-links module's public entry: what other modules, the API and the processes may use of it.
export { type PaymentLinkService } from './service.ts';
