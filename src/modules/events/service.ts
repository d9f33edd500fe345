// What merchants do with their events: read them with every delivery attempt, send one again by hand, and
// send a signed test event to check an endpoint.
import { Repeater } from '@repeaterjs/repeater';
import { z } from 'zod';
import { drain, pushSideOf, withPush, type PushStream } from '../../kernel/async-streams.ts';
import { isEventType, EVENT_TYPES } from './catalog.ts';
import { paymentWireObject } from '../payments/wire.ts';
import { AppError, invalidInput, notFound } from '../../kernel/errors.ts';
import { isId, newId } from '../../kernel/ids.ts';
import type { Event, Prisma, WebhookDeliveryAttempt } from '../../generated/prisma/client.ts';
import type { ServiceContext } from '../../platform/context.ts';
import { connectionPage, DEFAULT_PAGE_SIZE, olderThanCursor } from '../../platform/db/pagination.ts';
import type { MerchantPrincipal, SecretKeyPrincipal } from '../../kernel/principal.ts';
import { parseInput } from '../../kernel/validation.ts';
import type { EventOutbox, WrittenEvent } from './outbox.ts';
import { deliveryHeaders, openSigningKeys, type WebhookDeliveryService } from './delivery.ts';
import type { SigningKeys } from './signature.ts';
import { profileSettings } from '../merchants/index.ts';

const watchEventsInput = z.object({
  profileId: z.string().refine((id) => isId('businessProfile', id), 'is not a business profile id'),
  eventTypes: z
    .array(z.string().refine(isEventType, `must be one of the ${EVENT_TYPES.length} event types`))
    .max(EVENT_TYPES.length)
    .nullish(),
  after: z
    .string()
    .refine((id) => isId('event', id), 'is not an event id')
    .nullish(),
});

/** How many missed events one catch-up query reads at a time, and at most in all. */
const CATCH_UP_PAGE = 100;
const MAX_CATCH_UP = 10_000;

/** What watch listens to: the merchant's new events, and when the listening is in effect. */
export interface LiveEvents {
  events(merchantId: string, mode: string): PushStream<WrittenEvent>;
  /** Resolves once every subscription requested so far is acknowledged by Redis. */
  subscribed(): Promise<void>;
}

const listEventsInput = z.object({
  first: z.number().int().min(1, 'must be at least 1').max(100, 'must be at most 100').nullish(),
  after: z.string().max(200).nullish(),
  objectId: z.string().max(64).nullish(),
  eventTypes: z
    .array(z.string().refine(isEventType, `must be one of the ${EVENT_TYPES.length} event types`))
    .max(EVENT_TYPES.length)
    .nullish(),
  delivered: z.boolean().nullish(),
});

export type EventWithAttempts = Event & { attempts: WebhookDeliveryAttempt[] };

export class EventService {
  constructor(
    private readonly context: ServiceContext,
    private readonly outbox: EventOutbox,
    private readonly delivery: WebhookDeliveryService,
  ) {}

  async get(principal: MerchantPrincipal, eventId: string): Promise<EventWithAttempts> {
    const event = await this.context.db.event.findFirst({
      where: { id: eventId, merchantId: principal.merchantId, mode: principal.mode },
      include: { attempts: { orderBy: { attemptNumber: 'asc' } } },
    });
    if (event === null) throw notFound('event', eventId);
    return event;
  }

  /** The merchant's events in the key's mode, newest first, with filters. */
  async list(principal: MerchantPrincipal, rawInput: unknown) {
    const input = parseInput(listEventsInput, rawInput);
    const first = input.first ?? DEFAULT_PAGE_SIZE;
    const where: Prisma.EventWhereInput = {
      merchantId: principal.merchantId,
      mode: principal.mode,
      ...(input.objectId ? { objectId: input.objectId } : {}),
      ...(input.eventTypes?.length ? { eventType: { in: input.eventTypes } } : {}),
      ...(input.delivered == null ? {} : input.delivered ? { deliveryStatus: 'DELIVERED' } : { deliveryStatus: { not: 'DELIVERED' } }),
      ...olderThanCursor(input.after, 'event'),
    };
    const rows = await this.context.db.event.findMany({
      where,
      include: { attempts: { orderBy: { attemptNumber: 'asc' } } },
      orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
      take: first + 1,
    });
    return connectionPage(rows, first);
  }

  /**
   * The profile's events as they are created (for live dashboards). With `after`, first the events created
   * since that one, from the database, then live ones, with no gap or repeat at the seam: the live feed is
   * subscribed (and Redis has acknowledged it) before the database is read, and what it brings that the
   * catch-up already gave is skipped. Validated before anything streams, so a bad argument is an error,
   * not an empty stream; nothing listens until the stream is read, and its end stops listening at once.
   */
  async watch(principal: SecretKeyPrincipal, rawInput: unknown, live: LiveEvents): Promise<PushStream<EventWithAttempts>> {
    const input = parseInput(watchEventsInput, rawInput);
    const { db } = this.context;
    const profile = await db.businessProfile.findFirst({ where: { id: input.profileId, merchantId: principal.merchantId }, select: { id: true } });
    if (profile === null) throw notFound('business profile', input.profileId);
    const from = input.after
      ? await db.event.findFirst({ where: { id: input.after, merchantId: principal.merchantId, mode: principal.mode }, select: { id: true, createdAt: true } })
      : null;
    if (input.after && from === null) throw notFound('event', input.after);
    const types = input.eventTypes?.length ? new Set<string>(input.eventTypes) : null;
    const wanted = (event: Pick<Event, 'profileId' | 'eventType'>) => event.profileId === input.profileId && (types === null || types.has(event.eventType));
    const scope = { merchantId: principal.merchantId, mode: principal.mode, profileId: input.profileId, ...(types ? { eventType: { in: [...types] } } : {}) };
    if (from !== null) {
      const missed = await db.event.count({
        where: { ...scope, OR: [{ createdAt: { gt: from.createdAt } }, { createdAt: from.createdAt, id: { gt: from.id } }] },
      });
      if (missed > MAX_CATCH_UP)
        throw invalidInput('after', `more than ${MAX_CATCH_UP} events came after it; read them with the events query, then subscribe from the newest`);
    }
    const iterated = new Repeater<EventWithAttempts>(async (push, stop) => {
      const listening = live.events(principal.merchantId, principal.mode)[Symbol.asyncIterator]();
      const first = listening.next(); // subscribes
      const caughtUp = new Set<string>();
      try {
        await live.subscribed();
        for (let cursor = from; cursor !== null;) {
          const page = await db.event.findMany({
            where: { ...scope, OR: [{ createdAt: { gt: cursor.createdAt } }, { createdAt: cursor.createdAt, id: { gt: cursor.id } }] },
            include: { attempts: { orderBy: { attemptNumber: 'asc' } } },
            orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
            take: CATCH_UP_PAGE,
          });
          for (const event of page) {
            caughtUp.add(event.id);
            await push(event);
          }
          cursor = page.length === CATCH_UP_PAGE ? page.at(-1)! : null;
        }
        await drain(
          listening,
          stop,
          async (notice) => {
            if (caughtUp.delete(notice.id) || !wanted(notice)) return;
            await push(notice);
          },
          first,
        );
        stop();
      } catch (error) {
        stop(error as Error);
      } finally {
        await listening.return?.();
      }
    });
    // Without a catch-up there is no seam to mind: pushed, each wanted event is the one object every subscriber of this
    // process shares (the live feed parses a publication once).
    const attachLive = pushSideOf<WrittenEvent>(live.events(principal.merchantId, principal.mode));
    if (from !== null || attachLive === undefined) return iterated;
    return withPush<EventWithAttempts>(iterated, (sink) =>
      attachLive({ next: (notice) => wanted(notice) && sink.next(notice), end: (error) => sink.end(error) }),
    );
  }

  /**
   * The headers a delivery of test-mode `event` sent now carries, signed with its profile's test key as it is
   * now (as the worker signs each attempt, with the same deliveryHeaders): for `payments listen`, which forwards
   * events so the key never leaves the service (docs/cli.md). `testKeyOf` answers the key of a profile
   * (testSigningKeys, read once for a page of events by the GraphQL field).
   */
  async deliveryHeaders(
    event: Pick<Event, 'id' | 'body' | 'profileId' | 'mode' | 'traceParent'>,
    testKeyOf: (profileId: string) => Promise<SigningKeys | null>,
  ): Promise<{ name: string; value: string }[]> {
    // Fresh signatures of live events would let a leaked live key replay them past receivers' timestamp checks.
    if (event.mode === 'LIVE') throw new AppError('FORBIDDEN', 'deliveryHeaders is for test-mode events only (payments listen takes a test key).');
    const key = await testKeyOf(event.profileId);
    if (key === null) throw notFound('business profile', event.profileId);
    return Object.entries(deliveryHeaders(event.id, event.body, key, new Date(), event.traceParent)).map(([name, value]) => ({ name, value }));
  }

  /** The test-mode signing keys of these profiles in force now (both during a rotation's overlap), decrypted: one read for them all. */
  async testSigningKeys(profileIds: string[]): Promise<Map<string, SigningKeys>> {
    const profiles = await this.context.db.businessProfile.findMany({ where: { id: { in: profileIds } } });
    const now = new Date();
    return new Map(profiles.map((profile) => [profile.id, openSigningKeys(this.context.secretBox, profileSettings(profile, 'TEST'), now)]));
  }

  /** Sends the event again now (same body, same event id), even after the schedule ran out. */
  async retry(principal: SecretKeyPrincipal, eventId: string): Promise<EventWithAttempts> {
    const event = await this.get(principal, eventId);
    const profile = await this.context.db.businessProfile.findUniqueOrThrow({ where: { id: event.profileId } });
    const live = event.mode === 'LIVE';
    const mode = event.mode.toLowerCase();
    if ((live ? profile.liveWebhookUrl : profile.testWebhookUrl) === null) {
      throw new AppError('INVALID_STATE', `The profile has no ${mode}-mode webhook URL; set one with updateBusinessProfile first.`, {
        status: event.deliveryStatus,
      });
    }
    if ((live ? profile.liveWebhookDisabledAt : profile.testWebhookDisabledAt) !== null) {
      throw new AppError(
        'INVALID_STATE',
        `The profile's ${mode}-mode endpoint answered 410 Gone and was disabled; set its URL again with updateBusinessProfile to re-enable it.`,
        { status: event.deliveryStatus },
      );
    }
    await this.delivery.sendNow(event.id, 'MANUAL_RETRY');
    return this.get(principal, eventId);
  }

  /**
   * A signed `payment_succeeded` event about a made-up payment (metadata `{"test": true}`), sent once to
   * the profile's endpoint for the key's mode; its attempt says whether the endpoint works.
   */
  async sendTest(principal: SecretKeyPrincipal, profileId: string): Promise<EventWithAttempts> {
    if (!isId('businessProfile', profileId)) throw invalidInput('profileId', 'is not a business profile id');
    const profile = await this.context.db.businessProfile.findFirst({ where: { id: profileId, merchantId: principal.merchantId } });
    if (profile === null) throw notFound('business profile', profileId);
    if ((principal.mode === 'LIVE' ? profile.liveWebhookUrl : profile.testWebhookUrl) === null) {
      throw invalidInput('profileId', `this profile has no ${principal.mode.toLowerCase()}-mode webhook URL; set one with updateBusinessProfile`);
    }
    const now = new Date();
    const paymentId = newId('payment');
    const sample = paymentWireObject(
      {
        id: paymentId,
        merchantId: principal.merchantId,
        profileId,
        mode: principal.mode,
        status: 'SUCCEEDED',
        amount: 1000,
        currency: 'USD',
        amountCapturable: 0,
        amountReceived: 1000,
        amountRefunded: 0,
        surchargeAmount: 0,
        captureMethod: 'AUTOMATIC',
        authenticationType: 'NO_THREE_DS',
        customerId: null,
        description: 'A test event from sendTestWebhook',
        metadata: { test: true },
        returnUrl: null,
        attemptCount: 1,
        cancellationReason: null,
        errorCode: null,
        errorMessage: null,
        version: 0,
        createdAt: now,
        updatedAt: now,
      },
      {
        id: newId('attempt'),
        attemptNumber: 1,
        status: 'CHARGED',
        connectorName: 'sandbox',
        connectorTransactionId: null,
        paymentMethodType: 'card',
        cardBrand: 'VISA',
        cardLast4: '4242',
        cardExpiryMonth: 12,
        cardExpiryYear: now.getUTCFullYear() + 1,
        paymentMethodDetails: null,
        errorCode: null,
        errorMessage: null,
      },
    );
    const event = await this.context.db.$transaction((tx) =>
      this.outbox.record(tx, {
        merchantId: principal.merchantId,
        profileId,
        mode: principal.mode,
        eventType: 'payment_succeeded',
        objectId: paymentId,
        objectVersion: 0,
        object: sample,
        isTest: true,
      }),
    );
    // Dashboards watching paymentEvents see it as they see every event.
    this.outbox.afterCommit(event);
    // One attempt only: a test event is not retried for a day.
    await this.delivery.sendNow(event.id, 'TEST');
    return this.get(principal, event.id);
  }
}
