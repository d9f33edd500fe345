// Delivering events to merchants: sign the stored bytes, POST them, record the attempt, and decide what
// comes next by the seed's retry schedule. PostgreSQL is the truth of the schedule (`next_attempt_at`);
// the queue only wakes the worker at the right time. An automatic attempt first claims its slot (one
// worker per slot, even if a job runs twice), then sends, then records the outcome.
import { MAX_ATTEMPTS, retryDelayMs } from '../../domain/events/retry-schedule.ts';
import { standardWebhookHeaders, webhookSignature } from '../../domain/events/webhook.ts';
import { notFound } from '../../domain/errors.ts';
import { newId } from '../../domain/ids.ts';
import type { DeliveryKind, Event, EventDeliveryStatus, Prisma, WebhookDeliveryAttempt } from '../../generated/prisma/client.ts';
import type { ServiceContext } from '../context.ts';
import type { WebhookResponse, WebhookSender } from './webhook-sender.ts';

export const USER_AGENT = 'payments-orchestrator-webhooks/1';

/**
 * How long a claimed slot is held: beyond the HTTP timeout, so only a worker that died mid-delivery loses
 * its claim, after which the reconciler gives the slot to another (the attempt may then be sent twice:
 * at least once, never lost).
 */
const CLAIM_MARGIN_MS = 30_000;

/** What an automatic delivery did, for the queue: done, or try again after `delayMs`. */
export type DeliveryOutcome = { kind: 'done' } | { kind: 'retry'; delayMs: number };

export class WebhookDeliveryService {
  constructor(
    private readonly context: ServiceContext,
    private readonly sender: WebhookSender,
  ) {}

  /**
   * The automatic attempt that is due for `eventId` (the initial one or a scheduled retry). Does nothing
   * when no attempt is due (already delivered, exhausted, or claimed by another worker).
   */
  async deliverDue(eventId: string): Promise<DeliveryOutcome> {
    const { db, config } = this.context;
    const now = new Date();
    const leaseUntil = new Date(now.getTime() + config.WEBHOOK_TIMEOUT_MS + CLAIM_MARGIN_MS);
    // Claim: reserve the attempt number and move next_attempt_at past the lease, in one guarded statement.
    const claimed = await db.event.updateManyAndReturn({
      where: { id: eventId, deliveryStatus: 'PENDING', nextAttemptAt: { lte: now } },
      data: { attemptCount: { increment: 1 }, nextAttemptAt: leaseUntil },
    });
    const event = claimed[0];
    if (event === undefined) return { kind: 'done' };
    const kind: DeliveryKind = event.attemptCount === 1 ? 'INITIAL' : 'AUTOMATIC_RETRY';
    const response = await this.send(event);
    return db.$transaction(async (tx) => {
      await this.recordAttempt(tx, event, event.attemptCount, kind, response);
      if (isSuccess(response)) {
        await tx.event.update({ where: { id: event.id }, data: { deliveryStatus: 'DELIVERED', deliveredAt: new Date(), nextAttemptAt: null } });
        return { kind: 'done' } as const;
      }
      if (isGone(response)) {
        await this.disableEndpoint(tx, event);
        return { kind: 'done' } as const;
      }
      // Which retry comes next counts automatic attempts only: a manual retry does not use up the schedule.
      const manual = await tx.webhookDeliveryAttempt.count({ where: { eventId: event.id, kind: 'MANUAL_RETRY' } });
      const automaticAttempts = event.attemptCount - manual;
      const retryAfterMs = response.kind === 'response' ? response.retryAfterMs : null;
      const delayMs = automaticAttempts < MAX_ATTEMPTS ? retryDelayMs(automaticAttempts, config.WEBHOOK_RETRY_DELAY_SCALE, retryAfterMs) : null;
      // Only the holder of the claim schedules: if the lease ran out and another worker took the slot, it decides.
      const data: Prisma.EventUpdateManyMutationInput =
        delayMs === null ? { deliveryStatus: 'FAILED', nextAttemptAt: null } : { nextAttemptAt: new Date(Date.now() + delayMs) };
      const scheduled = await tx.event.updateMany({ where: { id: event.id, deliveryStatus: 'PENDING', nextAttemptAt: leaseUntil }, data });
      return scheduled.count === 1 && delayMs !== null ? ({ kind: 'retry', delayMs } as const) : ({ kind: 'done' } as const);
    });
  }

  /**
   * One attempt now, outside the schedule: a merchant's "send again" (MANUAL_RETRY: the same bytes and
   * event id, a new attempt record) or a test event's only attempt (INITIAL). A success marks the event
   * delivered; a failure leaves its schedule (or its exhaustion) as it was.
   */
  async sendNow(event: Pick<Event, 'id'>, kind: 'INITIAL' | 'MANUAL_RETRY'): Promise<WebhookDeliveryAttempt> {
    const { db } = this.context;
    const [claimed] = await db.event.updateManyAndReturn({ where: { id: event.id }, data: { attemptCount: { increment: 1 } } });
    if (claimed === undefined) throw notFound('event', event.id);
    const response = await this.send(claimed);
    return db.$transaction(async (tx) => {
      const attempt = await this.recordAttempt(tx, claimed, claimed.attemptCount, kind, response);
      if (isSuccess(response)) {
        await tx.event.update({ where: { id: claimed.id }, data: { deliveryStatus: 'DELIVERED', deliveredAt: new Date(), nextAttemptAt: null } });
      } else if (isGone(response)) {
        await this.disableEndpoint(tx, claimed);
      }
      return attempt;
    });
  }

  /** Signs and POSTs the stored body to the profile's current endpoint for the event's mode. */
  private async send(event: Event): Promise<WebhookResponse & { url: string | null; headers: Record<string, string> }> {
    const profile = await this.context.db.businessProfile.findUniqueOrThrow({ where: { id: event.profileId } });
    const live = event.mode === 'LIVE';
    const url = live ? profile.liveWebhookUrl : profile.testWebhookUrl;
    const disabledAt = live ? profile.liveWebhookDisabledAt : profile.testWebhookDisabledAt;
    if (url === null || disabledAt !== null) {
      const error = url === null ? `no webhook URL is set for ${event.mode.toLowerCase()} mode` : 'the endpoint was disabled after it answered 410 Gone';
      return { kind: 'no_response', error, latencyMs: 0, url, headers: {} };
    }
    const key = this.context.secretBox.open(profile.paymentResponseHashKeyEncrypted);
    const headers = {
      'content-type': 'application/json',
      'user-agent': USER_AGENT,
      'x-webhook-signature-512': webhookSignature(event.body, key),
      ...standardWebhookHeaders(event.id, new Date(), event.body, key),
    };
    const allowPrivateNetworks = !live && this.context.config.WEBHOOK_ALLOW_PRIVATE_NETWORKS;
    const response = await this.sender.send({ url, body: event.body, headers, allowPrivateNetworks });
    return { ...response, url, headers };
  }

  private async recordAttempt(
    tx: Prisma.TransactionClient,
    event: Event,
    attemptNumber: number,
    kind: DeliveryKind,
    response: WebhookResponse & { url: string | null; headers: Record<string, string> },
  ): Promise<WebhookDeliveryAttempt> {
    return tx.webhookDeliveryAttempt.create({
      data: {
        id: newId('deliveryAttempt'),
        eventId: event.id,
        attemptNumber,
        kind,
        url: response.url,
        requestHeaders: response.headers,
        responseStatus: response.kind === 'response' ? response.status : null,
        responseBody: response.kind === 'response' ? response.body : null,
        responseBodyTruncated: response.kind === 'response' && response.truncated,
        latencyMs: Math.round(response.latencyMs),
        error: response.kind === 'no_response' ? response.error : null,
      },
    });
  }

  /** 410 Gone: the receiver says the endpoint is gone for good. Stop sending there until the URL is set again. */
  private async disableEndpoint(tx: Prisma.TransactionClient, event: Event): Promise<void> {
    const field = event.mode === 'LIVE' ? 'liveWebhookDisabledAt' : 'testWebhookDisabledAt';
    await tx.businessProfile.update({ where: { id: event.profileId }, data: { [field]: new Date() } });
    const status: EventDeliveryStatus = 'NOT_SENT';
    await tx.event.updateMany({ where: { profileId: event.profileId, mode: event.mode, deliveryStatus: 'PENDING' }, data: { deliveryStatus: status, nextAttemptAt: null } });
    this.context.logger.warn({ profileId: event.profileId, mode: event.mode, eventId: event.id }, 'webhook endpoint answered 410 Gone and was disabled');
  }
}

const isSuccess = (response: WebhookResponse) => response.kind === 'response' && response.status >= 200 && response.status < 300;
const isGone = (response: WebhookResponse) => response.kind === 'response' && response.status === 410;

