// Disputes over real HTTP, as the service's connector uses them: the dispute test card's dispute opening by
// itself after the dispute delay (by timer and signed callback, or by the first read after it), the test
// helper that opens one on any succeeded payment, the merchant's accept and evidence, the network's decisions
// (test helpers, with callbacks), every move of the transition table allowed or refused, idempotency,
// isolation between keys and personalities, and every refusal naming its field.
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { loadSandboxConfig } from '../../sandbox/src/config.ts';
import { DISPUTE_ACTIONS, MAX_EVIDENCE_BODY_BYTES, type DisputeAction } from '../../sandbox/src/disputes.ts';
import { MAX_BODY_BYTES } from '../../sandbox/src/requests.ts';
import { startSandbox, startSandboxFromConfig, type Sandbox } from '../../sandbox/src/server.ts';
import {
  METHOD_DETAILS,
  atFrozenTime,
  expectRefused,
  newFauxpayKey,
  newKey,
  paymentInput,
  sleep,
  useCallbackReceivers,
  useSandbox,
  type Body,
  type Callback,
} from './harness.ts';

/** Short, so the dispute test card's dispute opens within the test; the frozen-clock tests move Date instead. */
const DISPUTE_OPEN_MS = 50;
const { call, create, createWith, capture, cancel, browser, challenged, paid } = useSandbox({ disputeOpenMs: DISPUTE_OPEN_MS });

/** Long enough for a callback that would be sent to have arrived, and for a 50 ms dispute delay to have passed. */
const QUIET_MS = 200;
const { registered, onlyCallback, deliveries: deliveriesOf } = useCallbackReceivers(call, 'whsec_sandbox_disputes_0123456789', QUIET_MS);

afterEach(() => {
  vi.useRealTimers();
});

const AMOUNT = 1234;
const DISPUTE_CARD = '4000000000000259';
const EVIDENCE_WINDOW_S = 7 * 24 * 60 * 60;
const DISPUTE_KEYS = ['id', 'object', 'payment', 'amount', 'currency', 'status', 'reason', 'evidence_due_by', 'evidence', 'created', 'updated_ms'];
const EVIDENCE = { product_description: 'A blue mug, delivered on 2026-11-02.', customer_communication: 'The customer confirmed receipt.' };

// Written from the contract, not derived from DISPUTE_ACTIONS, so a wrong row in the table fails here.
const STATUSES = ['needs_response', 'accepted', 'under_review', 'won', 'lost', 'expired', 'cancelled'];
const EXPECTED_ACTIONS = {
  accept: { by: 'merchant', from: ['needs_response'], to: 'accepted', done: 'accepted' },
  evidence: { by: 'merchant', from: ['needs_response'], to: 'under_review', done: 'challenged' },
  win: { by: 'network', from: ['under_review'], to: 'won', done: 'won' },
  lose: { by: 'network', from: ['under_review'], to: 'lost', done: 'lost' },
  expire: { by: 'network', from: ['needs_response'], to: 'expired', done: 'expired' },
  cancel: { by: 'network', from: ['needs_response', 'under_review'], to: 'cancelled', done: 'cancelled' },
};
const EXPECTED_TERMINAL = ['accepted', 'won', 'lost', 'expired', 'cancelled'];

type Headers = Record<string, string>;

const openDispute = (key: string, paymentId: string, body: Record<string, unknown> = {}, headers: Headers = {}, prefix = '/v1') =>
  call('POST', `${prefix}/test_helpers/payments/${paymentId}/dispute`, { key, body, headers });
const getDispute = (key: string, id: string, prefix = '/v1') => call('GET', `${prefix}/disputes/${id}`, { key });
const listDisputes = (key: string, paymentId: string, prefix = '/v1', base?: string) => call('GET', `${prefix}/disputes?payment=${paymentId}`, { key, base });
/** The disputes of `paymentId` as the list answers them, newest first. */
const disputesOf = async (key: string, paymentId: string, prefix = '/v1', base?: string): Promise<Body[]> => {
  const answer = await listDisputes(key, paymentId, prefix, base);
  expect(answer.status, answer.text).toBe(200);
  return (JSON.parse(answer.text) as { data: Body[] }).data;
};

/** Where an action is: the merchant's under `disputes`, the network's (the test helpers) under `test_helpers/disputes`. */
const actionPath = (id: string, action: DisputeAction, prefix = '/v1') =>
  `${prefix}/${DISPUTE_ACTIONS[action].by === 'network' ? 'test_helpers/' : ''}disputes/${id}/${action}`;
/** The body each action takes: evidence for `evidence`, nothing for the others. */
const bodyOf = (action: DisputeAction) => (action === 'evidence' ? { evidence: EVIDENCE } : {});
const act = (key: string, id: string, action: DisputeAction, body: unknown = bodyOf(action), headers: Headers = {}, prefix = '/v1') =>
  call('POST', actionPath(id, action, prefix), { key, body, headers });

/** The actions that lead from needs_response to `status` along DISPUTE_ACTIONS (the shortest way). */
function pathTo(status: string): DisputeAction[] {
  const ways = new Map<string, DisputeAction[]>([['needs_response', []]]);
  for (const [reached, way] of ways) {
    for (const [action, { from, to }] of Object.entries(DISPUTE_ACTIONS) as [DisputeAction, (typeof DISPUTE_ACTIONS)[DisputeAction]][]) {
      if ((from as readonly string[]).includes(reached) && !ways.has(to)) ways.set(to, [...way, action]);
    }
  }
  const way = ways.get(status);
  if (way === undefined) throw new Error(`No action leads to ${status}.`);
  return way;
}

/** A dispute of a new succeeded payment of `key`, opened by the test helper and moved to `status`. */
async function disputeIn(key: string, status: string): Promise<Body> {
  const payment = await paid(key);
  let dispute = (await openDispute(key, payment.id)).body;
  for (const action of pathTo(status)) {
    const moved = await act(key, dispute.id, action);
    expect(moved.status, moved.text).toBe(200);
    dispute = moved.body;
  }
  expect(dispute.status).toBe(status);
  return dispute;
}

describe('the transition table', () => {
  it('is the contract: who takes each action, from which statuses, to which one', () => {
    expect(DISPUTE_ACTIONS).toEqual(EXPECTED_ACTIONS);
    const final = STATUSES.filter((status) => Object.values(DISPUTE_ACTIONS).every(({ from }) => !(from as readonly string[]).includes(status)));
    expect(final).toEqual(EXPECTED_TERMINAL);
    expect(new Set(Object.values(DISPUTE_ACTIONS).flatMap(({ from, to }) => [...from, to]))).toEqual(new Set(STATUSES));
  });

  const moves = STATUSES.flatMap((status) =>
    (Object.keys(DISPUTE_ACTIONS) as DisputeAction[]).map((action) => {
      const { from, to, done, by } = DISPUTE_ACTIONS[action];
      return { status, action, allowed: (from as readonly string[]).includes(status), to, done, by };
    }),
  );

  // The answer tells either way; the network's moves (the test helpers) send a callback too, the merchant's do not.
  it.each(moves.filter((move) => move.allowed))('$status --$action ($by)--> $to', async ({ status, action, to, by }) => {
    const { key } = await registered();
    const dispute = await disputeIn(key, status);
    const before = (await deliveriesOf(key)).length;
    const moved = await act(key, dispute.id, action);
    expect(moved.status, moved.text).toBe(200);
    expect(moved.body).toMatchObject({ id: dispute.id, status: to, amount: dispute.amount, reason: dispute.reason });
    expect(moved.body.updated_ms).toBeGreaterThan(dispute.updated_ms);
    expect((await getDispute(key, dispute.id)).text).toBe(moved.text);
    const deliveries = await deliveriesOf(key);
    if (by === 'network') {
      expect(deliveries).toHaveLength(before + 1);
      expect(deliveries[0]).toMatchObject({ type: `dispute.${to}`, object_id: dispute.id, payment_id: dispute.payment });
    } else {
      expect(deliveries).toHaveLength(before);
    }
  });

  it.each(moves.filter((move) => !move.allowed))('$status --$action--> refused with 409 invalid_state, nothing changed', async ({ status, action, done }) => {
    const { key } = await registered();
    const dispute = await disputeIn(key, status);
    const fetched = await getDispute(key, dispute.id);
    const before = (await deliveriesOf(key)).length;
    expectRefused(await act(key, dispute.id, action), 409, 'invalid_state', `This dispute cannot be ${done}: its status is ${status}.`);
    expect((await getDispute(key, dispute.id)).text).toBe(fetched.text);
    expect(await deliveriesOf(key)).toHaveLength(before);
  });
});

describe('the dispute test card', () => {
  it('opens a fraudulent dispute for all that was captured, the dispute delay after the payment succeeded, by timer and signed callback', async () => {
    const { key, receiver } = await registered();
    const payment = await paid(key, DISPUTE_CARD);
    // No read at all: the timer opens it and the callback tells.
    const event = await onlyCallback(key, receiver, 'dispute.needs_response');
    const dispute = event.data.object;
    expect(Object.keys(dispute)).toEqual(DISPUTE_KEYS);
    expect(dispute).toMatchObject({
      object: 'dispute',
      payment: payment.id,
      amount: AMOUNT,
      currency: 'usd',
      status: 'needs_response',
      reason: 'fraudulent',
      evidence: null,
    });
    expect(dispute.id).toMatch(/^sbx_dp_[A-Za-z0-9]{24}$/);
    expect(dispute.updated_ms).toBeGreaterThanOrEqual(payment.updated_ms + DISPUTE_OPEN_MS);
    expect(dispute.created).toBe(Math.floor(dispute.updated_ms / 1000));
    expect(dispute.evidence_due_by).toBe(dispute.created + EVIDENCE_WINDOW_S);
    expect(await disputesOf(key, payment.id)).toEqual([dispute]);
    const [delivery] = await deliveriesOf(key);
    expect(delivery).toMatchObject({ event_id: event.id, type: 'dispute.needs_response', object_id: dispute.id, payment_id: payment.id, delivered: true });
    // The payment itself is unchanged.
    expect((await call('GET', `/v1/payments/${payment.id}`, { key })).body).toMatchObject({ status: 'succeeded', amount_captured: AMOUNT });
  });

  /** The dispute test card's payment brought to succeeded in each way but automatic capture, and what it then captured. */
  const SUCCEEDING_LATER: Record<string, { start: (key: string) => Promise<Body>; succeed: (key: string, id: string) => Promise<unknown>; captured: number }> =
    {
      'a partial manual capture': {
        start: async (key) => (await create(key, { capture_method: 'manual' }, { number: DISPUTE_CARD })).body,
        succeed: (key, id) => capture(key, id, { amount_to_capture: 600 }),
        captured: 600,
      },
      'a completed 3D Secure challenge': {
        start: (key) => challenged(key, { three_ds: 'required' }, { number: DISPUTE_CARD }),
        succeed: async (_key, id) => {
          await browser('GET', `/challenge/${id}`);
          return browser('POST', `/challenge/${id}/complete`);
        },
        captured: AMOUNT,
      },
    };

  it.each(Object.keys(SUCCEEDING_LATER))('opens only after %s, for what was captured', async (way) => {
    const { start, succeed, captured } = SUCCEEDING_LATER[way]!;
    const { key, receiver } = await registered();
    const payment = await start(key);
    await sleep(QUIET_MS);
    expect(await disputesOf(key, payment.id)).toEqual([]);
    await succeed(key, payment.id);
    const types = () => (receiver.bodies() as unknown as Callback[]).map(({ type }) => type);
    await vi.waitFor(() => expect(types()).toContain('dispute.needs_response'), { timeout: 3000, interval: 20 });
    const [dispute] = await disputesOf(key, payment.id);
    expect(dispute).toMatchObject({ amount: captured, reason: 'fraudulent', status: 'needs_response' });
  });

  it('is never disputed by itself before it succeeds, nor is any other card', async () => {
    const key = newKey();
    const canceled = (await create(key, { capture_method: 'manual' }, { number: DISPUTE_CARD })).body;
    expect((await cancel(key, canceled.id)).body.status).toBe('canceled');
    const other = await paid(key);
    await sleep(QUIET_MS);
    expect(await disputesOf(key, canceled.id)).toEqual([]);
    expect(await disputesOf(key, other.id)).toEqual([]);
  });
});

describe('the dispute test card, read after the delay', () => {
  /** A delay no timer reaches during a test, so only a read can open the dispute. */
  const SLOW_OPEN_MS = 60_000;
  let slow: Sandbox;
  beforeAll(async () => {
    slow = await startSandbox({ port: 0, disputeOpenMs: SLOW_OPEN_MS });
  });
  afterAll(() => slow.close());

  const createBody = paymentInput({}, { number: DISPUTE_CARD });
  const createHeaders = { 'idempotency-key': 'pay_disputed' };
  const READS: Record<string, (key: string, paymentId: string) => Promise<unknown>> = {
    'GET of the payment': (key, paymentId) => call('GET', `/v1/payments/${paymentId}`, { key, base: slow.url }),
    'GET of its disputes': (key, paymentId) => call('GET', `/v1/disputes?payment=${paymentId}`, { key, base: slow.url }),
    'idempotent replay of its create': (key) => call('POST', '/v1/payments', { key, base: slow.url, body: createBody, headers: createHeaders }),
  };

  it.each(Object.keys(READS))('the first read after the delay (%s) opens it before its timer, once, with its callback', async (read) => {
    const { key, receiver } = await registered(slow.url);
    let paymentId = '';
    await atFrozenTime(async (at) => {
      paymentId = (await call('POST', '/v1/payments', { key, base: slow.url, body: createBody, headers: createHeaders })).body.id;
      at(SLOW_OPEN_MS - 1);
      await READS[read]!(key, paymentId);
      expect(await deliveriesOf(key, slow.url)).toEqual([]);
      at(SLOW_OPEN_MS);
      await READS[read]!(key, paymentId);
      // Deliveries are recorded as the change happens: the read itself opened the dispute.
      expect((await deliveriesOf(key, slow.url)).map(({ type }) => type)).toEqual(['dispute.needs_response']);
      expect(await disputesOf(key, paymentId, '/v1', slow.url)).toHaveLength(1);
    });
    vi.useRealTimers();
    // Sent while the clock was moved, so its signature's time is not now: only what it carries is checked here.
    await receiver.waitForRequests(1, 3000);
    await sleep(QUIET_MS);
    const events = receiver.bodies() as unknown as Callback[];
    expect(events.map(({ type }) => type)).toEqual(['dispute.needs_response']);
    expect(events[0]!.data.object).toMatchObject({ payment: paymentId, amount: AMOUNT, reason: 'fraudulent', status: 'needs_response' });
  });
});

describe('the dispute delay', () => {
  it('is 3 s by default, disputeOpenMs as set, and SANDBOX_DISPUTE_OPEN_MS from the environment', async () => {
    const byDefault = await startSandbox({ port: 0 });
    const byOption = await startSandbox({ port: 0, disputeOpenMs: 10_000 });
    const byConfig = await startSandboxFromConfig(loadSandboxConfig({ SANDBOX_PORT: '0', SANDBOX_DISPUTE_OPEN_MS: '20000' }));
    try {
      await atFrozenTime(async (at) => {
        const key = newKey();
        const disputedPayment = async (base: string) => {
          const payment = await call('POST', '/v1/payments', { key, base, body: paymentInput({}, { number: DISPUTE_CARD }) });
          expect(payment.body.status).toBe('succeeded');
          return async () => (JSON.parse((await call('GET', `/v1/disputes?payment=${payment.body.id}`, { key, base })).text) as { data: Body[] }).data.length;
        };
        const count = {
          byDefault: await disputedPayment(byDefault.url),
          byOption: await disputedPayment(byOption.url),
          byConfig: await disputedPayment(byConfig.url),
        };
        const counts = async () => Object.fromEntries(await Promise.all(Object.entries(count).map(async ([name, read]) => [name, await read()])));
        at(2999);
        expect(await counts()).toEqual({ byDefault: 0, byOption: 0, byConfig: 0 });
        at(3000);
        expect(await counts()).toEqual({ byDefault: 1, byOption: 0, byConfig: 0 });
        at(9999);
        expect((await counts()).byOption).toBe(0);
        at(10_000);
        expect(await counts()).toEqual({ byDefault: 1, byOption: 1, byConfig: 0 });
        at(19_999);
        expect((await counts()).byConfig).toBe(0);
        at(20_000);
        expect(await counts()).toEqual({ byDefault: 1, byOption: 1, byConfig: 1 });
      });
    } finally {
      vi.useRealTimers();
      await Promise.all([byDefault.close(), byOption.close(), byConfig.close()]);
    }
  });

  it('SANDBOX_DISPUTE_OPEN_MS is 3000 unless set, and a bad value is refused naming the variable', () => {
    expect(loadSandboxConfig({}).SANDBOX_DISPUTE_OPEN_MS).toBe(3000);
    expect(loadSandboxConfig({ SANDBOX_DISPUTE_OPEN_MS: '0' }).SANDBOX_DISPUTE_OPEN_MS).toBe(0);
    for (const value of ['soon', '-1', '1.5', '600001']) {
      expect(() => loadSandboxConfig({ SANDBOX_DISPUTE_OPEN_MS: value })).toThrow('SANDBOX_DISPUTE_OPEN_MS: must be an integer from 0 to 600000');
    }
  });
});

describe('opening a dispute with the test helper', () => {
  it('disputes all that was captured for "general" by default, answering the dispute GET answers, with a callback', async () => {
    const { key, receiver } = await registered();
    const payment = await paid(key);
    const opened = await openDispute(key, payment.id);
    expect(opened.status).toBe(200);
    expect(Object.keys(JSON.parse(opened.text))).toEqual(DISPUTE_KEYS);
    expect(opened.body).toMatchObject({
      object: 'dispute',
      payment: payment.id,
      amount: AMOUNT,
      currency: 'usd',
      status: 'needs_response',
      reason: 'general',
      evidence: null,
    });
    expect(Math.abs(opened.body.created - Date.now() / 1000)).toBeLessThan(5);
    expect(opened.body.evidence_due_by).toBe(opened.body.created + EVIDENCE_WINDOW_S);
    expect((await getDispute(key, opened.body.id)).text).toBe(opened.text);
    const event = await onlyCallback(key, receiver, 'dispute.needs_response');
    expect(event.data.object.id).toBe(opened.body.id);
  });

  it('takes an amount from 1 to amount_captured and a reason of up to 100 characters', async () => {
    const key = newKey();
    const payment = await paid(key);
    const reason = 'r'.repeat(100);
    expect((await openDispute(key, payment.id, { amount: 1, reason })).body).toMatchObject({ amount: 1, reason });
    expect((await openDispute(key, payment.id, { amount: AMOUNT, reason: 'product_not_received' })).body).toMatchObject({
      amount: AMOUNT,
      reason: 'product_not_received',
    });
    expectRefused(
      await openDispute(key, payment.id, { amount: AMOUNT + 1 }),
      400,
      'invalid_request',
      `amount must be at most ${AMOUNT} (the amount captured).`,
    );
  });

  it('disputes at most what a partial capture took', async () => {
    const key = newKey();
    const held = await create(key, { capture_method: 'manual' });
    expect((await capture(key, held.body.id, { amount_to_capture: 600 })).body.amount_captured).toBe(600);
    expectRefused(await openDispute(key, held.body.id, { amount: 601 }), 400, 'invalid_request', 'amount must be at most 600 (the amount captured).');
    expect((await openDispute(key, held.body.id)).body.amount).toBe(600);
  });

  it.each<[string, Record<string, unknown>, string]>([
    ['amount', { amount: 0 }, 'amount must be at least 1.'],
    ['amount', { amount: 1.5 }, 'amount must be an integer.'],
    ['amount', { amount: '100' }, 'amount must be a number.'],
    ['reason', { reason: 'r'.repeat(101) }, 'reason must be at most 100 characters.'],
    ['reason', { reason: 7 }, 'reason must be a string.'],
    ['currency', { currency: 'usd' }, 'currency is not a known field.'],
  ])('refuses a bad %s with 400 invalid_request naming it', async (_field, body, message) => {
    const key = newKey();
    const payment = await paid(key);
    expectRefused(await openDispute(key, payment.id, body), 400, 'invalid_request', message);
    expect(await disputesOf(key, payment.id)).toEqual([]);
  });

  it.each<[string, (key: string) => Promise<Body>]>([
    ['requires_capture', async (key) => (await create(key, { capture_method: 'manual' })).body],
    ['failed', async (key) => (await create(key, {}, { number: '4000000000000002' })).body],
    ['requires_device_data', (key) => challenged(key)],
    ['processing', async (key) => (await createWith(key, METHOD_DETAILS.bank_debit, {}, { 'x-sandbox-settle-ms': '600000' })).body],
    ['canceled', async (key) => (await cancel(key, (await create(key, { capture_method: 'manual' })).body.id)).body],
  ])('refuses to dispute a payment that is %s with 409 invalid_state', async (status, payment) => {
    const key = newKey();
    const { id } = await payment(key);
    expectRefused(await openDispute(key, id), 409, 'invalid_state', `This payment cannot be disputed: its status is ${status}.`);
  });

  it('lists the disputes of a payment newest first, and needs the payment', async () => {
    const key = newKey();
    const payment = await paid(key);
    expect(await disputesOf(key, payment.id)).toEqual([]);
    const first = await openDispute(key, payment.id, { amount: 100 });
    const second = await openDispute(key, payment.id, { amount: 200 });
    expect(await disputesOf(key, payment.id)).toEqual([second.body, first.body]);
    expect(await disputesOf(key, (await paid(key)).id)).toEqual([]);
    expectRefused(await call('GET', '/v1/disputes', { key }), 400, 'invalid_request', 'payment is required as a query parameter (GET …/disputes?payment=…).');
    expectRefused(await call('GET', '/v1/disputes?payment=', { key }), 400, 'invalid_request', /^payment is required /);
  });
});

describe('the merchant: accept and evidence', () => {
  it('accepts a dispute: the answer tells, no callback', async () => {
    const { key, receiver } = await registered();
    const dispute = (await openDispute(key, (await paid(key)).id)).body;
    await receiver.waitForRequests(1, 3000);
    const accepted = await act(key, dispute.id, 'accept');
    expect(accepted.status).toBe(200);
    expect(accepted.body).toMatchObject({ id: dispute.id, status: 'accepted', evidence: null });
    expect(accepted.body.updated_ms).toBeGreaterThan(dispute.updated_ms);
    await sleep(QUIET_MS);
    expect(receiver.received).toHaveLength(1);
  });

  it('takes evidence: under_review with the evidence kept, the answer tells, no callback', async () => {
    const { key, receiver } = await registered();
    const dispute = (await openDispute(key, (await paid(key)).id)).body;
    await receiver.waitForRequests(1, 3000);
    const challenged = await act(key, dispute.id, 'evidence', { evidence: EVIDENCE });
    expect(challenged.status).toBe(200);
    expect(challenged.body).toMatchObject({ id: dispute.id, status: 'under_review', evidence: EVIDENCE });
    expect((await getDispute(key, dispute.id)).text).toBe(challenged.text);
    await sleep(QUIET_MS);
    expect(receiver.received).toHaveLength(1);
  });

  it.each([
    ['plain', 'v'],
    ['escaped, 6 bytes each in JSON', '\u0001'],
  ])('takes 20 keys of 40 characters and values of 5000 characters, %s, in a body over the 64 KiB of other requests', async (_label, character) => {
    const key = newKey();
    const dispute = (await openDispute(key, (await paid(key)).id)).body;
    const evidence = Object.fromEntries(
      Array.from({ length: 20 }, (_, index) => [`${String(index).padStart(2, '0')}${'k'.repeat(38)}`, character.repeat(5000)]),
    );
    expect(JSON.stringify({ evidence }).length).toBeGreaterThan(MAX_BODY_BYTES);
    const answer = await act(key, dispute.id, 'evidence', { evidence });
    expect(answer.status, answer.text.slice(0, 200)).toBe(200);
    expect(answer.body).toMatchObject({ status: 'under_review', evidence });
  });

  it('refuses an evidence body over its own limit with 413, and any other action body over 64 KiB', async () => {
    const key = newKey();
    const dispute = (await openDispute(key, (await paid(key)).id)).body;
    const tooLarge = JSON.stringify({ evidence: { receipt: 'v'.repeat(MAX_EVIDENCE_BODY_BYTES) } });
    const answer = await call('POST', `/v1/disputes/${dispute.id}/evidence`, { key, rawBody: tooLarge });
    expectRefused(answer, 413, 'payload_too_large', `The request body is larger than ${MAX_EVIDENCE_BODY_BYTES} bytes.`);
    const padded = JSON.stringify({ padding: 'p'.repeat(MAX_BODY_BYTES) });
    expectRefused(
      await call('POST', `/v1/disputes/${dispute.id}/accept`, { key, rawBody: padded }),
      413,
      'payload_too_large',
      `The request body is larger than ${MAX_BODY_BYTES} bytes.`,
    );
    expect((await getDispute(key, dispute.id)).body.status).toBe('needs_response');
  });

  it.each<[string, unknown, string]>([
    ['no evidence', {}, 'evidence is required.'],
    ['evidence without keys', { evidence: {} }, 'evidence must have 1 to 20 keys.'],
    [
      'evidence of 21 keys',
      { evidence: Object.fromEntries(Array.from({ length: 21 }, (_, index) => [`key_${index}`, 'x'])) },
      'evidence must have 1 to 20 keys.',
    ],
    ['evidence that is an array', { evidence: ['x'] }, 'evidence must be a JSON object of strings.'],
    ['evidence that is a string', { evidence: 'x' }, 'evidence must be a JSON object of strings.'],
    [
      'a key of 41 characters',
      { evidence: { ['k'.repeat(41)]: 'x' } },
      `evidence.${'k'.repeat(41)} is not a valid evidence key: a key is 1 to 40 characters of a-z, 0-9 and _.`,
    ],
    ['a key with capitals', { evidence: { Receipt: 'x' } }, 'evidence.Receipt is not a valid evidence key: a key is 1 to 40 characters of a-z, 0-9 and _.'],
    [
      'a key with a dash',
      { evidence: { 'shipping-date': 'x' } },
      'evidence.shipping-date is not a valid evidence key: a key is 1 to 40 characters of a-z, 0-9 and _.',
    ],
    ['a value of 5001 characters', { evidence: { receipt: 'v'.repeat(5001) } }, 'evidence.receipt must be at most 5000 characters.'],
    ['a value that is no string', { evidence: { receipt: 42 } }, 'evidence.receipt must be a string.'],
    ['another field', { evidence: EVIDENCE, note: 'x' }, 'note is not a known field.'],
  ])('refuses %s with 400 invalid_request naming the field', async (_label, body, message) => {
    const key = newKey();
    const dispute = (await openDispute(key, (await paid(key)).id)).body;
    expectRefused(await act(key, dispute.id, 'evidence', body), 400, 'invalid_request', message);
    expect((await getDispute(key, dispute.id)).body).toMatchObject({ status: 'needs_response', evidence: null });
  });

  it('refuses "__proto__" as an evidence key rather than lose its value', async () => {
    const key = newKey();
    const dispute = (await openDispute(key, (await paid(key)).id)).body;
    const answer = await call('POST', `/v1/disputes/${dispute.id}/evidence`, { key, rawBody: '{"evidence":{"__proto__":"x","receipt":"y"}}' });
    expectRefused(answer, 400, 'invalid_request', 'evidence.__proto__ is not a valid evidence key: a key is 1 to 40 characters of a-z, 0-9 and _.');
  });

  it('takes evidence until evidence_due_by and refuses it after, naming the due date', async () => {
    const key = newKey();
    const payment = await paid(key);
    await atFrozenTime(async (at) => {
      const onTime = (await openDispute(key, payment.id, { amount: 100 })).body;
      const late = (await openDispute(key, payment.id, { amount: 100 })).body;
      const dueMs = EVIDENCE_WINDOW_S * 1000;
      at(dueMs);
      expect((await act(key, onTime.id, 'evidence')).body.status).toBe('under_review');
      at(dueMs + 1);
      const dueBy = new Date(Date.now() - 1).toISOString();
      const message = `This dispute cannot be challenged: the evidence was due by ${dueBy} (evidence_due_by ${late.evidence_due_by}).`;
      expectRefused(await act(key, late.id, 'evidence'), 409, 'invalid_state', message);
      expect((await getDispute(key, late.id)).body).toMatchObject({ status: 'needs_response', evidence: null });
      // A dispute that could not take evidence anyway is refused for its status.
      expectRefused(await act(key, onTime.id, 'evidence'), 409, 'invalid_state', 'This dispute cannot be challenged: its status is under_review.');
    });
  });
});

describe('the network: win, lose, expire and cancel', () => {
  const decisions = (Object.keys(DISPUTE_ACTIONS) as DisputeAction[]).flatMap((action) => {
    const { by, from, to } = DISPUTE_ACTIONS[action];
    return by === 'network' ? from.map((status) => ({ action, status, to })) : [];
  });

  it.each(decisions)('$action from $status: $to, with a signed callback carrying the dispute GET answers', async ({ action, status, to }) => {
    const { key, receiver } = await registered();
    const dispute = await disputeIn(key, status);
    await receiver.waitForRequests(1, 3000);
    receiver.received.length = 0;
    const decided = await act(key, dispute.id, action);
    expect(decided.body).toMatchObject({ id: dispute.id, status: to });
    const event = await onlyCallback(key, receiver, `dispute.${to}`);
    expect(event.data.object).toMatchObject({ id: dispute.id, payment: dispute.payment, status: to });
  });
});

describe('idempotency', () => {
  it('answers a repeated test-helper opening with the same dispute, opened once; another request with the key is refused', async () => {
    const { key, receiver } = await registered();
    const payment = await paid(key);
    const headers = { 'idempotency-key': 'dsp_open' };
    const first = await openDispute(key, payment.id, { amount: 500, reason: 'duplicate' }, headers);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    const replay = await openDispute(key, payment.id, { reason: 'duplicate', amount: 500 }, headers);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.text).toBe(first.text);
    expectRefused(await openDispute(key, payment.id, { amount: 501, reason: 'duplicate' }, headers), 409, 'idempotency_mismatch', /Idempotency-Key/);
    // The key on another route is another request.
    expectRefused(await act(key, first.body.id, 'accept', {}, headers), 409, 'idempotency_mismatch', /Idempotency-Key/);
    expect(await disputesOf(key, payment.id)).toEqual([first.body]);
    await onlyCallback(key, receiver, 'dispute.needs_response');
  });

  it.each<DisputeAction>(['accept', 'evidence', 'expire'])('answers a repeated %s as it first did, with no second change', async (action) => {
    const key = newKey();
    const dispute = (await openDispute(key, (await paid(key)).id)).body;
    const headers = { 'idempotency-key': `dsp_${action}` };
    const first = await act(key, dispute.id, action, bodyOf(action), headers);
    expect(first.status).toBe(200);
    const replay = await act(key, dispute.id, action, bodyOf(action), headers);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.text).toBe(first.text);
    // Without the key, the action is a new request, refused for the status it left.
    expectRefused(
      await act(key, dispute.id, action),
      409,
      'invalid_state',
      `This dispute cannot be ${DISPUTE_ACTIONS[action].done}: its status is ${first.body.status}.`,
    );
  });

  it('refuses the evidence key with other evidence, and does not record a refused request', async () => {
    const key = newKey();
    const dispute = (await openDispute(key, (await paid(key)).id)).body;
    const headers = { 'idempotency-key': 'dsp_evidence' };
    expect((await act(key, dispute.id, 'evidence', { evidence: {} }, headers)).status).toBe(400);
    expect((await act(key, dispute.id, 'evidence', { evidence: EVIDENCE }, headers)).status).toBe(200);
    expectRefused(await act(key, dispute.id, 'evidence', { evidence: { receipt: 'other' } }, headers), 409, 'idempotency_mismatch', /Idempotency-Key/);
  });
});

describe('isolation and routes', () => {
  it("answers 404 resource_missing for another key's dispute and payment, and for unknown ones", async () => {
    const owner = newKey();
    const payment = await paid(owner);
    const dispute = (await openDispute(owner, payment.id)).body;
    const other = newKey();
    const missing = `No dispute ${dispute.id}.`;
    expectRefused(await getDispute(other, dispute.id), 404, 'resource_missing', missing);
    for (const action of Object.keys(DISPUTE_ACTIONS) as DisputeAction[]) {
      expectRefused(await act(other, dispute.id, action), 404, 'resource_missing', missing);
    }
    expectRefused(await listDisputes(other, payment.id), 404, 'resource_missing', `No payment ${payment.id}.`);
    expectRefused(await openDispute(other, payment.id), 404, 'resource_missing', `No payment ${payment.id}.`);
    expectRefused(await getDispute(owner, 'sbx_dp_000000000000000000000000'), 404, 'resource_missing', /^No dispute /);
    expectRefused(await openDispute(owner, 'sbx_pay_000000000000000000000000'), 404, 'resource_missing', /^No payment /);
    // fauxpay has memory of its own: the sandbox personality's dispute is not one of its disputes.
    expectRefused(await getDispute(newFauxpayKey(), dispute.id, '/fauxpay/v1'), 404, 'resource_missing', missing);
    // Nothing changed for the owner.
    expect((await getDispute(owner, dispute.id)).body.status).toBe('needs_response');
  });

  it('has each action at its own route only: the merchant under disputes, the network under test_helpers', async () => {
    const key = newKey();
    const dispute = (await openDispute(key, (await paid(key)).id)).body;
    for (const action of Object.keys(DISPUTE_ACTIONS) as DisputeAction[]) {
      const elsewhere = DISPUTE_ACTIONS[action].by === 'network' ? `/v1/disputes/${dispute.id}/${action}` : `/v1/test_helpers/disputes/${dispute.id}/${action}`;
      expectRefused(await call('POST', elsewhere, { key, body: bodyOf(action) }), 404, 'not_found', `There is no route POST ${elsewhere}.`);
      expectRefused(await call('GET', actionPath(dispute.id, action), { key }), 404, 'not_found', /^There is no route GET /);
    }
    expectRefused(await call('POST', '/v1/disputes', { key, body: {} }), 404, 'not_found', 'There is no route POST /v1/disputes.');
    expectRefused(await call('POST', `/v1/disputes/${dispute.id}/reopen`, { key, body: {} }), 404, 'not_found', /^There is no route POST /);
    expect((await getDispute(key, dispute.id)).body.status).toBe('needs_response');
  });

  it('needs a secret key of the personality', async () => {
    expectRefused(await call('GET', '/v1/disputes/sbx_dp_x', { key: null }), 401, 'invalid_api_key', /^Send Authorization/);
    expectRefused(await call('GET', '/fauxpay/v1/disputes/sbx_dp_x', { key: newKey() }), 401, 'invalid_api_key', /^Send Authorization/);
  });
});

describe('fauxpay', () => {
  const FAUXPAY = '/fauxpay/v1';

  it('has disputes under its own prefix, opened by the test card and the helper and moved by the same routes, but sends no callbacks', async () => {
    // A sandbox-personality key with an endpoint, to see that nothing of fauxpay's reaches any endpoint.
    const { receiver } = await registered();
    const key = newFauxpayKey();
    const payment = await call('POST', `${FAUXPAY}/payments`, { key, body: paymentInput({ amount: 500, currency: 'EUR' }, { number: DISPUTE_CARD }) });
    expect(payment.body.status).toBe('succeeded');
    const [automatic] = await vi.waitFor(
      async () => {
        const found = await disputesOf(key, payment.body.id, FAUXPAY);
        expect(found).toHaveLength(1);
        return found;
      },
      { timeout: 3000, interval: 20 },
    );
    expect(automatic).toMatchObject({ object: 'dispute', amount: 500, currency: 'eur', reason: 'fraudulent', status: 'needs_response' });
    const opened = await openDispute(key, payment.body.id, { amount: 100 }, {}, FAUXPAY);
    expect(opened.body).toMatchObject({ amount: 100, reason: 'general', currency: 'eur' });
    expect((await act(key, automatic!.id, 'evidence', { evidence: EVIDENCE }, {}, FAUXPAY)).body.status).toBe('under_review');
    expect((await act(key, automatic!.id, 'win', {}, {}, FAUXPAY)).body.status).toBe('won');
    expect((await act(key, opened.body.id, 'accept', {}, {}, FAUXPAY)).body.status).toBe('accepted');
    expect((await getDispute(key, automatic!.id, FAUXPAY)).body.status).toBe('won');
    for (const path of ['/webhook_endpoints', '/webhook_deliveries']) {
      expectRefused(await call('GET', `${FAUXPAY}${path}`, { key }), 404, 'webhooks_not_supported', /^This processor has no webhooks/);
    }
    await sleep(QUIET_MS);
    expect(receiver.received).toEqual([]);
  });
});
