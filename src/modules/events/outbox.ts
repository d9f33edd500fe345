// The transactional outbox of events. A state change writes its event inside its own transaction (so an
// event exists exactly when the change committed, once per committed version, whoever reported it), then
// hands the committed event to the relay (the delivery queue; live subscriptions). A relay that fails
// loses nothing: the reconciler finds due events that have no job.
import { contentTypeOf, type EventType } from './catalog.ts';
import { webhookAroundId } from './signature.ts';
import { ID_PREFIXES, ID_RANDOM_LENGTH, newId } from '../../kernel/ids.ts';
import type { Mode } from '../../kernel/api-keys.ts';
import { Prisma, type Event, type EventDeliveryStatus, type WebhookDeliveryAttempt } from '../../generated/prisma/client.ts';
import type { ServiceContext } from '../../platform/context.ts';
import { activeTraceParent } from '../../platform/tracing.ts';
import { CLAIM_MARGIN_MS } from './delivery.ts';

/**
 * One written row of the outbox, whole, as its insert wrote it: no delivery attempt yet. Live subscribers are given
 * it as it is (docs/subscriptions.md), so an event reaches them without being read back.
 */
export interface WrittenEvent extends Omit<Event, 'eventType'> {
  eventType: EventType;
  attempts: WebhookDeliveryAttempt[];
}

/**
 * An event as its change committed it, with its copies: a connected merchant's event is also written for each
 * of its platform's profiles that receive their connected merchants' events (docs/platforms.md).
 */
export interface CommittedEvent extends WrittenEvent {
  copies: WrittenEvent[];
}

/** Where committed events go next. */
export interface EventRelay {
  relay(event: WrittenEvent): Promise<void>;
}

/** Live subscribers' feed of events (GraphQL subscriptions): told of every committed event, best effort. */
export interface LivePublisher {
  eventCreated(event: WrittenEvent): void;
}

type Transaction = Prisma.TransactionClient;

/** A copy's id has an event id's shape (kernel/ids.ts): its characters are hex digits of md5(event id, profile id). */
const COPY_ID_PREFIX = `${ID_PREFIXES.event}_`;

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

/** A row the insert of a prepared event wrote: its own or a copy's. */
export interface WrittenEventRow {
  id: string;
  merchant_id: string;
  profile_id: string;
  delivery_status: EventDeliveryStatus;
}

/** An event whose body is serialized, to be written by its change's statement or transaction. */
export interface PreparedEvent {
  /** The INSERT of its row and its copies' where `condition` holds, returning the rows written (WrittenEventRow). */
  insert: (condition: Prisma.Sql) => Prisma.Sql;
  /** The event as written, with its copies, from the rows its insert returned; throws when its own row is not among them. */
  committed: (rows: WrittenEventRow[]) => CommittedEvent;
}

export class EventOutbox {
  constructor(
    private readonly context: ServiceContext,
    private readonly relay: EventRelay,
    private readonly live: LivePublisher,
  ) {}

  /**
   * Inside the transaction of a change of a refund, dispute, mandate or payout: the event its new status
   * emits (`eventType`, null for none), carrying `object` (its wire shape) at the version the change made,
   * and the merchant whose connector account processed it (a refund's or dispute's attempt's, docs/platforms.md).
   */
  async recordChange(
    tx: Transaction,
    resource: { id: string; merchantId: string; profileId: string; mode: Mode; version: number; processorMerchantId?: string | null },
    eventType: EventType | null,
    object: Record<string, unknown>,
  ): Promise<CommittedEvent | null> {
    if (eventType === null) return null;
    const { id: objectId, merchantId, profileId, mode, version: objectVersion, processorMerchantId } = resource;
    return this.record(tx, { merchantId, profileId, mode, eventType, objectId, objectVersion, object, isTest: false, processorMerchantId });
  }

  /** Inside a transaction: one event and its copies (see prepare). */
  async record(tx: Transaction, event: NewEvent): Promise<CommittedEvent> {
    const prepared = this.prepare(event);
    return prepared.committed(await tx.$queryRaw<WrittenEventRow[]>(prepared.insert(Prisma.sql`TRUE`)));
  }

  /**
   * One event, its body serialized now: PENDING when the profile has an endpoint for its mode that is not
   * disabled, else NOT_SENT. One statement (it is written on every payment change): the profile's endpoint
   * is read by the insert itself, in the change's transaction, as a separate read would have been. The
   * insert writes the row only where `condition` holds (the change's own guard, when it is part of the
   * change's statement) and returns the rows it wrote.
   *
   * The same statement writes the copies of a connected merchant's event for its platform's profiles that
   * receive their connected merchants' events in its mode (docs/platforms.md): the same body but for its
   * event id, the platform's rows (its profile's endpoint and signing key), each id derived from the event's
   * and the profile's, so it is unique and names one copy. For any other merchant that costs one lookup of
   * its row by key. A test event (sendTestWebhook) checks one endpoint and is not copied.
   */
  prepare(event: NewEvent): PreparedEvent {
    const id = newId('event');
    const now = new Date();
    const contentType = contentTypeOf(event.eventType);
    const { head, tail } = webhookAroundId({
      merchantId: event.merchantId,
      eventType: event.eventType,
      contentType,
      object: event.object,
      timestamp: now,
      processorMerchantId: event.processorMerchantId,
    });
    const nextAttemptAt = event.isTest ? this.testEventFallback(now) : now;
    // Its deliveries carry the trace of the change that recorded it (docs/operations.md, "Tracing").
    const traceParent = activeTraceParent();
    const live = event.mode === 'LIVE';
    const copies = event.isTest
      ? Prisma.empty
      : Prisma.sql`
          UNION ALL
          SELECT ${COPY_ID_PREFIX}::text || left(md5(${id}::text || platform_profile.id), ${ID_RANDOM_LENGTH}::int), platform_profile.merchant_id, platform_profile.id
          FROM merchant_accounts connected
          JOIN business_profiles platform_profile ON platform_profile.merchant_id = connected.platform_merchant_id
          WHERE connected.id = ${event.merchantId}
            AND CASE WHEN ${live}::boolean THEN platform_profile.live_receive_connected_merchant_events ELSE platform_profile.test_receive_connected_merchant_events END`;
    // The row as the insert below writes it. An id is letters, digits and `_` (kernel/ids.ts; a copy's, hex digits),
    // so JSON.stringify gives the same text as PostgreSQL's to_json.
    const written = (row: WrittenEventRow): WrittenEvent => ({
      id: row.id,
      merchantId: row.merchant_id,
      profileId: row.profile_id,
      mode: event.mode,
      eventType: event.eventType,
      contentType,
      objectId: event.objectId,
      objectVersion: event.objectVersion,
      body: `${head}${JSON.stringify(row.id)}${tail}`,
      isTest: event.isTest,
      deliveryStatus: row.delivery_status,
      attemptCount: 0,
      automaticAttempts: 0,
      nextAttemptAt: row.delivery_status === 'PENDING' ? nextAttemptAt : null,
      deliveredAt: null,
      createdAt: now,
      traceParent,
      attempts: [],
    });
    return {
      insert: (condition) => Prisma.sql`
        INSERT INTO events (id, merchant_id, profile_id, mode, event_type, content_type, object_id, object_version, body, trace_parent, is_test, delivery_status, next_attempt_at, created_at)
        SELECT target.id, target.merchant_id, p.id, ${event.mode}::"Mode", ${event.eventType}::text, ${contentType}::text, ${event.objectId}::text,
               ${event.objectVersion}::int, ${head}::text || to_json(target.id)::text || ${tail}::text, ${traceParent}::text, ${event.isTest}::boolean,
               CASE WHEN endpoint.sendable THEN 'PENDING' ELSE 'NOT_SENT' END::"EventDeliveryStatus",
               CASE WHEN endpoint.sendable THEN ${nextAttemptAt}::timestamptz END, ${now}::timestamptz
        FROM (
          SELECT ${id}::text AS id, ${event.merchantId}::text AS merchant_id, ${event.profileId}::text AS profile_id${copies}
        ) target
        JOIN business_profiles p ON p.id = target.profile_id
        CROSS JOIN LATERAL (
          SELECT COALESCE(CASE WHEN ${live}::boolean THEN p.live_webhook_url ELSE p.test_webhook_url END, '') <> ''
             AND (CASE WHEN ${live}::boolean THEN p.live_webhook_disabled_at ELSE p.test_webhook_disabled_at END) IS NULL AS sendable
        ) endpoint
        WHERE ${condition}
        RETURNING id, merchant_id, profile_id, delivery_status::text AS delivery_status`,
      committed: (rows) => {
        const own = rows.find((row) => row.id === id);
        if (own === undefined) throw new Error(`no business profile ${event.profileId} for event ${id}`);
        return { ...written(own), copies: rows.filter((row) => row !== own).map(written) };
      },
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

  /** After commit: hand the event and its copies on. Never fails the caller, whose change has committed. */
  afterCommit({ copies, ...event }: CommittedEvent): void {
    for (const written of [event, ...copies]) {
      try {
        this.live.eventCreated(written);
      } catch (error) {
        this.context.logger.warn({ eventId: written.id, err: error }, 'live feed publish failed');
      }
      this.relay.relay(written).catch((error: unknown) => {
        this.context.logger.warn({ eventId: written.id, err: error }, 'event relay failed; the reconciler will pick the event up');
      });
    }
  }
}
