// The transactional outbox of events. A state change writes its event inside its own transaction (so an
// event exists exactly when the change committed, once per committed version, whoever reported it), then
// hands the committed event to the relay (the delivery queue; live subscriptions). A relay that fails
// loses nothing: the reconciler finds due events that have no job.
import { contentTypeOf, type EventType } from './catalog.ts';
import { serializeWebhook } from './signature.ts';
import { newId } from '../../kernel/ids.ts';
import type { Mode } from '../../kernel/api-keys.ts';
import { Prisma, type EventDeliveryStatus } from '../../generated/prisma/client.ts';
import type { ServiceContext } from '../../platform/context.ts';
import { CLAIM_MARGIN_MS } from './delivery.ts';

export interface CommittedEvent {
  id: string;
  merchantId: string;
  profileId: string;
  mode: Mode;
  eventType: EventType;
  objectId: string;
  deliveryStatus: EventDeliveryStatus;
}

/** Where committed events go next. */
export interface EventRelay {
  relay(event: CommittedEvent): Promise<void>;
}

/** Live subscribers' feed of events (GraphQL subscriptions): told of every committed event, best effort. */
export interface LivePublisher {
  eventCreated(event: CommittedEvent): void;
}

type Transaction = Prisma.TransactionClient;

/** An event of a change, before it is written. */
export interface NewEvent {
  merchantId: string;
  profileId: string;
  mode: Mode;
  eventType: EventType;
  objectId: string;
  objectVersion: number;
  object: Record<string, unknown>;
  isTest: boolean;
  /** A payment processed through another merchant's connector account names that merchant (docs/platforms.md). */
  processorMerchantId?: string | null;
}

/** An event whose body is serialized, to be written by its change's statement or transaction. */
export interface PreparedEvent {
  id: string;
  profileId: string;
  /** The INSERT of its row where `condition` holds, returning its delivery_status. */
  insert: (condition: Prisma.Sql) => Prisma.Sql;
  /** The event as written, with the delivery status the insert chose. */
  committed: (deliveryStatus: EventDeliveryStatus) => CommittedEvent;
}

export class EventOutbox {
  constructor(
    private readonly context: ServiceContext,
    private readonly relay: EventRelay,
    private readonly live: LivePublisher,
  ) {}

  /**
   * Inside the transaction of a change of a refund, dispute, mandate or payout: the event its new status
   * emits (`eventType`, null for none), carrying `object` (its wire shape) at the version the change made.
   */
  async recordChange(
    tx: Transaction,
    resource: { id: string; merchantId: string; profileId: string; mode: Mode; version: number },
    eventType: EventType | null,
    object: Record<string, unknown>,
  ): Promise<CommittedEvent | null> {
    if (eventType === null) return null;
    const { id: objectId, merchantId, profileId, mode, version: objectVersion } = resource;
    return this.record(tx, { merchantId, profileId, mode, eventType, objectId, objectVersion, object, isTest: false });
  }

  /** Inside a transaction: one event (see prepare). */
  async record(tx: Transaction, event: NewEvent): Promise<CommittedEvent> {
    return this.write(tx, this.prepare(event));
  }

  private async write(tx: Transaction, event: PreparedEvent): Promise<CommittedEvent> {
    const rows = await tx.$queryRaw<{ delivery_status: EventDeliveryStatus }[]>(event.insert(Prisma.sql`TRUE`));
    const deliveryStatus = rows[0]?.delivery_status;
    if (deliveryStatus === undefined) throw new Error(`no business profile ${event.profileId} for event ${event.id}`);
    return event.committed(deliveryStatus);
  }

  /**
   * One event, its body serialized now: PENDING when the profile has an endpoint for its mode that is not
   * disabled, else NOT_SENT. One statement (it is written on every payment change): the profile's endpoint
   * is read by the insert itself, in the change's transaction, as a separate read would have been. The
   * insert writes the row only where `condition` holds (the change's own guard, when it is part of the
   * change's statement) and returns its delivery_status.
   */
  prepare(event: NewEvent): PreparedEvent {
    const id = newId('event');
    const now = new Date();
    const contentType = contentTypeOf(event.eventType);
    const body = serializeWebhook({
      merchantId: event.merchantId,
      eventId: id,
      eventType: event.eventType,
      contentType,
      object: event.object,
      timestamp: now,
      processorMerchantId: event.processorMerchantId,
    });
    const nextAttemptAt = event.isTest ? this.testEventFallback(now) : now;
    const live = event.mode === 'LIVE';
    return {
      id,
      profileId: event.profileId,
      insert: (condition) => Prisma.sql`
        INSERT INTO events (id, merchant_id, profile_id, mode, event_type, content_type, object_id, object_version, body, is_test, delivery_status, next_attempt_at, created_at)
        SELECT ${id}::text, ${event.merchantId}::text, p.id, ${event.mode}::"Mode", ${event.eventType}::text, ${contentType}::text, ${event.objectId}::text,
               ${event.objectVersion}::int, ${body}::text, ${event.isTest}::boolean,
               CASE WHEN endpoint.sendable THEN 'PENDING' ELSE 'NOT_SENT' END::"EventDeliveryStatus",
               CASE WHEN endpoint.sendable THEN ${nextAttemptAt}::timestamptz END, ${now}::timestamptz
        FROM business_profiles p
        CROSS JOIN LATERAL (
          SELECT COALESCE(CASE WHEN ${live}::boolean THEN p.live_webhook_url ELSE p.test_webhook_url END, '') <> ''
             AND (CASE WHEN ${live}::boolean THEN p.live_webhook_disabled_at ELSE p.test_webhook_disabled_at END) IS NULL AS sendable
        ) endpoint
        WHERE p.id = ${event.profileId} AND ${condition}
        RETURNING delivery_status::text AS delivery_status`,
      committed: (deliveryStatus) => ({
        id,
        merchantId: event.merchantId,
        profileId: event.profileId,
        mode: event.mode,
        eventType: event.eventType,
        objectId: event.objectId,
        deliveryStatus,
      }),
    };
  }

  /**
   * A test event is sent once, by sendTestWebhook itself, which ends it DELIVERED or FAILED. Only if that
   * process dies before recording its send does an automatic attempt come due (after its claim would
   * have run out), to send it and close it either way.
   */
  private testEventFallback(now: Date): Date {
    return new Date(now.getTime() + this.context.config.WEBHOOK_TIMEOUT_MS + CLAIM_MARGIN_MS);
  }

  /** After commit: hand the event on. Never fails the caller, whose change has committed. */
  afterCommit(event: CommittedEvent): void {
    try {
      this.live.eventCreated(event);
    } catch (error) {
      this.context.logger.warn({ eventId: event.id, err: error }, 'live feed publish failed');
    }
    this.relay.relay(event).catch((error: unknown) => {
      this.context.logger.warn({ eventId: event.id, err: error }, 'event relay failed; the reconciler will pick the event up');
    });
  }
}
