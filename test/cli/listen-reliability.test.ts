// `payments listen` (packages/node/src/cli/listen.ts, docs/cli.md) when things are slow or fail, run in-process
// against the real service: a slow local endpoint gets every event signed at its POST (within a tight tolerance)
// while the CLI reads no more than its queue holds; an event committed late with an earlier creation time during
// a dropped socket is still forwarded, once; a failed read of an event is retried, not the end of the command.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import { webhooks } from '../../packages/node/src/index.ts';
import { listen, type ListenOptions } from '../../packages/node/src/cli/listen.ts';
import { CapturePaymentDocument, ConfirmPaymentDocument, CreatePaymentDocument, CreateRefundDocument } from '../gql/graphql.ts';
import { deferredCleanups } from '../support/cleanups.ts';
import { dataOf } from '../support/graphql-client.ts';
import { startReceiver, type ReceivedRequest, type ReceiverHandler } from '../support/receiver.ts';
import { startStack, type Stack } from '../support/stack.ts';
import { tcpProxy } from '../support/tcp-proxy.ts';
import { card, shopWithReceiver, type Shop } from '../support/webhooks.ts';

let stack: Stack;
let shop: Shop;
let sql: pg.Client;
beforeAll(async () => {
  stack = await startStack();
  shop = await shopWithReceiver(stack);
  sql = new pg.Client({ connectionString: inject('databaseUrl') });
  await sql.connect();
});
afterAll(async () => {
  await sql?.end();
  await stack?.close();
});

const defer = deferredCleanups();

async function localReceiver(handler?: ReceiverHandler) {
  const receiver = await startReceiver(handler);
  defer(() => receiver.close());
  return receiver;
}

/** listen() in this process until the test ends: its printed lines, and its end (pending while it runs). */
function listening(options: Omit<ListenOptions, 'apiKey' | 'baseUrl' | 'print'>, baseUrl = stack.api.url) {
  const lines: string[] = [];
  const stop = new AbortController();
  const settled = { value: false };
  const done = listen({ apiKey: shop.secretKey, baseUrl, print: (line) => lines.push(line), ...options }, stop.signal).finally(() => (settled.value = true));
  defer(async () => {
    stop.abort();
    await done.catch(() => undefined);
  });
  const waitFor = (pattern: RegExp, timeout = 20_000) => vi.waitFor(() => expect(lines.join('\n')).toMatch(pattern), { timeout, interval: 50 });
  return { lines, done, settled, waitFor };
}

/** Authorized, captured and refunded: three events. */
async function lifecycle() {
  const created = dataOf(await shop.secret(CreatePaymentDocument, { input: { amount: 3000, currency: 'USD', captureMethod: 'MANUAL' } })).createPayment;
  dataOf(await shop.publishable(ConfirmPaymentDocument, { input: { clientSecret: created.clientSecret, paymentMethodData: card() } }));
  dataOf(await shop.secret(CapturePaymentDocument, { input: { paymentId: created.id } }));
  dataOf(await shop.secret(CreateRefundDocument, { input: { paymentId: created.id } }));
}

const webhookIdOf = (request: ReceivedRequest) => String(request.headers['webhook-id']);
const slowly =
  (delayMs: number): ReceiverHandler =>
  (_request, reply) =>
    setTimeout(() => reply.writeHead(204).end(), delayMs);

describe('payments listen, slow or failing', () => {
  it('signs each event right before its POST however long the queue, and reads no more than the queue holds', async () => {
    const local = await localReceiver(slowly(1_500));
    const cli = listening({ forwardTo: local.url, maxQueued: 2 });
    await cli.waitFor(/^ready: /m);
    await lifecycle();
    await lifecycle();
    const requests = await local.waitForRequests(6, 30_000);
    const ids = requests.map(webhookIdOf);
    expect(new Set(ids).size).toBe(6);
    for (const request of requests) {
      // 2 s: the timestamp's whole seconds and the POST itself; signed when read, the sixth would be ~7 s old.
      const now = new Date(performance.timeOrigin + request.at);
      expect(() => webhooks.verify(request.body, request.headers, shop.paymentResponseHashKey, { now, toleranceSeconds: 2 })).not.toThrow();
    }
    expect(cli.lines.join('\n')).toMatch(/^2 events waiting for .*: reading more once they are forwarded$/m);
  }, 60_000);

  it('forwards, once, an event committed while the socket was down with a creation time before the last one received', async () => {
    const proxy = await tcpProxy(Number(new URL(stack.api.url).port));
    defer(() => proxy.close());
    const local = await localReceiver();
    const cli = listening({ forwardTo: local.url }, `http://127.0.0.1:${proxy.port}`);
    await cli.waitFor(/^ready: /m);
    await lifecycle();
    const firstThree = (await local.waitForRequests(3)).map(webhookIdOf);

    proxy.cut();
    await cli.waitFor(/^connection lost .* reconnecting in 1 s from evt_/m);
    // Its process read the clock 5 s before the last event's did, and committed only now (src/modules/events/outbox.ts).
    const lateId = `evt_late${Date.now()}`;
    await sql.query(
      `INSERT INTO events (id, merchant_id, profile_id, mode, event_type, content_type, object_id, object_version, body, is_test, delivery_status, created_at)
       SELECT $1, merchant_id, profile_id, mode, event_type, content_type, object_id, object_version + 1000, body, is_test, 'DELIVERED', created_at - interval '5 seconds'
       FROM events WHERE id = $2`,
      [lateId, firstThree[2]],
    );
    await lifecycle();
    const all = (await local.waitForRequests(7, 20_000)).map(webhookIdOf);
    await new Promise((resolve) => setTimeout(resolve, 500)); // nothing more comes
    expect(local.received.map(webhookIdOf).filter((id) => id === lateId)).toHaveLength(1);
    expect(new Set(local.received.map(webhookIdOf)).size).toBe(local.received.length);
    expect(all.slice(0, 3)).toEqual(firstThree);
  }, 60_000);

  it('retries a failed read of an event (the service unreachable) with a line, and goes on', async () => {
    const proxy = await tcpProxy(Number(new URL(stack.api.url).port));
    defer(() => proxy.close());
    const local = await localReceiver((request, reply, index) => setTimeout(() => reply.writeHead(204).end(), index === 0 ? 1_500 : 0));
    const cli = listening({ forwardTo: local.url }, `http://127.0.0.1:${proxy.port}`);
    await cli.waitFor(/^ready: /m);
    await lifecycle();
    await local.waitForRequests(1);
    // The other two are read already; their headers are read after the first POST, with the service unreachable.
    proxy.refuse(true);
    proxy.cut();
    await cli.waitFor(/^reading evt_\w+ failed \(.*\); retrying in 1 s$/m);
    expect(cli.settled.value).toBe(false);
    proxy.refuse(false);
    await local.waitForRequests(3, 20_000);
    expect(new Set(local.received.map(webhookIdOf)).size).toBe(3);
    expect(cli.settled.value).toBe(false);
  }, 60_000);
});
