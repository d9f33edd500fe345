// Delivering events to merchants: sign the stored bytes, POST them, record the attempt, and decide what
// comes next by the seed's retry schedule (docs/webhooks.md, "Delivery and retries"). PostgreSQL is the
// truth of the schedule (`next_attempt_at`; docs/adr/0002-postgresql-owns-the-webhook-schedule.md);
// the queue only wakes the worker at the right time. An automatic attempt first claims its slot (one
// worker per slot, even if a job runs twice), then sends, then records the outcome.
import { MAX_ATTEMPTS, retryDelayMs } from './retry-schedule.ts';
import { standardWebhookHeaders, webhookSignature, type SigningKeys } from './signature.ts';
import { notFound } from '../../kernel/errors.ts';
import type { ServiceContext } from '../../platform/context.ts';
import type { SecretBox } from '../../kernel/secret-box.ts';
import { webhookUrlProblem } from '../../kernel/webhook-url.ts';
import { profilesTag, sealedSigningKeys } from '../merchants/index.ts';
import { Batcher } from '../../platform/batcher.ts';
import { DeliveryStore, type AttemptRecord, type ClaimedDelivery, type Recording } from './store.ts';
import type { WebhookResponse, WebhookSender } from './sender.ts';

export const USER_AGENT = 'payments-orchestrator-webhooks/1';

/**
 * Every header a delivery of `body` carries, signed with the profile's `keys` at `sentAt` (during a rotation's
 * overlap both sign: `X-Webhook-Signature-512` stays the current key's, the replaced key's digest goes in
 * `X-Webhook-Signature-512-Previous`, and `webhook-signature` lists both; docs/webhooks.md), and the trace of
 * the change that recorded it when it was traced (`traceParent`; a worker that traces replaces it with its
 * POST's own, a child in the same trace): the worker's POSTs and `Event.deliveryHeaders` (what `payments
 * listen` forwards, docs/cli.md) are built here alone, so the two cannot drift apart.
 */
export function deliveryHeaders(eventId: string, body: string, keys: SigningKeys, sentAt: Date, traceParent: string | null): Record<string, string> {
  return {
    'content-type': 'application/json',
    'user-agent': USER_AGENT,
    'x-webhook-signature-512': webhookSignature(body, keys.current),
    ...(keys.previous === null ? {} : { 'x-webhook-signature-512-previous': webhookSignature(body, keys.previous) }),
    ...standardWebhookHeaders(eventId, sentAt, body, keys.previous === null ? [keys.current] : [keys.current, keys.previous]),
    ...(traceParent === null ? {} : { traceparent: traceParent }),
  };
}

/** The keys that sign at `now` of a mode's settings, decrypted (the replaced one only while its overlap lasts). */
export function openSigningKeys(secretBox: Pick<SecretBox, 'open'>, settings: Parameters<typeof sealedSigningKeys>[0], now: Date): SigningKeys {
  const sealed = sealedSigningKeys(settings, now);
  return { current: secretBox.open(sealed.current), previous: sealed.previous === null ? null : secretBox.open(sealed.previous) };
}

/**
 * How long a claimed slot is held beyond the HTTP timeout (time to record the outcome), so only a worker
 * that died mid-delivery loses its claim; the slot then goes to the next job run (the attempt may be sent
 * twice: at least once, never lost).
 */
export const CLAIM_MARGIN_MS = 5_000;

/** How many opened signing keys a process keeps (two per profile during a rotation's overlap). */
const OPENED_KEYS_KEPT = 1_000;

/** What an automatic delivery did, for the queue: done, or try again after `delayMs`. */
export type DeliveryOutcome = { kind: 'done' } | { kind: 'retry'; delayMs: number };

export class WebhookDeliveryService {
  private readonly store: DeliveryStore;
  /** The worker's concurrent jobs claim and record together (src/platform/batcher.ts). */
  private readonly claims: Batcher<string, { claim: ClaimedDelivery; leaseUntil: Date } | null>;
  private readonly records: Batcher<Recording, boolean>;
  /**
   * Signing keys already opened, by their sealed text: every delivery of a profile would otherwise decrypt the
   * same keys again. A rotation seals a new key, so it is a new entry; the map is emptied when it grows past
   * OPENED_KEYS_KEPT.
   */
  private readonly openedKeys = new Map<string, string>();
  /** The last 410 recording queued for each endpoint ("profile:mode") in this process; see recordGone. */
  private readonly goneRecordings = new Map<string, Promise<void>>();

  constructor(
    private readonly context: ServiceContext,
    private readonly sender: WebhookSender,
  ) {
    this.store = new DeliveryStore(context.db.prepared);
    // Two batches of each in flight at most, so a batch forms while the one before it is on its way.
    const batching = { maxSize: 200, maxInFlight: 2 };
    this.claims = new Batcher(async (eventIds) => {
      const now = new Date();
      const leaseUntil = new Date(now.getTime() + context.config.WEBHOOK_TIMEOUT_MS + CLAIM_MARGIN_MS);
      const claimed = await this.store.claimDue(eventIds, now, leaseUntil);
      return eventIds.map((eventId) => {
        const claim = claimed.get(eventId);
        // A job run twice at once: the slot is the first's alone.
        claimed.delete(eventId);
        return claim === undefined ? null : { claim, leaseUntil };
      });
    }, batching);
    this.records = new Batcher((recordings) => this.store.record(recordings), batching);
  }

  /**
   * The automatic attempt that is due for `eventId` (the initial one or a scheduled retry). Sends nothing when
   * no attempt is due: the event is settled (delivered, exhausted, not sent), or its next attempt is ahead (see notDue).
   */
  async deliverDue(eventId: string): Promise<DeliveryOutcome> {
    const { config } = this.context;
    // Claim: reserve the attempt number and move next_attempt_at past the lease, in one guarded statement.
    const claimed = await this.claims.submit(eventId);
    if (claimed === null) return this.notDue(eventId);
    const { claim, leaseUntil } = claimed;
    const record = (attempt: AttemptRecord, change: Recording['change']) => this.records.submit({ claim, attempt, change });
    const kind = claim.automaticAttempts === 1 ? 'INITIAL' : 'AUTOMATIC_RETRY';
    const { response, attempt } = await this.send(claim, kind);
    if (response === null) {
      await record(attempt, { kind: 'not_sent' });
      return { kind: 'done' };
    }
    if (isSuccess(response)) {
      await record(attempt, { kind: 'delivered' });
      return { kind: 'done' };
    }
    if (isGone(response) && (await this.recordGone(claim, attempt))) return { kind: 'done' };
    // A test event is sent once: here only when its one send never got recorded (the process died).
    if (claim.isTest) {
      await record(attempt, { kind: 'failed' });
      return { kind: 'done' };
    }
    // Which retry comes next counts automatic attempts only: a manual retry does not use up the schedule.
    const retryAfterMs = response.kind === 'response' ? response.retryAfterMs : null;
    const delayMs = claim.automaticAttempts < MAX_ATTEMPTS ? retryDelayMs(claim.automaticAttempts, config.WEBHOOK_RETRY_DELAY_SCALE, retryAfterMs) : null;
    if (delayMs === null) {
      await record(attempt, { kind: 'exhausted', leaseUntil });
      return { kind: 'done' };
    }
    // The seed counts each delay from the attempt before (its start, when it was claimed), not from when its answer came.
    const nextAttemptAt = new Date(claim.claimedAt.getTime() + delayMs);
    // Only the holder of the claim schedules: if the lease ran out and another worker took the slot, it decides.
    const applied = await record(attempt, { kind: 'retry_at', nextAttemptAt, leaseUntil });
    return applied ? { kind: 'retry', delayMs: Math.max(0, nextAttemptAt.getTime() - Date.now()) } : { kind: 'done' };
  }

  /**
   * A job that found no attempt due: done, unless its event is still PENDING with its next attempt ahead. That is
   * another run's lease (a job run twice), or a time written by a process whose clock runs ahead of this one's (the
   * API that committed the event, the worker that scheduled the retry): the job is set again for that time rather
   * than left for the reconciler, which would send it up to WEBHOOK_RECONCILE_INTERVAL_MS late (docs/adr/0002).
   */
  private async notDue(eventId: string): Promise<DeliveryOutcome> {
    const nextAttemptAt = await this.store.pendingAttemptAt(eventId);
    return nextAttemptAt === null ? { kind: 'done' } : { kind: 'retry', delayMs: Math.max(0, nextAttemptAt.getTime() - Date.now()) };
  }

  /**
   * One attempt now, outside the schedule: a merchant's "send again" (MANUAL_RETRY: the same bytes and
   * event id, a new attempt record) or a test event's only attempt (TEST, recorded as INITIAL; a failure
   * makes the event FAILED). A success marks the event delivered; a failed manual retry leaves its
   * schedule (or its exhaustion) as it was. Returns whether the endpoint answered 2xx.
   */
  async sendNow(eventId: string, purpose: 'MANUAL_RETRY' | 'TEST'): Promise<boolean> {
    const claim = await this.store.claimNow(eventId);
    if (claim === null) throw notFound('event', eventId);
    const { response, attempt } = await this.send(claim, purpose === 'TEST' ? 'INITIAL' : 'MANUAL_RETRY');
    if (response !== null && isSuccess(response)) {
      await this.store.record([{ claim, attempt, change: { kind: 'delivered' } }]);
      return true;
    }
    if (response !== null && isGone(response) && (await this.recordGone(claim, attempt))) return false;
    await this.store.record([{ claim, attempt, change: purpose === 'TEST' ? { kind: 'failed' } : { kind: 'unchanged' } }]);
    return false;
  }

  /**
   * Signs and POSTs the stored body to the profile's endpoint for the event's mode (as it is now: the URL
   * may have changed since the event was recorded). `response` is null when there is nowhere to send it.
   */
  private async send(claim: ClaimedDelivery, kind: AttemptRecord['kind']): Promise<{ response: WebhookResponse | null; attempt: AttemptRecord }> {
    const unanswered = { responseStatus: null, responseBody: null, responseBodyTruncated: false };
    const error =
      claim.url === null
        ? `no webhook URL is set for ${claim.mode.toLowerCase()} mode`
        : claim.endpointDisabled
          ? 'the endpoint was disabled after it answered 410 Gone'
          : // The live rules again: the operator may have taken the host off the allowlist since the URL was set.
            claim.mode === 'LIVE' && webhookUrlProblem(claim.url, 'LIVE', claim.liveWebhookHosts);
    if (claim.url === null || error) {
      return { response: null, attempt: { kind, url: claim.url, requestHeaders: {}, latencyMs: 0, error: `not sent: ${error}`, ...unanswered } };
    }
    const sentAt = new Date();
    const keys = openSigningKeys({ open: (sealed) => this.openKey(sealed) }, claim.signingKeys, sentAt);
    const headers = deliveryHeaders(claim.eventId, claim.body, keys, sentAt, claim.traceParent);
    const privateNetworks = claim.mode === 'TEST' ? this.context.config.WEBHOOK_ALLOW_PRIVATE_NETWORKS : 'none';
    const response = await this.sender.send({ url: claim.url, body: claim.body, headers, privateNetworks });
    const attempt: AttemptRecord =
      response.kind === 'response'
        ? {
            kind,
            url: claim.url,
            requestHeaders: headers,
            latencyMs: response.latencyMs,
            error: null,
            responseStatus: response.status,
            responseBody: response.body,
            responseBodyTruncated: response.truncated,
          }
        : { kind, url: claim.url, requestHeaders: headers, latencyMs: response.latencyMs, error: response.error, ...unanswered };
    return { response, attempt };
  }

  private openKey(sealed: string): string {
    let key = this.openedKeys.get(sealed);
    if (key === undefined) {
      key = this.context.secretBox.open(sealed);
      if (this.openedKeys.size >= OPENED_KEYS_KEPT) this.openedKeys.clear();
      this.openedKeys.set(sealed, key);
    }
    return key;
  }

  /**
   * 410 Gone: the receiver says the endpoint is gone for good. Stop sending there (this event and the
   * mode's other pending ones become NOT_SENT) until the URL is set again. False when the URL was set again
   * since the claim: the 410 came from the endpoint the merchant left, and the caller records a failed attempt.
   */
  private async recordGone(claim: ClaimedDelivery, attempt: AttemptRecord): Promise<boolean> {
    // One at a time per endpoint in this process: the 410s of deliveries in flight together would otherwise each
    // hold a pooled connection while they queue on the profile's row. The first disables; the rest only record.
    const endpoint = `${claim.profileId}:${claim.mode}`;
    const before = this.goneRecordings.get(endpoint);
    const recording = (before ?? Promise.resolve()).then(() => this.store.recordGone(claim, attempt));
    const settled = recording.then(
      () => undefined,
      () => undefined,
    );
    this.goneRecordings.set(endpoint, settled);
    try {
      const recorded = await recording;
      if (recorded.kind === 'disabled') {
        await this.context.cache.invalidate([profilesTag(recorded.merchantId)]);
        this.context.logger.warn(
          { profileId: claim.profileId, mode: claim.mode, eventId: claim.eventId },
          'webhook endpoint answered 410 Gone and was disabled',
        );
      }
      return recorded.kind !== 'url_changed';
    } finally {
      if (this.goneRecordings.get(endpoint) === settled) this.goneRecordings.delete(endpoint);
    }
  }
}

const isSuccess = (response: WebhookResponse) => response.kind === 'response' && response.status >= 200 && response.status < 300;
const isGone = (response: WebhookResponse) => response.kind === 'response' && response.status === 410;
