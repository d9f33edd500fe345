// `payments listen` as a developer runs it (its own process, docs/cli.md) against the real service: each event
// of the merchant's profile reaches a local receiver signed exactly as the real delivery of the same event is,
// which the server SDK's webhooks.verify accepts with the profile's key; --events filters, --after replays,
// a dropped socket resumes where it was, and a live key is refused.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { webhooks } from '../../packages/node/src/index.ts';
import {
  CapturePaymentDocument,
  ConfirmPaymentDocument,
  CreateApiKeyDocument,
  CreatePaymentDocument,
  CreateRefundDocument,
  EventDeliveryHeadersDocument,
  EventsDocument,
} from '../gql/graphql.ts';
import { runCli, type CliProcess } from '../support/cli.ts';
import { deferredCleanups } from '../support/cleanups.ts';
import { dataOf, errorOf } from '../support/graphql-client.ts';
import { startReceiver, type ReceivedRequest, type Receiver } from '../support/receiver.ts';
import { addConnectorAccount, closedPort, startStack, type Stack } from '../support/stack.ts';
import { tcpProxy } from '../support/tcp-proxy.ts';
import { card, paidPayment, shopWithReceiver, type Shop } from '../support/webhooks.ts';

let stack: Stack;
/** Its profile's webhook URL is a receiver of its own: the real deliveries, to compare with. */
let shop: Shop;
beforeAll(async () => {
  stack = await startStack();
  shop = await shopWithReceiver(stack);
});
afterAll(() => stack?.close());

const defer = deferredCleanups();

async function localReceiver(): Promise<Receiver> {
  const receiver = await startReceiver();
  defer(() => receiver.close());
  return receiver;
}

function listening(args: string[], baseUrl = stack.api.url): CliProcess {
  const cli = runCli(['listen', ...args], { PAYMENTS_API_KEY: shop.secretKey, PAYMENTS_BASE_URL: baseUrl });
  defer(() => cli.stop());
  return cli;
}

/** Authorized, captured and refunded: payment_authorized, payment_succeeded, refund_succeeded, in that order. */
async function lifecycle() {
  const created = dataOf(await shop.secret(CreatePaymentDocument, { input: { amount: 3000, currency: 'USD', captureMethod: 'MANUAL' } })).createPayment;
  dataOf(await shop.publishable(ConfirmPaymentDocument, { input: { clientSecret: created.clientSecret, paymentMethodData: card() } }));
  dataOf(await shop.secret(CapturePaymentDocument, { input: { paymentId: created.id } }));
  const refund = dataOf(await shop.secret(CreateRefundDocument, { input: { paymentId: created.id } })).createRefund;
  return { paymentId: created.id, refundId: refund.id };
}

const LIFECYCLE_TYPES = ['payment_authorized', 'payment_succeeded', 'refund_succeeded'];

const bodyOf = (request: ReceivedRequest) => JSON.parse(request.body.toString('utf8')) as { event_id: string; event_type: string };

/** The merchant's events, oldest first (the order the subscription replays them in). */
const allEvents = async () =>
  dataOf(await shop.secret(EventsDocument, { first: 100 }))
    .events.edges.map((edge) => edge.node)
    .reverse();

describe('payments listen', () => {
  it('forwards a live payment’s events in order, each signed as its real delivery is, and prints a line for each', async () => {
    await paidPayment(shop); // before listening: not forwarded
    const local = await localReceiver();
    const cli = listening(['--forward-to', local.url]);
    await cli.waitFor(/^ready: /m);
    const { paymentId, refundId } = await lifecycle();
    const forwarded = await local.waitForRequests(3);
    await new Promise((resolve) => setTimeout(resolve, 300)); // nothing more comes
    expect(forwarded.map((request) => bodyOf(request).event_type)).toEqual(LIFECYCLE_TYPES);
    for (const request of forwarded) {
      const event = webhooks.verify(request.body, request.headers, shop.paymentResponseHashKey);
      expect(event.event_type).toBe(bodyOf(request).event_type);
      const objectId =
        (event.content.object as { payment_id?: string; refund_id?: string }).refund_id ?? (event.content.object as { payment_id: string }).payment_id;
      expect([paymentId, refundId]).toContain(objectId);
      // The real delivery of the same event: the same bytes and headers (the Standard Webhooks pair signs its own send time).
      const delivery = await vi.waitFor(() => {
        const found = shop.receiver.received.find((candidate) => bodyOf(candidate).event_id === event.event_id);
        expect(found).toBeDefined();
        return found!;
      });
      expect(request.body.equals(delivery.body)).toBe(true);
      expect(Object.keys(request.headers).sort()).toEqual(Object.keys(delivery.headers).sort());
      for (const name of ['content-type', 'user-agent', 'content-length', 'x-webhook-signature-512', 'webhook-id']) {
        expect(request.headers[name], name).toBe(delivery.headers[name]);
      }
      expect(() => webhooks.verify(delivery.body, delivery.headers, shop.paymentResponseHashKey)).not.toThrow();
    }
    const lines = cli.lines().filter((line) => !line.startsWith('ready: '));
    expect(lines).toHaveLength(3);
    lines.forEach((line, index) => {
      const { event_type, event_id } = bodyOf(forwarded[index]!);
      expect(line).toMatch(new RegExp(`^\\d{4}-\\d\\d-\\d\\dT\\S+Z  ${event_type}  ${event_id}  204  \\d+ms$`));
    });
  });

  it('--events forwards only the types named', async () => {
    const local = await localReceiver();
    const cli = listening(['--forward-to', local.url, '--events', 'payment_authorized,refund_succeeded']);
    await cli.waitFor(/^ready: .*\(payment_authorized, refund_succeeded\)/m);
    await lifecycle();
    // payment_succeeded comes between the two: had it been forwarded, it would be here.
    const forwarded = await local.waitForRequests(2);
    expect(forwarded.map((request) => bodyOf(request).event_type)).toEqual(['payment_authorized', 'refund_succeeded']);
  });

  it('--after replays the events since that one, then goes on live; a dropped socket resumes without gap or repeat', async () => {
    await lifecycle();
    await lifecycle();
    const before = await allEvents();
    expect(before.length).toBeGreaterThanOrEqual(6);
    const replayed = before.slice(2).map((event) => event.id);
    const proxy = await tcpProxy(Number(new URL(stack.api.url).port));
    defer(() => proxy.close());
    const local = await localReceiver();
    const cli = listening(['--forward-to', local.url, '--after', before[1]!.id], `http://127.0.0.1:${proxy.port}`);
    await local.waitForRequests(replayed.length);
    expect(local.received.map((request) => bodyOf(request).event_id)).toEqual(replayed);

    proxy.cut();
    await cli.waitFor(/^connection lost .* reconnecting in 1 s from evt_/m);
    const { paymentId } = await lifecycle(); // while the socket is down
    const all = await local.waitForRequests(replayed.length + 3, 20_000);
    const ids = all.map((request) => bodyOf(request).event_id);
    expect(new Set(ids).size).toBe(ids.length);
    const after = (await allEvents()).map((event) => event.id);
    expect(ids).toEqual(after.slice(2));
    expect(all.slice(-3).map((request) => bodyOf(request).event_type)).toEqual(LIFECYCLE_TYPES);
    expect(JSON.stringify(bodyOf(all.at(-2)!))).toContain(paymentId);
  });

  it('prints the local endpoint’s connection error when nothing listens there', async () => {
    await paidPayment(shop);
    await paidPayment(shop);
    const before = await allEvents();
    const cli = listening(['--forward-to', `http://127.0.0.1:${await closedPort()}/webhooks`, '--after', before.at(-2)!.id]);
    const [line] = await cli.waitFor(new RegExp(`^\\S+  \\w+  ${before.at(-1)!.id}  error ECONNREFUSED  \\d+ms$`, 'm'));
    expect(line).toBeDefined();
  });

  it('has the service sign test-mode events only: Event.deliveryHeaders of a live event is FORBIDDEN', async () => {
    const { key } = dataOf(
      await stack.api.admin(CreateApiKeyDocument, { input: { name: 'live', type: 'SECRET', mode: 'LIVE', merchantId: shop.merchantId } }),
    ).createApiKey;
    const live = { secret: stack.api.as(key) };
    await addConnectorAccount(stack, live, 'sandbox');
    const created = dataOf(await live.secret(CreatePaymentDocument, { input: { amount: 1000, currency: 'USD' } })).createPayment;
    dataOf(await live.secret(ConfirmPaymentDocument, { input: { clientSecret: created.clientSecret, paymentMethodData: card() } }));
    const [event] = dataOf(await live.secret(EventsDocument, { objectId: created.id })).events.edges.map((edge) => edge.node);
    expect(event?.mode).toBe('LIVE');
    const refused = errorOf(await live.secret(EventDeliveryHeadersDocument, { id: event!.id }), 'FORBIDDEN');
    expect(refused.message).toMatch(/test-mode events only/);
    const testEvent = (await allEvents()).at(-1)!;
    const { deliveryHeaders } = dataOf(await shop.secret(EventDeliveryHeadersDocument, { id: testEvent.id })).event;
    expect(deliveryHeaders.map((header) => header.name).sort()).toEqual(
      ['content-type', 'user-agent', 'webhook-id', 'webhook-signature', 'webhook-timestamp', 'x-webhook-signature-512'].sort(),
    );
  });

  it('refuses a live key in one line, before connecting', async () => {
    const cli = runCli(['listen', '--forward-to', 'http://127.0.0.1:9/webhooks', '--api-key', `sk_live_${'a'.repeat(32)}`], {
      PAYMENTS_BASE_URL: stack.api.url,
    });
    expect(await cli.exited).toBe(3);
    expect(cli.output.stdout).toBe('');
    expect(cli.output.stderr).toBe('payments: refused: that is a live key; payments listen and trigger take a test secret key (sk_test_…) only\n');
  });
});
