// The payments module's public entry: what other modules, the API and the processes may use of it.
export { type PaymentLivePublisher } from './events.ts';
export { type PaymentService } from './service.ts';
export { chargeOf, lockPayment, type Payment, releaseRefund, reserveRefund, touchPayment } from './store.ts';
export { refundSplitOf } from './service/pass-through.ts';
