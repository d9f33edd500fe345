// The sandbox personality's callbacks (its webhooks): a secret key registers one endpoint, and every status
// change of its payments, refunds, disputes, saved cards and payouts that happens away from the caller's own
// requests (a debit or a refund settling, a transfer's funds arriving or not, the customer finishing a
// challenge or the bank's page, a refund's review, a dispute opened or decided by the customer's bank, a saved
// card revoked at the bank, a payout moving on or sent back) is POSTed there, signed, and retried on the
// server's delays. So the service's callback route is exercised over HTTP as a real processor would call it. A processor without webhooks (fauxpay) has
// no Callbacks at all.
import { createHmac } from 'node:crypto';
import { z } from 'zod';
import { randomBase62 } from './ids.ts';
import type { Changeable } from './resources.ts';

export const DEFAULT_CALLBACK_RETRY_DELAYS_MS: readonly number[] = [1000, 5000, 30_000, 120_000];
/** How long one attempt may wait for the endpoint's answer before it counts as failed. */
const CALLBACK_TIMEOUT_MS = 10_000;
const MAX_URL_LENGTH = 2048;
/** How many of a key's callbacks GET webhook_deliveries can show. */
const MAX_DELIVERIES_PER_KEY = 1000;

const secretRule = 'must be 16 to 256 characters';
export const registerEndpointSchema = z.strictObject({
  url: z.url({ protocol: /^https?$/, error: 'must be an absolute http or https URL' }).max(MAX_URL_LENGTH, `must be at most ${MAX_URL_LENGTH} characters`),
  secret: z.string().min(16, secretRule).max(256, secretRule),
});

export interface Endpoint {
  readonly id: string;
  readonly url: string;
  /** Signs the callbacks; never shown again once registered. */
  readonly secret: string;
  readonly createdMs: number;
}

/** One callback: an event about one status change and what became of sending it. */
export interface Delivery {
  readonly eventId: string;
  readonly type: string;
  /** The id of what changed: the payment's, refund's, dispute's or payout's, or the saved card's token. */
  readonly objectId: string;
  /** The payment's id, or the refunded or disputed payment's for a refund or a dispute; null for what belongs to no payment (a saved card, a payout). */
  readonly paymentId: string | null;
  /**
   * The endpoint registered when the change happened. Its retries go there even if the key registers
   * another meanwhile: the body was signed for it, and the new endpoint gets the changes from then on.
   */
  readonly endpoint: Endpoint;
  /** Serialized once, so every attempt sends the same bytes. */
  readonly body: string;
  attempts: number;
  /** The HTTP status of the last attempt; null before the first answer, or when the last attempt got none. */
  lastStatus: number | null;
  delivered: boolean;
}

export interface CallbackOptions {
  /** The wait before each retry; one attempt more than there are delays. */
  retryDelaysMs: readonly number[];
  /** The object exactly as `GET <apiPrefix>/payments/<id>` (or `/refunds/<id>`, `/disputes/<id>`, `/payment_methods/<token>`, `/payouts/<id>`) answers it. */
  render(changed: Changeable): unknown;
}

/** The payment a change is about: the payment itself, the refunded or disputed one, or none. */
function paymentOf(changed: Changeable): string | null {
  switch (changed.object) {
    case 'payment':
      return changed.id;
    case 'refund':
    case 'dispute':
      return changed.paymentId;
    case 'payment_method':
    case 'payout':
      return null;
  }
}

/** `t=<unix seconds>,v1=<lowercase hex HMAC-SHA256 of "<t>.<body>">`, keyed with the secret's UTF-8 bytes. */
export function signatureHeader(secret: string, body: string, timestamp: number): string {
  const digest = createHmac('sha256', Buffer.from(secret, 'utf8')).update(`${timestamp}.${body}`).digest('hex');
  return `t=${timestamp},v1=${digest}`;
}

export class Callbacks {
  /** By API key: one endpoint each, the latest registered. */
  private readonly endpoints = new Map<string, Endpoint>();
  /** By API key, newest first. */
  private readonly deliveries = new Map<string, Delivery[]>();
  private readonly timers = new Set<NodeJS.Timeout>();
  /** Aborted by close(): in-flight attempts stop, and none starts or is rescheduled after. */
  private readonly closing = new AbortController();

  constructor(private readonly options: CallbackOptions) {}

  /** Registers `apiKey`'s endpoint, replacing the one it had. */
  register(apiKey: string, input: z.infer<typeof registerEndpointSchema>): Endpoint {
    const endpoint: Endpoint = { id: `we_${randomBase62(24)}`, url: input.url, secret: input.secret, createdMs: Date.now() };
    this.endpoints.set(apiKey, endpoint);
    return endpoint;
  }

  endpointsOf(apiKey: string): Endpoint[] {
    const endpoint = this.endpoints.get(apiKey);
    return endpoint === undefined ? [] : [endpoint];
  }

  deliveriesOf(apiKey: string): readonly Delivery[] {
    return this.deliveries.get(apiKey) ?? [];
  }

  /**
   * Sends the callback of a payment's, refund's, dispute's, saved card's or payout's new status
   * (`<object>.<status>`: `payment.succeeded`, `refund.failed`, `payment_method.revoked`, `payout.paid`; a new
   * dispute is `dispute.needs_response`) to its key's endpoint, if it has one. The event is built now, so it
   * shows the object as this change left it; the sending starts on a timer, after the caller's answer, and
   * nothing it does can throw into the change that it reports.
   */
  changed(changed: Changeable): void {
    const endpoint = this.endpoints.get(changed.apiKey);
    if (endpoint === undefined || this.closing.signal.aborted) return;
    try {
      const eventId = `evt_sbx_${randomBase62(24)}`;
      const type = `${changed.object}.${changed.status}`;
      const body = JSON.stringify({ id: eventId, type, created: Math.floor(Date.now() / 1000), data: { object: this.options.render(changed) } });
      const paymentId = paymentOf(changed);
      const delivery: Delivery = { eventId, type, objectId: changed.id, paymentId, endpoint, body, attempts: 0, lastStatus: null, delivered: false };
      const list = this.deliveries.get(changed.apiKey) ?? [];
      list.unshift(delivery);
      // The newest only: a long-running sandbox must not keep every callback it ever sent.
      if (list.length > MAX_DELIVERIES_PER_KEY) list.length = MAX_DELIVERIES_PER_KEY;
      this.deliveries.set(changed.apiKey, list);
      this.schedule(delivery, 0);
    } catch (error) {
      process.stderr.write(`sandbox: could not prepare the callback of ${changed.id}: ${(error as Error).stack}\n`);
    }
  }

  /** Cancels the pending retries and in-flight attempts: a closed server sends nothing more. */
  close(): void {
    this.closing.abort();
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
  }

  private schedule(delivery: Delivery, delayMs: number): void {
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      this.attempt(delivery).catch((error: unknown) => {
        process.stderr.write(`sandbox: callback ${delivery.eventId} failed unexpectedly: ${(error as Error).stack}\n`);
      });
    }, delayMs);
    // A pending callback never keeps the process alive: the sandbox may stop with retries left.
    timer.unref();
    this.timers.add(timer);
  }

  private async attempt(delivery: Delivery): Promise<void> {
    const { endpoint, body } = delivery;
    let status: number | null = null;
    let failure = '';
    try {
      const response = await fetch(endpoint.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'sandbox-signature': signatureHeader(endpoint.secret, body, Math.floor(Date.now() / 1000)) },
        body,
        // A redirect is an answer other than 2xx, as with real processors: retried, never followed.
        redirect: 'manual',
        signal: AbortSignal.any([this.closing.signal, AbortSignal.timeout(CALLBACK_TIMEOUT_MS)]),
      });
      status = response.status;
      // The answer's body says nothing the sandbox needs.
      await response.body?.cancel();
    } catch (error) {
      failure = (error as Error).cause instanceof Error ? ((error as Error).cause as Error).message : (error as Error).message;
    }
    if (this.closing.signal.aborted) return;
    delivery.attempts += 1;
    delivery.lastStatus = status;
    delivery.delivered = status !== null && status >= 200 && status < 300;
    if (delivery.delivered) return;
    const delayMs = this.options.retryDelaysMs[delivery.attempts - 1];
    if (delayMs !== undefined) return this.schedule(delivery, delayMs);
    const last = status === null ? `no answer (${failure})` : `HTTP ${status}`;
    process.stderr.write(
      `sandbox: gave up callback ${delivery.eventId} (${delivery.type}) to ${endpoint.url} after ${delivery.attempts} attempts; last: ${last}\n`,
    );
  }
}
