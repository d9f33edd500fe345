// Processors' callbacks (incoming webhooks) and registering where they go. A callback is verified with the
// connector account's webhook secret over the exact bytes received, read by the connector, and applied to
// the payment through the same state table as every other processor answer (PaymentService.applyCallback),
// so a duplicate, late or out-of-order callback changes nothing. Every verified callback is stored whole with
// what was done, for support and replay; of those that did not verify, only a bounded sample is kept.
import { randomBytes } from 'node:crypto';
import { ConnectorError, type ConnectorCallback, type IgnoredCallback } from './port.ts';
import { AppError, errorBody, notFound } from '../../kernel/errors.ts';
import { isId, newId } from '../../kernel/ids.ts';
import type { CallbackVerification, ConnectorAccount, Prisma } from '../../generated/prisma/client.ts';
import { connectorAccountsTag, type ConnectorAccountService } from './service.ts';
import type { ServiceContext } from '../../platform/context.ts';
import type { PaymentService } from '../payments/index.ts';
import type { DisputeCallbackResult, DisputeService } from '../disputes/index.ts';
import type { ApplyOutcome } from '../events/index.ts';
import type { MandateService } from '../mandates/index.ts';
import type { PayoutService } from '../payouts/index.ts';
import type { RefundService } from '../refunds/index.ts';
import type { SecretKeyPrincipal } from '../../kernel/principal.ts';

/** What the route answers the processor. */
export interface CallbackAnswer {
  status: 200 | 401 | 404 | 501 | 503;
  body: Record<string, unknown>;
  /** Sent as text instead of `body` when the processor requires its own acknowledgement (Adyen's `[accepted]`). */
  text?: string;
}

export interface IncomingCallback {
  merchantId: string;
  connectorAccountId: string;
  rawBody: Buffer;
  headers: Readonly<Record<string, string | undefined>>;
}

/** Headers that carry credentials: never stored. */
const SECRET_HEADERS = new Set(['authorization', 'cookie', 'proxy-authorization', 'api-key', 'x-api-key']);

/**
 * How many callbacks that did not verify are kept per connector account in any minute: anyone can POST to the
 * route, so those are a sample for support (a secret set wrong shows), never a log the sender can fill.
 */
export const UNVERIFIED_SAMPLE_PER_MINUTE = 10;

/** All that is kept of an unverified callback's headers (and nothing of its body), each value cut short. */
const UNVERIFIED_HEADERS = ['content-type', 'content-length', 'user-agent'];
const MAX_UNVERIFIED_HEADER_CHARS = 200;

/** The answer to a callback of one event (`outcome`) or of several (`outcomes`, in the order sent). */
const acknowledgement = (outcomes: string[]): CallbackAnswer => ({
  status: 200,
  body: outcomes.length === 1 ? { received: true, outcome: outcomes[0] } : { received: true, outcomes },
});

/** What was done with one event of a callback: the outcome its log row keeps, and the answer, or why it must come again. */
type HandledEvent = { logged: string; paymentId?: string } & ({ answered: string; sendAgain?: undefined } | { sendAgain: string; answered?: undefined });

/** Not applied yet: a processor sends again what was not answered with a 2xx. */
const sendAgain = (message: string): CallbackAnswer => ({ status: 503, body: errorBody('SERVICE_UNAVAILABLE', message) });

export class ConnectorCallbackService {
  constructor(
    private readonly context: ServiceContext,
    private readonly connectorAccounts: ConnectorAccountService,
    /** What callbacks move, each through its own state table. */
    private readonly resources: {
      payments: PaymentService;
      refunds: RefundService;
      disputes: DisputeService;
      mandates: MandateService;
      payouts: PayoutService;
    },
  ) {}

  async receive(callback: IncomingCallback): Promise<CallbackAnswer> {
    const account = await this.findAccount(callback.merchantId, callback.connectorAccountId);
    if (account === null) return { status: 404, body: errorBody('NOT_FOUND', 'No such merchant or connector account.') };
    const record = (
      verification: CallbackVerification,
      outcome: string,
      details: { callback?: ConnectorCallback | IgnoredCallback; paymentId?: string } = {},
    ) => this.store(account, callback, verification, outcome, details);

    const webhooks = this.connectorAccounts.connectorFor(account).webhooks;
    if (webhooks === undefined) {
      await record('NOT_IMPLEMENTED', 'webhooks_not_implemented');
      const message = `${account.connectorName} sends no callbacks; its payments are kept up to date by sync.`;
      return { status: 501, body: errorBody('WEBHOOKS_NOT_SUPPORTED', message) };
    }
    const acknowledged = (outcomes: string[]): CallbackAnswer => ({ ...acknowledgement(outcomes), text: webhooks.acknowledgement });
    const secret = account.webhookSecretEncrypted === null ? null : this.context.secretBox.open(account.webhookSecretEncrypted);
    if (secret === null || !webhooks.verify(callback.rawBody, callback.headers, secret, new Date())) {
      await record('FAILED', secret === null ? 'no_webhook_secret' : 'signature_mismatch');
      return { status: 401, body: errorBody('UNAUTHENTICATED', 'The callback signature does not verify.') };
    }
    const events = webhooks.parse(callback.rawBody);
    if (events.length === 0) {
      await record('VERIFIED', 'unrecognised_event');
      return acknowledged(['ignored']);
    }
    // A body may carry several events (Adyen's batches). Each is applied in the order sent and logged in a row of
    // its own, with its event id, payment and outcome (so a payment's callbacks are found by its id), every row
    // keeping the request's headers and its event's own JSON (the whole body, when it carries one event). One the processor must send again does
    // not stop the others: the whole request comes again, and what was applied changes nothing the second time
    // (each resource's state table). An unexpected error stops the loop and is answered 500, sent again the same way.
    const outcomes: string[] = [];
    let resend: string | undefined;
    for (const event of events) {
      const result = await this.handle(account.id, event);
      await record('VERIFIED', result.logged, { callback: event, paymentId: result.paymentId });
      if (result.sendAgain === undefined) outcomes.push(result.answered);
      else resend ??= result.sendAgain;
    }
    return resend === undefined ? acknowledged(outcomes) : sendAgain(resend);
  }

  /** Applies one verified event: what the log row says was done, and what the processor is answered. */
  private async handle(connectorAccountId: string, event: ConnectorCallback | IgnoredCallback): Promise<HandledEvent> {
    const { logger } = this.context;
    if (event.kind === 'ignored') {
      // A company-level webhook (Adyen) sends every account's events here: each account needs its own webhook
      // pointing at its own URL (docs/connectors/adyen.md), or the other account's events are lost to it.
      if (event.reason === 'other_merchant_account')
        logger.warn(
          { connectorAccountId, processorEventId: event.eventId, merchantAccountCode: event.processorAccount },
          'callback for another merchant account at the processor: ignored; give that account a webhook of its own',
        );
      if (event.reason === 'mode_mismatch')
        logger.warn(
          { connectorAccountId, processorEventId: event.eventId },
          "callback from the processor's other environment (test or live) than the account's",
        );
      return { logged: event.reason, answered: 'ignored' };
    }
    const result = await this.apply(connectorAccountId, event);
    if (result === null) {
      // Acknowledged all the same (as Hyperswitch does): a 4xx would make the processor retry it forever.
      logger.warn({ connectorAccountId, processorEventId: event.eventId }, `callback for a ${event.kind} this account does not have`);
      return { logged: `${event.kind}_not_found`, answered: `${event.kind}_not_found` };
    }
    const paymentId = result.paymentId ?? undefined;
    if (result.outcome === 'refused') {
      // Acknowledged (a 4xx would be sent again forever) but nothing opened: the report contradicts our records.
      logger.warn(
        { connectorAccountId, processorEventId: event.eventId, paymentId, refusal: result.refusal },
        'refused a dispute callback that contradicts its payment',
      );
      return { logged: result.refusal, paymentId, answered: 'refused' };
    }
    if (result.outcome === 'awaiting_capture') {
      // Nothing opened yet, as the payment has not recorded the capture disputed: refused now, the report would
      // be lost (a 2xx is never sent again) and a refund could later return the money a second time.
      logger.warn({ connectorAccountId, processorEventId: event.eventId, paymentId }, 'deferred a dispute callback until its payment records the capture');
      return { logged: 'dispute_awaiting_capture', paymentId, sendAgain: 'The disputed payment has not recorded its capture yet; send the callback again.' };
    }
    // Not committed (the resource kept changing under it): the processor is asked to send it again.
    if (result.outcome === 'deferred') return { logged: 'deferred', paymentId, sendAgain: `The ${event.kind} is changing; send the callback again.` };
    const outcome = result.outcome === 'committed' ? 'applied' : 'duplicate_or_stale';
    return { logged: outcome, paymentId, answered: outcome };
  }

  /** Applies a verified callback to its resource, through that resource's own state table. */
  private apply(
    connectorAccountId: string,
    callback: ConnectorCallback,
  ): Promise<{ paymentId: string | null; outcome: ApplyOutcome } | DisputeCallbackResult | null> {
    const { payments, refunds, disputes, mandates, payouts } = this.resources;
    switch (callback.kind) {
      case 'payment':
        return payments.applyCallback(connectorAccountId, callback.payment, callback.reference);
      case 'refund':
        return refunds.applyCallback(connectorAccountId, callback.refund, callback.reference);
      case 'dispute':
        return disputes.applyCallback(connectorAccountId, callback.dispute);
      case 'payout':
        return payouts.applyCallback(connectorAccountId, callback.payout, callback.reference);
      case 'payment_method':
        // Only a revocation changes anything: a token becomes active when its setup payment is paid.
        return callback.status === 'revoked'
          ? mandates.applyRevocation(connectorAccountId, callback.token)
          : Promise.resolve({ paymentId: null, outcome: 'unchanged' });
    }
  }

  /**
   * Points the processor's callbacks for the account at this service's callback route, signed with the
   * account's webhook secret (one is generated when the account has none), and records where.
   */
  async register(principal: SecretKeyPrincipal, merchantIdInPath: string, connectorAccountId: string) {
    if (merchantIdInPath !== principal.merchantId) throw new AppError('FORBIDDEN', 'The key belongs to another merchant account.');
    const account = await this.findAccount(principal.merchantId, connectorAccountId);
    if (account === null || account.mode !== principal.mode) throw notFound('connector account', connectorAccountId);
    const webhooks = this.connectorAccounts.connectorFor(account).webhooks;
    if (webhooks === undefined)
      throw new AppError('WEBHOOKS_NOT_SUPPORTED', `${account.connectorName} sends no callbacks; its payments are kept up to date by sync.`);
    const secret = this.context.secretBox.open(await this.ensureWebhookSecret(account));
    const url = `${this.context.publicUrl.replace(/\/$/, '')}/webhooks/${account.merchantId}/${account.id}`;
    let endpointId: string;
    let processorSecret: string | undefined;
    try {
      ({ endpointId, secret: processorSecret } = await webhooks.register(url, secret));
    } catch (error) {
      if (error instanceof ConnectorError) throw new AppError('CONNECTOR_ERROR', `The processor did not register the webhook: ${error.message}.`);
      throw error;
    }
    const registered = await this.context.db.connectorAccount.update({
      where: { id: account.id },
      data: {
        webhookUrl: url,
        webhookEndpointId: endpointId,
        webhookRegisteredAt: new Date(),
        ...(processorSecret === undefined ? {} : { webhookSecretEncrypted: this.context.secretBox.seal(processorSecret) }),
      },
    });
    await this.context.cache.invalidate([connectorAccountsTag(registered.merchantId)]);
    return {
      merchantConnectorId: registered.id,
      connectorName: registered.connectorName,
      webhookUrl: url,
      connectorWebhookId: endpointId,
      registeredAt: registered.webhookRegisteredAt!,
    };
  }

  /**
   * The account's sealed webhook secret, generating one first when it has none. Saved before the
   * processor hears of it, and only if still absent, so concurrent registrations all send the same one.
   */
  private async ensureWebhookSecret(account: ConnectorAccount): Promise<string> {
    if (account.webhookSecretEncrypted !== null) return account.webhookSecretEncrypted;
    const generated = this.context.secretBox.seal(`whsec_${randomBytes(32).toString('base64url')}`);
    await this.context.db.connectorAccount.updateMany({ where: { id: account.id, webhookSecretEncrypted: null }, data: { webhookSecretEncrypted: generated } });
    await this.context.cache.invalidate([connectorAccountsTag(account.merchantId)]);
    const saved = await this.context.db.connectorAccount.findUniqueOrThrow({ where: { id: account.id }, select: { webhookSecretEncrypted: true } });
    return saved.webhookSecretEncrypted!;
  }

  private findAccount(merchantId: string, connectorAccountId: string): Promise<ConnectorAccount | null> {
    // Ids from the path are hostile: only well-formed ones reach the database.
    if (!isId('merchant', merchantId) || !isId('connectorAccount', connectorAccountId)) return Promise.resolve(null);
    return this.context.db.connectorAccount.findFirst({ where: { id: connectorAccountId, merchantId } });
  }

  private async store(
    account: ConnectorAccount,
    callback: IncomingCallback,
    verification: CallbackVerification,
    outcome: string,
    details: { callback?: ConnectorCallback | IgnoredCallback; paymentId?: string },
  ): Promise<void> {
    const verified = verification === 'VERIFIED';
    const data = {
      id: newId('connectorCallback'),
      merchantId: account.merchantId,
      connectorAccountId: account.id,
      connectorName: account.connectorName,
      headers: verified ? withoutCredentials(callback.headers) : unverifiedHeaders(callback.headers),
      body: new Uint8Array(verified ? bodyOf(callback.rawBody, details.callback) : []),
      verification,
      outcome,
      // Only verified content is trusted enough to be indexed by.
      processorEventId: details.callback?.eventId.slice(0, 100) ?? null,
      processorEventType: details.callback?.eventType.slice(0, 100) ?? null,
      paymentId: details.paymentId ?? null,
    };
    try {
      if (verified) await this.context.db.connectorCallback.create({ data });
      else if (await this.storeSample(data)) this.context.logger.warn({ connectorAccountId: account.id, outcome }, 'a callback did not verify');
    } catch (error) {
      // The log must never turn a committed change into an error answer (the processor would send it again).
      this.context.logger.error({ err: error, connectorAccountId: account.id, outcome }, 'could not store a connector callback');
    }
  }

  /**
   * Stores an unverified callback unless its account's sample for the last minute is full (so its warning is
   * logged at the same bounded rate); whether it did. One callback of the account at a time, in every API
   * process, holds an advisory lock to count and store, so no two take the last place; one that finds the lock
   * taken is not stored (the sample is a sample) rather than hold a pooled connection while it waits, and a full
   * sample is seen first without it, so a flood of forged callbacks queues on nothing.
   */
  private async storeSample(data: Prisma.ConnectorCallbackUncheckedCreateInput): Promise<boolean> {
    const sampleFull = async (db: Prisma.TransactionClient) => {
      const [recent] = await db.$queryRaw<{ n: number }[]>`
        SELECT count(*)::int AS n FROM connector_callbacks
        WHERE connector_account_id = ${data.connectorAccountId} AND verification <> 'VERIFIED' AND received_at > now() - interval '1 minute'`;
      return recent!.n >= UNVERIFIED_SAMPLE_PER_MINUTE;
    };
    if (await sampleFull(this.context.db)) return false;
    return this.context.db.$transaction(async (tx) => {
      const [lock] = await tx.$queryRaw<
        { taken: boolean }[]
      >`SELECT pg_try_advisory_xact_lock(hashtext(${`connector_callbacks:${data.connectorAccountId}`})) AS taken`;
      if (!lock!.taken || (await sampleFull(tx))) return false;
      await tx.connectorCallback.create({ data });
      return true;
    });
  }
}

/** What a verified event's log row keeps: its own item of a batch, else the whole body (which it alone is). */
const bodyOf = (rawBody: Buffer, event: ConnectorCallback | IgnoredCallback | undefined): Buffer =>
  event?.itemBody === undefined ? rawBody : Buffer.from(event.itemBody, 'utf8');

const withoutCredentials = (headers: IncomingCallback['headers']) =>
  Object.fromEntries(Object.entries(headers).filter(([name, value]) => value !== undefined && !SECRET_HEADERS.has(name)));

const unverifiedHeaders = (headers: IncomingCallback['headers']) =>
  Object.fromEntries(UNVERIFIED_HEADERS.flatMap((name) => (headers[name] === undefined ? [] : [[name, headers[name].slice(0, MAX_UNVERIFIED_HEADER_CHARS)]])));
