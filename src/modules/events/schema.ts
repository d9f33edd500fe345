// Events (the outgoing webhooks' log) with every delivery attempt, manual retry and the test webhook.
import { EVENT_TYPES } from './catalog.ts';
import { builder } from '../../platform/graphql/builder.ts';
import { requestLoader } from '../../platform/graphql/request-loader.ts';
import { ModeEnum } from '../../platform/graphql/scalars.ts';
import type { EventWithAttempts } from './service.ts';

const EventDeliveryStatusEnum = builder.enumType('EventDeliveryStatus', {
  values: {
    PENDING: { description: 'Not delivered yet; `nextAttemptAt` says when the next automatic attempt is due.' },
    DELIVERED: { description: 'An attempt got a 2xx.' },
    FAILED: { description: 'All 17 automatic attempts failed (retry by hand with retryWebhookDelivery).' },
    NOT_SENT: { description: 'No endpoint was configured for the mode (or it was disabled by a 410) when the event happened.' },
  } as const,
});

const DeliveryKindEnum = builder.enumType('DeliveryKind', { values: ['INITIAL', 'AUTOMATIC_RETRY', 'MANUAL_RETRY'] as const });

const EventTypeEnum = builder.enumType('EventType', {
  description: 'The seed’s 33 event types, in GraphQL spelling (payment_succeeded is PAYMENT_SUCCEEDED on the wire of GraphQL only).',
  values: EVENT_TYPES.map((type) => type.toUpperCase()) as Uppercase<(typeof EVENT_TYPES)[number]>[],
});

export const WebhookDeliveryAttemptRef = builder.prismaObject('WebhookDeliveryAttempt', {
  fields: (t) => ({
    id: t.exposeID('id'),
    attemptNumber: t.exposeInt('attemptNumber'),
    kind: t.expose('kind', { type: DeliveryKindEnum }),
    url: t.exposeString('url', { nullable: true }),
    requestHeaders: t.expose('requestHeaders', { type: 'JSON' }),
    responseStatus: t.exposeInt('responseStatus', { nullable: true }),
    responseBody: t.exposeString('responseBody', { nullable: true, description: 'At most 20 KB.' }),
    responseBodyTruncated: t.exposeBoolean('responseBodyTruncated'),
    latencyMs: t.exposeInt('latencyMs'),
    error: t.exposeString('error', { nullable: true, description: 'Why there was no HTTP answer (timeout, refused address, ...).' }),
    startedAt: t.expose('startedAt', {
      type: 'DateTime',
      description: 'When the attempt began; the next automatic attempt is due a scheduled delay after it.',
    }),
    createdAt: t.expose('createdAt', { type: 'DateTime', description: 'When the outcome was recorded.' }),
  }),
});

/** A page of events with deliveryHeaders reads and decrypts each profile's key once; a subscription's next event reads it again (a rotated key signs at once). */
const testSigningKey = requestLoader(({ services }, profileIds) => services.events.testSigningKeys(profileIds), { keep: 'batch' });

const HttpHeader = builder.simpleObject('HttpHeader', {
  description: 'One HTTP header: its name in lower case, and its value.',
  fields: (t) => ({ name: t.string(), value: t.string() }),
});

export const EventRef = builder.prismaObject('Event', {
  description: 'Something the merchant is told about by webhook; `body` is the exact JSON sent (and signed) on every attempt.',
  fields: (t) => ({
    id: t.exposeID('id'),
    eventType: t.field({ type: EventTypeEnum, resolve: (event) => event.eventType.toUpperCase() as Uppercase<(typeof EVENT_TYPES)[number]> }),
    contentType: t.exposeString('contentType'),
    objectId: t.exposeString('objectId'),
    objectVersion: t.exposeInt('objectVersion'),
    profileId: t.exposeString('profileId'),
    mode: t.expose('mode', { type: ModeEnum }),
    isTest: t.exposeBoolean('isTest'),
    body: t.exposeString('body'),
    deliveryStatus: t.expose('deliveryStatus', { type: EventDeliveryStatusEnum }),
    attemptCount: t.exposeInt('attemptCount'),
    nextAttemptAt: t.expose('nextAttemptAt', { type: 'DateTime', nullable: true }),
    deliveredAt: t.expose('deliveredAt', { type: 'DateTime', nullable: true }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    // Every event comes with its attempts, in order (EventService reads them with it; a live one has none yet), so
    // they are not read again: a relation field would, for an event not loaded by a Pothos-planned query.
    attempts: t.field({ type: [WebhookDeliveryAttemptRef], resolve: (event) => (event as EventWithAttempts).attempts }),
    deliveryHeaders: t.withAuth({ secretKey: true }).field({
      type: [HttpHeader],
      description:
        'The headers a delivery of `body` sent now carries (content-type, user-agent, X-Webhook-Signature-512, webhook-id, webhook-timestamp, webhook-signature; X-Webhook-Signature-512-Previous and a second signature during a key rotation’s overlap), signed with the profile’s current test-mode keys: what `payments listen` forwards with the body, so the key stays here (docs/cli.md). Secret key; test-mode events only (FORBIDDEN for a live one).',
      resolve: (event, _args, context) => context.services.events.deliveryHeaders(event, (profileId) => testSigningKey(context, profileId)),
    }),
  }),
});

builder.queryField('event', (t) =>
  t.withAuth({ secretKey: true }).prismaField({
    type: EventRef,
    args: { id: t.arg.string({ required: true }) },
    resolve: (_query, _root, { id }, { principal, services }) => services.events.get(principal, id),
  }),
);

// Hand-written like PaymentConnection (modules/payments/schema.ts says why not prismaConnection); relay would also fold EventPageInfo into PageInfo.
const EventEdge = builder.simpleObject('EventEdge', { fields: (t) => ({ cursor: t.string(), node: t.field({ type: EventRef }) }) });
const EventPageInfo = builder.simpleObject('EventPageInfo', { fields: (t) => ({ hasNextPage: t.boolean(), endCursor: t.string({ nullable: true }) }) });
const EventConnection = builder.simpleObject('EventConnection', {
  fields: (t) => ({ edges: t.field({ type: [EventEdge] }), pageInfo: t.field({ type: EventPageInfo }) }),
});

builder.queryField('events', (t) =>
  t.withAuth({ secretKey: true }).field({
    type: EventConnection,
    description: 'The merchant’s events in the key’s mode, newest first.',
    args: {
      first: t.arg.int({ description: '1 to 100; 20 by default.' }),
      after: t.arg.string(),
      objectId: t.arg.string({ description: 'Only the events of this payment (or other object).' }),
      eventTypes: t.arg({ type: [EventTypeEnum] }),
      delivered: t.arg.boolean({ description: 'true: delivered only; false: not (yet) delivered.' }),
    },
    resolve: (_root, args, { principal, services }) =>
      services.events.list(principal, { ...args, eventTypes: args.eventTypes?.map((type) => type.toLowerCase()) }),
  }),
);

builder.subscriptionField('paymentEvents', (t) =>
  t.withAuth({ secretKey: true }).field({
    type: EventRef,
    description:
      'Every event of the profile (payments, refunds, disputes, mandates, payouts, subscriptions) as it is created, for live dashboards; secret key. With `after` (an event id), first the events created since that one, then live ones, without gaps or repeats.',
    args: { profileId: t.arg.string({ required: true }), eventTypes: t.arg({ type: [EventTypeEnum] }), after: t.arg.string() },
    subscribe: async (_root, args, { principal, services, live, gate }) => {
      const input = { ...args, eventTypes: args.eventTypes?.map((type) => type.toLowerCase()) };
      return gate.open(principal, await services.events.watch(principal, input, live));
    },
    resolve: (event) => event,
  }),
);

const RetryWebhookDeliveryInput = builder.inputType('RetryWebhookDeliveryInput', { fields: (t) => ({ eventId: t.string({ required: true }) }) });

builder.mutationField('retryWebhookDelivery', (t) =>
  t.withAuth({ secretKey: true }).field({
    type: EventRef,
    description: 'Sends the event again now: the same body and event id, a new attempt (also after the automatic attempts ran out).',
    args: { input: t.arg({ type: RetryWebhookDeliveryInput, required: true }) },
    resolve: (_root, { input }, { principal, services }) => services.events.retry(principal, input.eventId),
  }),
);

const SendTestWebhookInput = builder.inputType('SendTestWebhookInput', { fields: (t) => ({ profileId: t.string({ required: true }) }) });

builder.mutationField('sendTestWebhook', (t) =>
  t.withAuth({ secretKey: true }).field({
    type: EventRef,
    description: 'Sends a signed test event (payment_succeeded about a made-up payment) to the profile’s endpoint for the key’s mode, once.',
    args: { input: t.arg({ type: SendTestWebhookInput, required: true }) },
    resolve: (_root, { input }, { principal, services }) => services.events.sendTest(principal, input.profileId),
  }),
);
