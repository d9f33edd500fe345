// The webhook HTTP client against real local servers: what it sends, what it refuses to reach, and how it
// treats receivers that redirect, stall, or answer without end.
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createWebhookSender, isPrivateAddress, mayReach, parseRetryAfter } from '../../src/modules/events/http-sender.ts';
import { MAX_STORED_RESPONSE_BYTES, outcomeClassOf, type WebhookRequest } from '../../src/modules/events/sender.ts';
import { startReceiver, type Receiver, type ReceiverHandler } from '../support/receiver.ts';
import { closedPort } from '../support/stack.ts';

const sender = createWebhookSender({ timeoutMs: 500 });
afterAll(() => sender.close());

const receivers: Receiver[] = [];
afterEach(async () => {
  await Promise.all(receivers.splice(0).map((receiver) => receiver.close()));
});

async function receiver(handler?: ReceiverHandler) {
  const started = await startReceiver(handler);
  receivers.push(started);
  return { ...started, url: `${started.url}?shop=1` };
}

const request = (url: string, overrides: Partial<WebhookRequest> = {}): WebhookRequest => ({
  url,
  body: '{"event_id":"evt_1","note":"café"}',
  headers: { 'content-type': 'application/json', 'x-webhook-signature-512': 'ab'.repeat(64) },
  privateNetworks: 'all',
  ...overrides,
});

describe('isPrivateAddress', () => {
  it.each([
    '127.0.0.1',
    '127.255.0.9',
    '10.1.2.3',
    '172.16.0.1',
    '172.31.255.255',
    '192.168.1.1',
    '169.254.169.254', // cloud metadata
    '100.64.0.1',
    '0.0.0.0',
    '224.0.0.1',
    '255.255.255.255',
    '::1',
    '::',
    'fe80::1',
    'fd12:3456::1',
    'fc00::1',
    '::ffff:127.0.0.1',
    '::ffff:10.0.0.1',
    '::ffff:a9fe:a9fe', // 169.254.169.254, IPv4-mapped in hex
    '64:ff9b::7f00:1',
    'not-an-address',
  ])('refuses %s', (address) => {
    expect(isPrivateAddress(address)).toBe(true);
  });

  it.each(['8.8.8.8', '1.1.1.1', '93.184.216.34', '172.32.0.1', '100.128.0.1', '2606:4700:4700::1111', '::ffff:8.8.8.8'])('allows %s', (address) => {
    expect(isPrivateAddress(address)).toBe(false);
  });
});

describe('mayReach with loopback-only access (the local demo)', () => {
  it.each(['127.0.0.1', '127.1.2.3', '::1', '::ffff:127.0.0.1', '::ffff:7f00:1', '8.8.8.8', '2606:4700:4700::1111'])('allows %s', (address) => {
    expect(mayReach(address, 'loopback')).toBe(true);
  });

  it.each([
    '10.0.0.1',
    '172.16.0.1',
    '192.168.1.1',
    '169.254.169.254', // cloud metadata
    '100.64.0.1',
    '0.0.0.0',
    '224.0.0.1',
    '::',
    'fc00::1',
    'fd12:3456::1',
    'fe80::1',
    '::ffff:10.0.0.1',
    '::ffff:a00:1', // 10.0.0.1, IPv4-mapped in hex
    '::ffff:a9fe:a9fe',
    '64:ff9b::a00:1', // NAT64 of 10.0.0.1
    '64:ff9b::7f00:1', // NAT64 of 127.0.0.1: not this machine's loopback
    'not-an-address',
  ])('refuses %s', (address) => {
    expect(mayReach(address, 'loopback')).toBe(false);
  });

  it('refuses every private address with no access, and allows them all with full access', () => {
    expect(mayReach('127.0.0.1', 'none')).toBe(false);
    expect(mayReach('8.8.8.8', 'none')).toBe(true);
    expect(mayReach('10.0.0.1', 'all')).toBe(true);
  });
});

describe('parseRetryAfter', () => {
  const now = Date.parse('2026-11-23T10:00:00Z');
  it.each([
    { header: '120', expected: 120_000 },
    { header: ' 0 ', expected: 0 },
    { header: 'Mon, 23 Nov 2026 10:05:00 GMT', expected: 300_000 },
    { header: 'Mon, 23 Nov 2026 09:00:00 GMT', expected: 0 },
    { header: undefined, expected: null },
    { header: '-5', expected: null },
    { header: '1.5', expected: null },
    { header: 'soon', expected: null },
  ])('reads $header as $expected', ({ header, expected }) => {
    expect(parseRetryAfter(header, now)).toBe(expected);
  });
});

describe('createWebhookSender', () => {
  it('POSTs the exact body bytes and headers, and returns the status, body and latency', async () => {
    const target = await receiver((_, reply) => reply.writeHead(201, { 'retry-after': '30' }).end('thanks'));
    const sent = request(target.url);
    const response = await sender.send(sent);
    expect(response).toMatchObject({ kind: 'response', status: 201, body: 'thanks', truncated: false, retryAfterMs: 30_000 });
    expect(response.latencyMs).toBeGreaterThan(0);
    const [received] = target.received;
    expect(received?.method).toBe('POST');
    expect(received?.url).toBe('/webhooks?shop=1');
    expect(received?.body.equals(Buffer.from(sent.body, 'utf8'))).toBe(true);
    expect(received?.headers['x-webhook-signature-512']).toBe('ab'.repeat(64));
    expect(received?.headers['content-length']).toBe(String(Buffer.byteLength(sent.body)));
  });

  it('refuses loopback addresses unless private networks are allowed, sending nothing', async () => {
    const target = await receiver();
    for (const url of [target.url, `http://localhost:${target.port}/`, `http://[::ffff:127.0.0.1]:${target.port}/`, `http://0x7f000001:${target.port}/`]) {
      const response = await sender.send(request(url, { privateNetworks: 'none' }));
      expect(response.kind, url).toBe('no_response');
      expect(response.kind === 'no_response' && response.error).toMatch(/refused to connect to .*private/);
    }
    expect(target.received).toHaveLength(0);
  });

  it('with loopback-only access, delivers to this machine however its address is written, and refuses private targets in every form', async () => {
    const target = await receiver();
    const loopbackForms = ['127.0.0.1', '2130706433', '0177.0.0.1', '0x7f.1', '[::ffff:127.0.0.1]'];
    for (const host of loopbackForms) {
      expect(await sender.send(request(`http://${host}:${target.port}/`, { privateNetworks: 'loopback' })), host).toMatchObject({
        kind: 'response',
        status: 204,
      });
    }
    expect(target.received).toHaveLength(loopbackForms.length);
    // Decimal, octal and IPv4-mapped forms of private addresses: refused before any connection is tried.
    for (const host of ['10.0.0.1', '167772161', '012.0.0.1', '[::ffff:10.0.0.1]', '192.168.0.1', '169.254.169.254', '[fc00::1]', '[fe80::1]']) {
      const response = await sender.send(request(`http://${host}/`, { privateNetworks: 'loopback' }));
      expect(response.kind === 'no_response' && response.error, host).toMatch(/^refused to connect to .*private/);
    }
  });

  it('never follows a redirect: a 3xx is the answer, and its target is never called', async () => {
    const elsewhere = await receiver();
    const target = await receiver((_, reply) => reply.writeHead(307, { location: elsewhere.url }).end());
    const response = await sender.send(request(target.url));
    expect(response).toMatchObject({ kind: 'response', status: 307 });
    expect(elsewhere.received).toHaveLength(0);
  });

  it('gives up on a receiver that does not answer within the timeout', async () => {
    const stalled = await receiver(() => undefined);
    const started = Date.now();
    const response = await sender.send(request(stalled.url));
    expect(response).toMatchObject({ kind: 'no_response', error: 'no response within 500 ms' });
    // Counted as a timeout in webhook_deliveries_total (docs/operations.md, "Metrics").
    expect(outcomeClassOf(response)).toBe('timeout');
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('reads at most MAX_STORED_RESPONSE_BYTES of a body that never ends', async () => {
    const target = await receiver((_, reply) => {
      reply.writeHead(500, { 'content-type': 'text/plain' });
      const chunk = 'x'.repeat(4096);
      const timer = setInterval(() => reply.write(chunk), 1);
      reply.on('close', () => clearInterval(timer));
    });
    const response = await sender.send(request(target.url));
    expect(response).toMatchObject({ kind: 'response', status: 500, truncated: true });
    expect(response.kind === 'response' && Buffer.byteLength(response.body)).toBe(MAX_STORED_RESPONSE_BYTES);
  });

  it('reports a refused connection', async () => {
    const response = await sender.send(request(`http://127.0.0.1:${await closedPort()}/`));
    expect(response).toMatchObject({ kind: 'no_response' });
    expect(response.kind === 'no_response' && response.error).toMatch(/ECONNREFUSED/);
    expect(outcomeClassOf(response)).toBe('network');
  });
});

describe('createWebhookSender, once the status line is in', () => {
  it('keeps a 2xx whose body stalls past the timeout, marked truncated', async () => {
    const target = await receiver((_, reply) => {
      reply.writeHead(200, { 'content-type': 'text/plain' });
      reply.write('accepted, and then nothing more');
    });
    const response = await sender.send(request(target.url));
    expect(response).toMatchObject({ kind: 'response', status: 200, body: 'accepted, and then nothing more', truncated: true });
  });

  it('keeps a 2xx whose connection is reset in the middle of the body', async () => {
    const target = await receiver((_, reply) => {
      reply.writeHead(202, { 'content-length': '1000' });
      reply.write('part');
      setTimeout(() => reply.destroy(), 20);
    });
    const response = await sender.send(request(target.url));
    expect(response).toMatchObject({ kind: 'response', status: 202, truncated: true });
  });
});
