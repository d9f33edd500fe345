// @payments-orchestrator/node: the server SDK (docs/sdk-node.md).
//
//   const payments = new Payments({ apiKey: process.env.PAYMENTS_API_KEY!, baseUrl: 'https://pay.example.com' });
//   const payment = await payments.payments.create({ amount: 1999, currency: 'EUR' });
//   for await (const update of payments.payments.updates(payment.id)) if (update.status === 'SUCCEEDED') break;
export { Payments, DEFAULT_MAX_RETRIES, DEFAULT_TIMEOUT_MS, type PaymentsOptions } from './client.ts';
export {
  ApiError,
  AuthenticationError,
  CardDeclinedError,
  ConflictError,
  ConnectionError,
  ConnectorError,
  ERROR_CLASSES,
  IdempotencyError,
  InsufficientBalanceError,
  InvalidInputError,
  InvalidStateError,
  NotFoundError,
  PermissionError,
  RateLimitError,
  ServiceUnavailableError,
  type RequestOptions,
} from '@payments-orchestrator/client-core';
export type * from './types.ts';
export * from './webhooks/index.ts';
