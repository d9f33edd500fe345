// Each code of the API's error catalog (docs/api.md, "Errors") as the server SDK raises it: its class, still an
// ApiError (what the browser SDK and the dashboard catch), with the field, the HTTP status and the request id
// of the answer. A fake API answers each code as the service does, and nothing is retried (maxRetries 0).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ApiError,
  AuthenticationError,
  CardDeclinedError,
  ConflictError,
  ConnectorError,
  IdempotencyError,
  InsufficientBalanceError,
  InvalidInputError,
  InvalidStateError,
  NotFoundError,
  Payments,
  PermissionError,
  RateLimitError,
  ServiceUnavailableError,
} from '../../packages/node/src/index.ts';
import { startReceiver, type Receiver } from '../support/receiver.ts';

let fakeApi: Receiver;
beforeAll(async () => {
  fakeApi = await startReceiver();
});
afterAll(() => fakeApi?.close());

/** The SDK against the fake API, which answers every request with `status` and one error of `extensions`. */
function answeredWith(status: number, extensions: Record<string, unknown>) {
  fakeApi.handler = (_request, reply) =>
    reply
      .writeHead(status, { 'content-type': 'application/graphql-response+json', 'x-request-id': 'req_0123' })
      .end(JSON.stringify({ errors: [{ message: `Refused: ${String(extensions['code'])}.`, extensions }] }));
  return new Payments({ apiKey: 'sk_test_fake', baseUrl: `http://127.0.0.1:${fakeApi.port}`, maxRetries: 0 });
}

describe('the server SDK’s errors', () => {
  it.each([
    ['UNAUTHENTICATED', 401, AuthenticationError],
    ['FORBIDDEN', 403, PermissionError],
    ['NOT_FOUND', 404, NotFoundError],
    ['INVALID_INPUT', 400, InvalidInputError],
    ['INVALID_STATE', 409, InvalidStateError],
    ['CONFLICT', 409, ConflictError],
    ['INSUFFICIENT_BALANCE', 409, InsufficientBalanceError],
    ['IDEMPOTENCY_MISMATCH', 422, IdempotencyError],
    ['RATE_LIMITED', 429, RateLimitError],
    ['CONNECTOR_ERROR', 502, ConnectorError],
    ['PAYMENT_DECLINED', 402, CardDeclinedError],
    ['SERVICE_UNAVAILABLE', 503, ServiceUnavailableError],
    ['QUERY_TOO_COMPLEX', 400, ApiError],
    ['INTERNAL', 500, ApiError],
  ])('raise %s (HTTP %i) as %O, an ApiError with the answer’s status and request id', async (code, status, ErrorClass) => {
    const error = await answeredWith(status, { code })
      .payments.retrieve('pay_1')
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ErrorClass);
    expect(error).toBeInstanceOf(ApiError);
    expect((error as Error).constructor).toBe(ErrorClass);
    expect(error).toMatchObject({ code, name: ErrorClass.name, httpStatus: status, requestId: 'req_0123', message: `Refused: ${code}.` });
  });

  it('carry what each code’s extensions say: the field, the state, the decline, the wait', async () => {
    const invalid = await answeredWith(400, { code: 'INVALID_INPUT', field: 'amount' })
      .payments.retrieve('pay_1')
      .catch((caught: unknown) => caught);
    expect(invalid).toMatchObject({ field: 'amount' });
    const state = await answeredWith(409, { code: 'INVALID_STATE', status: 'SUCCEEDED' })
      .payments.cancel('pay_1')
      .catch((caught: unknown) => caught);
    expect(state).toMatchObject({ status: 'SUCCEEDED' });
    const declined = await answeredWith(402, {
      code: 'PAYMENT_DECLINED',
      declineCode: 'insufficient_funds',
      processorCode: '51',
      declineMessage: 'Not enough money.',
    })
      .payments.retrieve('pay_1')
      .catch((caught: unknown) => caught);
    expect(declined).toMatchObject({ declineCode: 'insufficient_funds', processorCode: '51', declineMessage: 'Not enough money.' });
    const limited = await answeredWith(429, { code: 'RATE_LIMITED', retryAfterSeconds: 12 })
      .payments.retrieve('pay_1')
      .catch((caught: unknown) => caught);
    expect(limited).toMatchObject({ retryAfterSeconds: 12 });
  });

  it('take the request id from the error’s extensions when the answer has no x-request-id header', async () => {
    fakeApi.handler = (_request, reply) =>
      reply
        .writeHead(404, { 'content-type': 'application/json' })
        .end(JSON.stringify({ errors: [{ message: 'No such payment.', extensions: { code: 'NOT_FOUND', requestId: 'req_ext' } }] }));
    const error = await new Payments({ apiKey: 'sk_test_fake', baseUrl: `http://127.0.0.1:${fakeApi.port}` }).payments
      .retrieve('pay_1')
      .catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: 'NOT_FOUND', requestId: 'req_ext' });
  });
});
