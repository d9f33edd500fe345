// What every subscription passes through, whichever transport carries it (graphql-ws or SSE): a slot
// under the per-key and per-process bounds, reserved before anything else and released when the stream
// ends however it ends; a bounded backlog (a client that stops reading is ended with a retryable error
// instead of growing memory); and the end of every stream of a key that is revoked.
import { Repeater } from '@repeaterjs/repeater';
import type { Config } from '../config.ts';
import { drain } from '../domain/async-streams.ts';
import { AppError } from '../domain/errors.ts';
import type { Logger } from '../logger.ts';
import type { ApiKeyService } from '../services/api-keys.ts';
import type { Principal } from '../services/principal.ts';

/** Results a subscriber may leave unread before it is cut off (it reconnects and catches up with `after`). */
export const MAX_UNREAD_RESULTS = 100;

export class SubscriptionGate {
  #open = 0;
  readonly #byKey = new Map<string, Set<(error: Error) => void>>();
  readonly #timer: NodeJS.Timeout;
  #checking: Promise<void> | null = null;

  constructor(
    private readonly config: Config,
    private readonly apiKeys: ApiKeyService,
    logger: Logger,
  ) {
    this.#timer = setInterval(() => {
      this.#checking ??= this.endRevoked()
        .catch((error: unknown) => logger.warn({ err: error }, 'subscription key check failed; it runs again next interval'))
        .finally(() => {
          this.#checking = null;
        });
    }, config.SUBSCRIPTION_KEY_RECHECK_MS);
    this.#timer.unref();
  }

  /**
   * `source` as the subscriber's stream. Throws RATE_LIMITED at once when a bound is reached; the slot is
   * taken synchronously, so concurrent subscribes cannot overshoot it.
   */
  open<T>(principal: Principal, source: AsyncIterable<T>): AsyncIterable<T> {
    const keyId = 'keyId' in principal ? principal.keyId : principal.kind;
    const streams = this.#byKey.get(keyId) ?? new Set<(error: Error) => void>();
    if (this.#open >= this.config.SUBSCRIPTIONS_PER_PROCESS) throw new AppError('RATE_LIMITED', 'This server has as many subscriptions as it takes; connect again later.');
    if (streams.size >= this.config.SUBSCRIPTIONS_PER_KEY) throw new AppError('RATE_LIMITED', `At most ${this.config.SUBSCRIPTIONS_PER_KEY} subscriptions per API key on one server.`);
    this.#open += 1;
    this.#byKey.set(keyId, streams);
    let stopWith: ((error: Error) => void) | null = null;
    const end = (error: Error) => stopWith?.(error);
    streams.add(end);
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      this.#open -= 1;
      streams.delete(end);
      if (streams.size === 0 && this.#byKey.get(keyId) === streams) this.#byKey.delete(keyId);
    };
    const stream = new Repeater<T>(async (push, stop) => {
      stopWith = (error) => stop(error);
      let unread = 0;
      try {
        await drain(source[Symbol.asyncIterator](), stop, (value) => {
          if (++unread > MAX_UNREAD_RESULTS) {
            throw new AppError('RATE_LIMITED', `More than ${MAX_UNREAD_RESULTS} results were left unread; subscribe again (with \`after\`) to catch up.`);
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
    // The slot is also released by a return() that comes before the stream ever started.
    return {
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
  }

  /** Ends the streams of keys that were revoked since they started. */
  private async endRevoked(): Promise<void> {
    const keyIds = [...this.#byKey.keys()].filter((keyId) => keyId.startsWith('key_'));
    for (const keyId of await this.apiKeys.unusable(keyIds)) {
      for (const end of this.#byKey.get(keyId) ?? []) end(new AppError('UNAUTHENTICATED', 'The API key was revoked.'));
    }
  }

  close(): void {
    clearInterval(this.#timer);
  }
}
