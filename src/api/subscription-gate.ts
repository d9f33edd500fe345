// What every subscription passes through, whichever transport carries it (graphql-ws or SSE): a slot
// under the per-key (for a checkout's publishable key: per client secret and per client IP) and per-process
// bounds, reserved before anything else and released when the stream ends however it ends; a bounded
// backlog (a client that stops reading is ended with a retryable error instead of growing memory); and
// the end of every stream of a key that is revoked or expires, or of a dashboard session that ended.
import { Repeater } from '@repeaterjs/repeater';
import type { Config } from '../platform/config.ts';
import { drain, pushSideOf, withPush, type PushStream } from '../kernel/async-streams.ts';
import { AppError } from '../kernel/errors.ts';
import type { Logger } from '../platform/logger.ts';
import { gaugeOnScrape, type Metrics } from '../platform/http/metrics.ts';
import type { ApiKeyService } from '../modules/merchants/index.ts';
import type { TeamService } from '../modules/team/index.ts';
import type { Principal } from '../kernel/principal.ts';

/** Results a subscriber may leave unread before it is cut off (it reconnects and catches up with `after`). */
export const MAX_UNREAD_RESULTS = 100;

/** Counts a subscriber ended for its backlog, and the error it ends with. */
export function backlogExceeded(metrics: Metrics, what: string): AppError {
  metrics.subscriptionsDropped.labels('backlog').inc();
  return new AppError('RATE_LIMITED', `${what}; subscribe again (with \`after\`) to catch up.`);
}

/** The customer behind a publishable key's subscription: the payment its client secret opens, and its IP. */
export interface Payer {
  paymentId: string;
  clientIp: string;
}

/** A count of running streams a subscription takes part in, and how many it may hold. */
interface Slot {
  name: string;
  bound: number;
  refusal: string;
}

export class SubscriptionGate {
  #open = 0;
  /** The running streams by slot name (a key id, `payment:…`, `ip:…`), each with the function that ends it. */
  readonly #bySlot = new Map<string, Set<(error: Error) => void>>();
  readonly #timer: NodeJS.Timeout;
  /** Whether a revoked-key check is running: a slow one is not overlapped by the next interval's. */
  #checking = false;

  constructor(
    private readonly config: Config,
    private readonly credentials: { apiKeys: Pick<ApiKeyService, 'unusable'>; team: Pick<TeamService, 'unusable'> },
    logger: Logger,
    private readonly metrics: Metrics,
  ) {
    gaugeOnScrape(metrics, { name: 'graphql_subscriptions_open', help: 'Subscription streams open in this process (both transports).' }, (gauge) =>
      gauge.set(this.#open),
    );
    this.#timer = setInterval(() => {
      if (this.#checking) return;
      this.#checking = true;
      void this.endRevoked()
        .catch((error: unknown) => logger.warn({ err: error }, 'subscription key check failed; it runs again next interval'))
        .finally(() => {
          this.#checking = false;
        });
    }, config.SUBSCRIPTION_KEY_RECHECK_MS);
    this.#timer.unref();
  }

  /**
   * `source` as the subscriber's stream. Throws RATE_LIMITED at once when a bound is reached; the slots are
   * taken synchronously, so concurrent subscribes cannot overshoot them.
   */
  open<T>(principal: Principal, source: PushStream<T>, payer?: Payer): PushStream<T> {
    if (this.#open >= this.config.SUBSCRIPTIONS_PER_PROCESS) {
      this.metrics.subscriptionsDropped.labels('refused').inc();
      throw new AppError('RATE_LIMITED', 'This server has as many subscriptions as it takes; connect again later.');
    }
    const slots = this.slotsOf(principal, payer);
    const held = slots.map((slot) => this.#bySlot.get(slot.name) ?? new Set<(error: Error) => void>());
    const full = slots.find((slot, index) => held[index]!.size >= slot.bound);
    if (full) {
      this.metrics.subscriptionsDropped.labels('refused').inc();
      throw new AppError('RATE_LIMITED', full.refusal);
    }
    this.#open += 1;
    let stopWith: ((error: Error) => void) | null = null;
    /** An end (revocation) that came before the stream started: it ends the stream as soon as it does. */
    let endedEarly: Error | null = null;
    const end = (error: Error) => (stopWith === null ? (endedEarly = error) : stopWith(error));
    slots.forEach((slot, index) => {
      this.#bySlot.set(slot.name, held[index]!);
      held[index]!.add(end);
    });
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      this.#open -= 1;
      slots.forEach((slot, index) => {
        const streams = held[index]!;
        streams.delete(end);
        if (streams.size === 0 && this.#bySlot.get(slot.name) === streams) this.#bySlot.delete(slot.name);
      });
    };
    const stream = new Repeater<T>(async (push, stop) => {
      stopWith = (error) => stop(error);
      if (endedEarly !== null) stop(endedEarly);
      let unread = 0;
      try {
        await drain(source[Symbol.asyncIterator](), stop, (value) => {
          if (++unread > MAX_UNREAD_RESULTS) {
            throw backlogExceeded(this.metrics, `More than ${MAX_UNREAD_RESULTS} results were left unread`);
          }
          // Not awaited: the source is drained at once, so only this bounded count can grow.
          void push(value).then(() => {
            unread -= 1;
          });
        });
        stop();
      } catch (error) {
        stop(error as Error);
      } finally {
        release();
      }
    });
    // The slots are also released by a return() that comes before the stream ever started.
    const iterated: AsyncIterable<T> = {
      [Symbol.asyncIterator]: () => ({
        next: () => stream.next(),
        return: (value?: unknown) => {
          release();
          return stream.return(value as T);
        },
        throw: (error?: unknown) => {
          release();
          return stream.throw(error);
        },
      }),
    };
    // Pushed instead (a fan-out reader, docs/subscriptions.md): the same slots and revocation; the reader
    // bounds its own backlog, where the values wait.
    const attachSource = pushSideOf<T>(source);
    if (attachSource === undefined) return iterated;
    return withPush(iterated, (sink) => {
      if (released) {
        sink.end();
        return () => {};
      }
      let detachSource: (() => void) | null = null;
      const detach = () => {
        detachSource?.();
        release();
      };
      stopWith = (error) => {
        detach();
        sink.end(error);
      };
      detachSource = attachSource({
        next: (value) => sink.next(value),
        end: (error) => {
          release();
          sink.end(error);
        },
      });
      if (endedEarly !== null) stopWith(endedEarly);
      return detach;
    });
  }

  /**
   * What a subscription counts against. A secret key's count per key. Every checkout of a merchant shares
   * its publishable key, so a payer's count per client secret and per client IP instead (one payer cannot
   * use up the others' slots); they are kept under the key too, unbounded, to end them if it is revoked.
   */
  private slotsOf(principal: Principal, payer: Payer | undefined): Slot[] {
    const keyId = 'keyId' in principal ? principal.keyId : principal.kind;
    const perKey = this.config.SUBSCRIPTIONS_PER_KEY;
    if (principal.kind !== 'publishableKey' || payer === undefined)
      return [{ name: keyId, bound: perKey, refusal: `At most ${perKey} subscriptions per API key on one server.` }];
    const { SUBSCRIPTIONS_PER_CLIENT_SECRET: perSecret, SUBSCRIPTIONS_PER_CLIENT_IP: perIp } = this.config;
    return [
      { name: keyId, bound: Infinity, refusal: '' },
      { name: `payment:${payer.paymentId}`, bound: perSecret, refusal: `At most ${perSecret} subscriptions per client secret on one server.` },
      { name: `ip:${payer.clientIp}`, bound: perIp, refusal: `At most ${perIp} subscriptions with a publishable key per client address on one server.` },
    ];
  }

  /** Ends the streams of keys that were revoked or expired, and of dashboard sessions that ended (logout, expiry, removal), since they started. */
  private async endRevoked(): Promise<void> {
    const held = [...this.#bySlot.keys()];
    const keyIds = held.filter((id) => id.startsWith('key_'));
    const sessionIds = held.filter((id) => id.startsWith('ses_'));
    this.end(await this.credentials.apiKeys.unusable(keyIds), 'The API key was revoked or has expired.');
    this.end(await this.credentials.team.unusable(sessionIds), 'The dashboard session has ended; sign in again.');
  }

  private end(slotNames: Iterable<string>, reason: string): void {
    for (const name of slotNames) {
      for (const end of this.#bySlot.get(name) ?? []) {
        this.metrics.subscriptionsDropped.labels('revoked').inc();
        end(new AppError('UNAUTHENTICATED', reason));
      }
    }
  }

  close(): void {
    clearInterval(this.#timer);
  }
}
