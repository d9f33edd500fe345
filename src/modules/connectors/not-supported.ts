// What a connector answers for an operation its processor does not offer through the API it speaks: a refusal
// before any call (nothing happened, and no retry at the same processor would differ).
import { ConnectorError, type ProcessorPayout, type WalletSession } from './port.ts';

export const notSupported = (processor: string, what: string) =>
  new ConnectorError(`${processor}: ${what} are not supported by this connector`, 'rejected', false, { processorCode: 'unsupported_by_connector' });

/**
 * Payouts and wallet sessions, refused: Stripe's and Adyen's are other products (Connect transfers, Adyen's
 * Payouts API, their own wallet SDKs), so the registry offers neither for these connectors.
 */
export abstract class WithoutPayoutsOrSessions {
  abstract readonly name: string;

  createPayout(): Promise<ProcessorPayout> {
    return Promise.reject(notSupported(this.name, 'payouts'));
  }

  cancelPayout(): Promise<ProcessorPayout> {
    return Promise.reject(notSupported(this.name, 'payouts'));
  }

  syncPayout(): Promise<ProcessorPayout> {
    return Promise.reject(notSupported(this.name, 'payouts'));
  }

  findPayoutByReference(): Promise<ProcessorPayout | null> {
    return Promise.reject(notSupported(this.name, 'payouts'));
  }

  createSession(): Promise<WalletSession> {
    return Promise.reject(notSupported(this.name, 'wallet sessions'));
  }
}
