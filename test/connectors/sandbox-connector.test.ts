// How the sandbox connector reads what comes back over HTTP. A processor's answer is hostile input: only a
// well-formed payment is an answer, only a well-formed refusal proves nothing happened, and everything
// else leaves the outcome unknown (the payment stays pending and sync finds the truth), never failed by guess.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConnectorError, type ProcessorPayment } from '../../src/modules/connectors/port.ts';
import { SandboxConnector } from '../../src/modules/connectors/sandbox/connector.ts';
import { closedPort } from '../support/stack.ts';

interface Scripted {
  status: number;
  body: string;
  /** Answer only after this many ms. */
  delayMs?: number;
  /** Send the headers at once, the body only after this many ms. */
  bodyDelayMs?: number;
  headers?: Record<string, string>;
}

let server: Server;
let baseUrl: string;
let next: Scripted = { status: 200, body: '{}' };
/** Requests the stand-in processor got. */
let hits = 0;

beforeAll(async () => {
  // A stand-in processor that answers whatever the test scripts.
  server = createServer((request, reply) => {
    hits += 1;
    request.resume();
    const { status, body, delayMs = 0, bodyDelayMs = 0, headers = {} } = next;
    setTimeout(() => {
      if (reply.destroyed) return;
      reply.writeHead(status, { 'content-type': 'application/json', ...headers });
      reply.flushHeaders();
      setTimeout(() => reply.destroyed || reply.end(body), bodyDelayMs);
    }, delayMs);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const CONNECTOR_PERSONALITY = { name: 'sandbox', pathPrefix: '', keyPrefix: 'sk_sandbox_', webhooks: true } as const;
const connector = (url = baseUrl) => new SandboxConnector(CONNECTOR_PERSONALITY, { apiKey: 'sk_sandbox_test1234' }, { baseUrl: url, timeoutMs: 300 });

const payment = (fields: Record<string, unknown> = {}) =>
  JSON.stringify({ id: 'sbx_pay_1', status: 'succeeded', amount: 100, amount_capturable: 0, amount_captured: 100, next_action: null, error: null, ...fields });

const error = (code: string) => JSON.stringify({ error: { code, message: `the processor says ${code}` } });

async function outcome(scripted: Scripted, call: (subject: SandboxConnector) => Promise<unknown> = (subject) => subject.sync('sbx_pay_1')) {
  next = scripted;
  try {
    return { answer: await call(connector()) };
  } catch (thrown) {
    expect(thrown).toBeInstanceOf(ConnectorError);
    const { kind, outcomeUnknown, processorCode } = thrown as ConnectorError;
    return { kind, outcomeUnknown, processorCode };
  }
}

describe('answers', () => {
  it.each([
    [200, payment(), 'captured'],
    [200, payment({ status: 'processing', amount_captured: 0 }), 'processing'],
    [
      200,
      payment({
        status: 'requires_customer_action',
        amount_captured: 0,
        next_action: { type: 'display_instructions', redirect_url: 'http://x/i', instructions: { reference: 'R1', amount: 100 } },
      }),
      'requires_authentication',
    ],
    [200, payment({ status: 'succeeded', amount_captured: 40 }), 'partially_captured'],
    [200, payment({ status: 'requires_capture', amount_capturable: 100, amount_captured: 0 }), 'authorized'],
    [402, payment({ status: 'failed', amount_captured: 0, error: { code: 'card_declined', message: 'declined', retryable: false } }), 'failed'],
    [
      200,
      payment({ status: 'failed', amount_captured: 0, error: { code: 'authentication_failed', message: 'no', retryable: false } }),
      'authentication_failed',
    ],
    [200, payment({ status: 'canceled', amount_captured: 0 }), 'voided'],
  ])('HTTP %i with a payment object is an answer', async (status, body, expected) => {
    const { answer } = await outcome({ status, body });
    expect(answer).toMatchObject({ transactionId: 'sbx_pay_1', status: expected });
  });
});

describe('declines', () => {
  // The sandbox sends the decline catalog's codes: they pass through, the sandbox's own code kept beside; one outside
  // the catalog is the unknown decline. Its `retryable` is not read: the catalog decides (payments/machine/retry.ts).
  it.each([
    ['insufficient_funds', true, 'insufficient_funds'],
    ['processing_error', false, 'processing_error'],
    ['card_declined', true, 'card_declined'],
    ['stolen_card_v2', true, 'unknown_decline'],
  ])('%s (sandbox retryable: %s) reads as %s', async (code, retryable, ours) => {
    const { answer } = await outcome({ status: 402, body: payment({ status: 'failed', amount_captured: 0, error: { code, message: 'No.', retryable } }) });
    expect((answer as ProcessorPayment).error).toEqual({ code: ours, processorCode: code, message: 'No.', processorBody: { code, message: 'No.', retryable } });
  });
});

describe('refusals that prove nothing happened', () => {
  // Of the request or the resource's state ("rejected": an answer about the payment), or of our credentials
  // ("unauthorized": the merchant's connector setup, never a decline).
  it.each([
    [400, 'invalid_request', 'rejected'],
    [401, 'invalid_api_key', 'unauthorized'],
    [403, 'forbidden', 'unauthorized'],
    [404, 'resource_missing', 'rejected'],
    [409, 'invalid_state', 'rejected'],
  ])('HTTP %i with error %s: %s', async (status, code, kind) => {
    expect(await outcome({ status, body: error(code) })).toEqual({ kind, outcomeUnknown: false, processorCode: code });
  });

  it('a refused connection (nothing was sent)', async () => {
    const refused = new SandboxConnector(
      CONNECTOR_PERSONALITY,
      { apiKey: 'sk_sandbox_test1234' },
      { baseUrl: `http://127.0.0.1:${await closedPort()}`, timeoutMs: 300 },
    );
    await expect(refused.sync('sbx_pay_1')).rejects.toMatchObject({ kind: 'unreachable', outcomeUnknown: false });
  });

  it('no answer within the timeout: a timeout, its outcome unknown', async () => {
    expect(await outcome({ status: 200, body: payment(), delayMs: 600 })).toEqual({ kind: 'timeout', outcomeUnknown: true, processorCode: undefined });
  });

  it('a 2xx whose body does not all come within the timeout: unreadable, its outcome unknown', async () => {
    expect(await outcome({ status: 200, body: payment(), bodyDelayMs: 600 })).toEqual({ kind: 'bad_response', outcomeUnknown: true, processorCode: undefined });
  });

  it('a redirect is an answer, never followed: one request, its outcome unknown', async () => {
    const before = hits;
    expect(await outcome({ status: 302, body: '', headers: { location: `${baseUrl}/v1/payments/sbx_pay_2` } })).toMatchObject({ outcomeUnknown: true });
    expect(hits - before).toBe(1);
  });
});

describe('everything else: the outcome is unknown', () => {
  it.each([
    ['a 2xx body that is not JSON', { status: 200, body: '<html>ok</html>' }],
    ['a 2xx body with an unknown status', { status: 200, body: payment({ status: 'teleported' }) }],
    ['a 2xx body missing the amounts', { status: 200, body: JSON.stringify({ id: 'sbx_pay_1', status: 'succeeded' }) }],
    ['a 2xx empty body', { status: 201, body: '' }],
    ['a 402 without a payment', { status: 402, body: error('card_declined') }],
    ['a 409 idempotency conflict', { status: 409, body: error('idempotency_mismatch') }],
    ['a 408', { status: 408, body: error('timeout') }],
    ['a 429', { status: 429, body: error('rate_limited') }],
    ['a 500', { status: 500, body: error('internal_error') }],
    ['a 503 with no body', { status: 503, body: '' }],
    ['a 400 with a body that is not an error', { status: 400, body: 'bad' }],
    ['a 404 with no error body (a wrong URL, not a missing payment)', { status: 404, body: '' }],
    ['no answer within the timeout', { status: 200, body: payment(), delayMs: 600 }],
  ])('%s', async (_name, scripted) => {
    expect(await outcome(scripted)).toMatchObject({ outcomeUnknown: true });
  });
});

describe('finding a payment by reference', () => {
  it('is null only for the processor’s own “no such payment”', async () => {
    expect(await outcome({ status: 404, body: error('resource_missing') }, (subject) => subject.findByReference('att_1'))).toEqual({ answer: null });
    expect(await outcome({ status: 404, body: 'Not Found' }, (subject) => subject.findByReference('att_1'))).toMatchObject({ outcomeUnknown: true });
  });
});
