// A payment's events, through the outbox's generic API: what its new status emits, prepared for the
// statement that commits it (store.ts), and after commit the hand-off of those events to the relay and of
// the payment to live subscribers.
import { PAYMENT_STATUS_EVENTS, type EventType } from '../events/catalog.ts';
import type { CommittedEvent, EventOutbox, PreparedEvent } from '../events/index.ts';
import { paymentWireObject } from './wire.ts';
import type { Logger } from '../../platform/logger.ts';
import type { Payment, PaymentPublisher } from './store.ts';

/** Live subscribers' feed of payments (GraphQL subscriptions): told of every committed change, best effort. */
export interface PaymentLivePublisher {
  paymentChanged(payment: Payment): void;
}

export class PaymentEvents implements PaymentPublisher {
  constructor(
    private readonly outbox: EventOutbox,
    private readonly live: PaymentLivePublisher,
    private readonly logger: Logger,
  ) {}

  /**
   * The events a payment's new status emits, ready to be written by the statement that commits it: its
   * own, if any, and surcharge_payment_succeeded beside payment_succeeded when a surcharge was paid.
   */
  eventsOf(payment: Payment): PreparedEvent[] {
    const eventType = PAYMENT_STATUS_EVENTS[payment.status];
    if (eventType === null) return [];
    const types: EventType[] = [
      eventType,
      ...(eventType === 'payment_succeeded' && payment.surchargeAmount > 0 ? (['surcharge_payment_succeeded'] as const) : []),
    ];
    const object = paymentWireObject(payment, payment.activeAttempt);
    const { id: objectId, merchantId, profileId, mode, version: objectVersion } = payment;
    const { processorMerchantId } = payment.activeAttempt;
    return types.map((type) =>
      this.outbox.prepare({ merchantId, profileId, mode, eventType: type, objectId, objectVersion, object, isTest: false, processorMerchantId }),
    );
  }

  /** After commit: the change's events to the relay, then the payment's new state to live subscribers. Never fails the caller. */
  published(payment: Payment, events: CommittedEvent[]): void {
    for (const event of events) this.outbox.afterCommit(event);
    try {
      this.live.paymentChanged(payment);
    } catch (error) {
      this.logger.warn({ paymentId: payment.id, err: error }, 'live feed publish failed');
    }
  }
}
