// The payments service's secrets, derived from ENCRYPTION_KEY: client secrets, card fingerprints and the
// tokens of processors' return URLs. Nothing derived here is stored: each is computed again when needed.
import { createHmac } from 'node:crypto';
import { AppError } from '../../../kernel/errors.ts';
import { secretsEqual } from '../../../kernel/api-keys.ts';
import type { ServiceContext } from '../../../platform/context.ts';

export class PaymentKeys {
  readonly #clientSecretKey: Buffer;
  readonly #fingerprintKey: Buffer;
  readonly #redirectKey: Buffer;

  constructor(private readonly context: ServiceContext) {
    // Separate keys derived from ENCRYPTION_KEY, so one purpose's values say nothing about another's.
    this.#clientSecretKey = createHmac('sha256', context.config.encryptionKey).update('client-secret').digest();
    this.#fingerprintKey = createHmac('sha256', context.config.encryptionKey).update('card-fingerprint').digest();
    this.#redirectKey = createHmac('sha256', context.config.encryptionKey).update('redirect-return').digest();
  }

  /** `<payment id>_secret_<HMAC>`: derived, so it is never stored and can be shown again to the merchant. */
  clientSecretFor(paymentId: string): string {
    return `${paymentId}_secret_${createHmac('sha256', this.#clientSecretKey).update(paymentId).digest('base64url').slice(0, 24)}`;
  }

  /** The payment a client secret belongs to, checked in constant time; UNAUTHENTICATED otherwise. */
  paymentIdOfClientSecret(clientSecret: string): string {
    const paymentId = clientSecret.split('_secret_')[0] ?? '';
    if (!paymentId || !secretsEqual(clientSecret, this.clientSecretFor(paymentId))) {
      throw new AppError('UNAUTHENTICATED', 'The client secret is not valid.', { field: 'clientSecret' });
    }
    return paymentId;
  }

  /** The merchant's own fingerprint key, so merchants cannot match cards across accounts. */
  fingerprintKey(merchantId: string): Buffer {
    return createHmac('sha256', this.#fingerprintKey).update(merchantId).digest();
  }

  /** The return URL a processor is given for one attempt: only its redirect carries the attempt's token. */
  redirectReturnUrl(paymentId: string, attemptId: string, connectorName: string): string {
    return `${this.context.publicUrl.replace(/\/$/, '')}/payments/${paymentId}/redirect/response/${connectorName}?token=${this.redirectToken(attemptId)}`;
  }

  /** Whether `token` is the one of the return URL given for `attemptId`, checked in constant time. */
  isRedirectToken(token: string, attemptId: string): boolean {
    return secretsEqual(token, this.redirectToken(attemptId));
  }

  private redirectToken(attemptId: string): string {
    return createHmac('sha256', this.#redirectKey).update(attemptId).digest('base64url');
  }
}
