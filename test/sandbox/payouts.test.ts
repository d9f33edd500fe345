// Payouts over real HTTP, as the service's connector uses them: money sent to a card or a bank account,
// moving by itself one payout settle delay per step as its destination's test value says (observed by timer
// and signed `payout.*` callbacks, or by the first read after the delay on a frozen clock), the merchant's
// cancel while pending (whose due steps never apply), the bank's return once paid (the test helper), every
// move of the transition table allowed or refused, idempotency, lookups by reference, isolation between keys
// and personalities, and every refusal naming its field.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { loadSandboxConfig } from '../../sandbox/src/config.ts';
import { TEST_BANK_ACCOUNTS } from '../../sandbox/src/banks.ts';
import { TEST_CARDS } from '../../sandbox/src/cards.ts';
import { PAYOUT_MOVES, type PayoutMove } from '../../sandbox/src/payouts.ts';
import { startSandbox, startSandboxFromConfig } from '../../sandbox/src/server.ts';
import {
  FUTURE_YEAR,
  TEST_IBAN,
  atFrozenTime,
  expectRefused,
  newFauxpayKey,
  newKey,
  sleep,
  useCallbackReceivers,
  useSandbox,
  type Body,
  type Callback,
} from './harness.ts';

/** Short, so a payout's steps happen within the test; the frozen-clock tests move Date instead of waiting. */
const SETTLE_MS = 50;
const { call } = useSandbox({ payoutSettleMs: SETTLE_MS });

/** Long enough for a callback that would be sent to have arrived, and for a payout's 50 ms steps to have passed. */
const QUIET_MS = 250;
const { registered, signedEvent, onlyCallback, deliveries } = useCallbackReceivers(call, 'whsec_sandbox_payouts_0123456789', QUIET_MS);

afterEach(() => {
  vi.useRealTimers();
});

const FAUXPAY = '/fauxpay/v1';
const AMOUNT = 5000;
/** A step delay no timer reaches during a test, so only a read after it (on a frozen clock) applies a step. */
const SLOW = 60_000;
const SLOW_HEADERS = { 'x-sandbox-settle-ms': String(SLOW) };
const PAYOUT_KEYS = ['id', 'object', 'amount', 'currency', 'status', 'destination', 'reference', 'error', 'created', 'updated_ms'];

// Written from the contract, not derived from PAYOUT_MOVES or the test-value tables, so a wrong row fails here.
const STATUSES = ['pending', 'in_transit', 'paid', 'failed', 'cancelled', 'expired', 'returned'];
const EXPECTED_MOVES = {
  send: { by: 'processor', from: ['pending'], to: 'in_transit', done: 'sent' },
  pay: { by: 'processor', from: ['in_transit'], to: 'paid', done: 'paid' },
  fail: { by: 'processor', from: ['pending', 'in_transit'], to: 'failed', done: 'failed' },
  expire: { by: 'processor', from: ['pending'], to: 'expired', done: 'expired' },
  cancel: { by: 'merchant', from: ['pending'], to: 'cancelled', done: 'cancelled' },
  return: { by: 'bank', from: ['paid'], to: 'returned', done: 'returned' },
};
const EXPECTED_FINAL = ['failed', 'cancelled', 'expired', 'returned'];

type Step = { status: string; error: Body['error'] };
const IN_TRANSIT: Step = { status: 'in_transit', error: null };
const PAID: Step[] = [IN_TRANSIT, { status: 'paid', error: null }];
const EXPIRED: Step[] = [{ status: 'expired', error: { code: 'payout_expired', message: 'The payout was not sent in time and has expired.' } }];
/** What a payout to each test value does after `pending`, one step per payout settle delay. */
const EXPECTED_PAYOUTS: Record<string, Step[]> = {
  '4000000000000002': [IN_TRANSIT, { status: 'failed', error: { code: 'card_declined', message: "The destination card's issuer declined the payout." } }],
  '4000000000000077': EXPIRED,
  DE35370400440532013002: [IN_TRANSIT, { status: 'failed', error: { code: 'account_closed', message: 'The destination account is closed.' } }],
  DE08370400440532013003: EXPIRED,
};
/** A card whose expiry has passed: refused before it is sent. */
const EXPIRED_CARD_STEPS: Step[] = [{ status: 'failed', error: { code: 'expired_card', message: 'The destination card has expired.' } }];

type Headers = Record<string, string>;

/** The destination of a test value: a card number, or an IBAN. */
function destinationOf(value: string, card: Record<string, unknown> = {}) {
  return /^\d+$/.test(value)
    ? { type: 'card', card: { number: value, exp_month: 12, exp_year: FUTURE_YEAR, holder_name: 'Ada Lovelace', ...card } }
    : { type: 'bank_account', account_holder_name: 'Erika Mustermann', iban: value };
}
const payoutInput = (value = '4242424242424242', overrides: Record<string, unknown> = {}) => ({
  amount: AMOUNT,
  currency: 'EUR',
  destination: destinationOf(value),
  reference: 'po_test',
  ...overrides,
});

const createPayout = (key: string, body: unknown, headers: Headers = {}, prefix = '/v1', base?: string) =>
  call('POST', `${prefix}/payouts`, { key, body, headers, base });
const getPayout = (key: string, id: string, prefix = '/v1', base?: string) => call('GET', `${prefix}/payouts/${id}`, { key, base });
const byReference = (key: string, reference: string, prefix = '/v1') => call('GET', `${prefix}/payouts?reference=${encodeURIComponent(reference)}`, { key });
/** Where a move is: the merchant's under `payouts`, the bank's (the test helper) under `test_helpers/payouts`. */
const movePath = (id: string, move: PayoutMove, prefix = '/v1') => `${prefix}/${PAYOUT_MOVES[move].by === 'bank' ? 'test_helpers/' : ''}payouts/${id}/${move}`;
const act = (key: string, id: string, move: PayoutMove, headers: Headers = {}, prefix = '/v1') =>
  call('POST', movePath(id, move, prefix), { key, body: {}, headers });

/** The moves with a route: the merchant's and the bank's (the processor's happen by themselves). */
const ACTIONS = (Object.keys(PAYOUT_MOVES) as PayoutMove[]).filter((move) => PAYOUT_MOVES[move].by !== 'processor');

/** How a new payout reaches each status: its destination, how many step delays pass, then which routes. */
const REACH: Record<string, { to: string; delays: number; moves: PayoutMove[] }> = {
  pending: { to: '4242424242424242', delays: 0, moves: [] },
  in_transit: { to: '4242424242424242', delays: 1, moves: [] },
  paid: { to: TEST_IBAN, delays: 2, moves: [] },
  failed: { to: 'DE35370400440532013002', delays: 2, moves: [] },
  expired: { to: '4000000000000077', delays: 1, moves: [] },
  cancelled: { to: TEST_IBAN, delays: 0, moves: ['cancel'] },
  returned: { to: '4242424242424242', delays: 2, moves: ['return'] },
};

/** A payout of `key` brought to `status` on the frozen clock `at` (its steps SLOW apart). */
async function payoutIn(key: string, status: string, at: (offsetMs: number) => void): Promise<Body> {
  const { to, delays, moves } = REACH[status]!;
  let payout = (await createPayout(key, payoutInput(to), SLOW_HEADERS)).body;
  at(delays * SLOW);
  payout = (await getPayout(key, payout.id)).body;
  for (const move of moves) payout = (await act(key, payout.id, move)).body;
  expect(payout.status).toBe(status);
  return payout;
}

describe('creating a payout', () => {
  it.each([
    ['a card', '4242424242424242', { type: 'card', last4: '4242' }],
    ['a bank account', TEST_IBAN, { type: 'bank_account', last4: '3000' }],
  ])('to %s: answered pending with the payout object GET and the reference lookup answer too', async (_label, value, destination) => {
    const key = newKey();
    const answer = await createPayout(key, payoutInput(value, { reference: `po_${destination.type}` }), SLOW_HEADERS);
    expect(answer.status).toBe(200);
    expect(Object.keys(JSON.parse(answer.text))).toEqual(PAYOUT_KEYS);
    expect(answer.body).toMatchObject({
      object: 'payout',
      amount: AMOUNT,
      currency: 'eur',
      status: 'pending',
      destination,
      reference: `po_${destination.type}`,
      error: null,
    });
    expect(answer.body.destination).toEqual(destination);
    expect(answer.body.id).toMatch(/^sbx_po_[A-Za-z0-9]{24}$/);
    expect(Math.abs(answer.body.created - Date.now() / 1000)).toBeLessThan(5);
    expect(answer.body.updated_ms).toBeGreaterThanOrEqual(answer.body.created * 1000);
    expect((await getPayout(key, answer.body.id)).text).toBe(answer.text);
    expect((await byReference(key, `po_${destination.type}`)).text).toBe(answer.text);
  });

  it('takes a reference of 100 characters and a description of 500, and no reference at all', async () => {
    const key = newKey();
    const [reference, description] = ['r'.repeat(100), 'd'.repeat(500)];
    expect((await createPayout(key, payoutInput(TEST_IBAN, { reference, description }))).body).toMatchObject({ status: 'pending', reference });
    expect((await createPayout(key, payoutInput(TEST_IBAN, { reference: undefined, description: undefined }))).body.reference).toBeNull();
  });

  it('takes a card without holder_name, and any currency of 3 letters', async () => {
    const key = newKey();
    const destination = { type: 'card', card: { number: '5555555555554444', exp_month: 1, exp_year: FUTURE_YEAR } };
    const answer = await createPayout(key, { amount: 1, currency: 'jPy', destination });
    expect(answer.body).toMatchObject({ amount: 1, currency: 'jpy', destination: { type: 'card', last4: '4444' } });
  });
});

describe('payout test values', () => {
  it('the expectations cover exactly the rows of the card and bank account tables with a payout behaviour', () => {
    const rows = [
      ...TEST_CARDS.filter((card) => card.payout !== undefined).map((card) => card.number),
      ...TEST_BANK_ACCOUNTS.filter((account) => account.payout !== undefined).map((account) => account.iban),
    ];
    expect(rows.sort()).toEqual(Object.keys(EXPECTED_PAYOUTS).sort());
  });

  const payingCards = TEST_CARDS.filter((card) => card.payout === undefined).map((card) => card.number);
  const payingAccounts = TEST_BANK_ACCOUNTS.filter((account) => account.payout === undefined).map((account) => account.iban);
  /** Every test value (those without a payout behaviour are paid), and any other card or IBAN. */
  const CASES = [
    ...Object.entries(EXPECTED_PAYOUTS).map(([value, steps]) => ({ value, steps })),
    ...[...payingCards, ...payingAccounts, '4111111111111111', 'GB82WEST12345698765432'].map((value) => ({ value, steps: PAID })),
  ];

  it.each(CASES)('$value: pending, then one step per delay by timer, each with a signed callback carrying what GET answers', async ({ value, steps }) => {
    const { key, receiver } = await registered();
    // No reference quoting the value: a card number or an IBAN is a secret no answer may show.
    const created = await createPayout(key, payoutInput(value, { reference: 'po_timer' }));
    expect(created.body).toMatchObject({ status: 'pending', error: null, destination: { last4: value.slice(-4) } });
    // No read at all: the timers move it and the callbacks tell.
    const requests = await receiver.waitForRequests(steps.length, 3000);
    await sleep(QUIET_MS);
    expect(receiver.received).toHaveLength(steps.length);
    const events = requests.map((request) => signedEvent(request));
    expect(events.map(({ type }) => type)).toEqual(steps.map(({ status }) => `payout.${status}`));
    events.forEach(({ data: { object } }, index) => {
      expect(object).toMatchObject({ ...created.body, ...steps[index], updated_ms: object.updated_ms });
      expect(object.updated_ms).toBeGreaterThanOrEqual(created.body.updated_ms + (index + 1) * SETTLE_MS);
    });
    const fetched = await getPayout(key, created.body.id);
    expect(fetched.body).toEqual(events.at(-1)!.data.object);
    expect((await deliveries(key)).reverse()).toEqual(
      events.map((event) => expect.objectContaining({ event_id: event.id, type: event.type, object_id: created.body.id, payment_id: null, delivered: true })),
    );
  });

  it.each(CASES)('$value: each step exactly at its delay on a frozen clock, applied by the first read after it', async ({ value, steps }) => {
    const { key, receiver } = await registered();
    await atFrozenTime(async (at) => {
      const created = await createPayout(key, payoutInput(value, { reference: 'po_frozen' }), SLOW_HEADERS);
      for (const [index, step] of steps.entries()) {
        at((index + 1) * SLOW - 1);
        expect((await getPayout(key, created.body.id)).body.status).toBe(index === 0 ? 'pending' : steps[index - 1]!.status);
        at((index + 1) * SLOW);
        const read = await byReference(key, 'po_frozen');
        expect(read.body).toMatchObject({ id: created.body.id, ...step, updated_ms: Date.now() });
        // The change was recorded as it happened: the read itself applied it.
        expect((await deliveries(key)).map(({ type }) => type)).toEqual(
          steps
            .slice(0, index + 1)
            .map(({ status }) => `payout.${status}`)
            .reverse(),
        );
      }
      // Nothing more, however long after.
      at(100 * SLOW);
      expect((await getPayout(key, created.body.id)).body).toMatchObject(steps.at(-1)!);
    });
    vi.useRealTimers();
    // Sent while the clock was moved, so their signatures' time is not now: only what they carry is checked here.
    await receiver.waitForRequests(steps.length, 3000);
    await sleep(QUIET_MS);
    expect((receiver.bodies() as unknown as Callback[]).map(({ type }) => type)).toEqual(steps.map(({ status }) => `payout.${status}`));
  });

  it('a read long after applies every step that fell due, in order, each with its callback', async () => {
    const { key } = await registered();
    const steps = EXPECTED_PAYOUTS.DE35370400440532013002!;
    await atFrozenTime(async (at) => {
      const created = await createPayout(key, payoutInput('DE35370400440532013002'), SLOW_HEADERS);
      at(10 * SLOW);
      expect((await getPayout(key, created.body.id)).body).toMatchObject(steps.at(-1)!);
      expect((await deliveries(key)).map(({ type }) => type).reverse()).toEqual(steps.map(({ status }) => `payout.${status}`));
    });
  });

  it('a card whose expiry has passed: pending, then failed expired_card after one delay, never sent', async () => {
    const { key, receiver } = await registered();
    const now = new Date();
    const lastMonth = { exp_month: now.getUTCMonth() === 0 ? 12 : now.getUTCMonth(), exp_year: now.getUTCFullYear() - (now.getUTCMonth() === 0 ? 1 : 0) };
    const created = await createPayout(key, { ...payoutInput(), destination: destinationOf('4242424242424242', lastMonth) });
    expect(created.body.status).toBe('pending');
    const event = await onlyCallback(key, receiver, 'payout.failed');
    expect(event.data.object).toMatchObject({ id: created.body.id, ...EXPIRED_CARD_STEPS[0] });
  });

  it('a card is usable for payouts through the last millisecond of its expiry month', async () => {
    const key = newKey();
    const now = new Date();
    const thisMonth = { exp_month: now.getUTCMonth() + 1, exp_year: now.getUTCFullYear() };
    await atFrozenTime(async (at) => {
      const nextMonth = Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1) - Date.now();
      at(nextMonth - SLOW - 1);
      const inTime = await createPayout(key, { ...payoutInput(), destination: destinationOf('4242424242424242', thisMonth) }, SLOW_HEADERS);
      at(nextMonth);
      const late = await createPayout(key, { ...payoutInput(), destination: destinationOf('4242424242424242', thisMonth) }, SLOW_HEADERS);
      at(nextMonth + SLOW);
      expect((await getPayout(key, inTime.body.id)).body.status).toBe('paid');
      expect((await getPayout(key, late.body.id)).body).toMatchObject(EXPIRED_CARD_STEPS[0]!);
    });
  });
});

describe('the transition table', () => {
  it('is the contract: who makes each move, from which statuses, to which one', () => {
    expect(PAYOUT_MOVES).toEqual(EXPECTED_MOVES);
    const final = STATUSES.filter((status) => Object.values(PAYOUT_MOVES).every(({ from }) => !(from as readonly string[]).includes(status)));
    expect(final).toEqual(EXPECTED_FINAL);
    expect(new Set(Object.values(PAYOUT_MOVES).flatMap(({ from, to }) => [...from, to]))).toEqual(new Set(STATUSES));
    expect(Object.keys(REACH).sort()).toEqual([...STATUSES].sort());
    // Every step of a test value is a processor's move from where the step before left the payout.
    for (const steps of [...Object.values(EXPECTED_PAYOUTS), PAID, EXPIRED_CARD_STEPS]) {
      steps.reduce((from, { status }) => {
        expect(
          Object.values(PAYOUT_MOVES).some((move) => move.by === 'processor' && move.to === status && (move.from as readonly string[]).includes(from)),
        ).toBe(true);
        return status;
      }, 'pending');
    }
  });

  const moves = STATUSES.flatMap((status) =>
    ACTIONS.map((action) => {
      const { from, to, done, by } = PAYOUT_MOVES[action];
      return { status, action, allowed: (from as readonly string[]).includes(status), to, done, by };
    }),
  );

  // The answer tells either way; the bank's move (the test helper) sends a callback too, the merchant's does not.
  it.each(moves.filter((move) => move.allowed))('$status --$action ($by)--> $to', async ({ status, action, to, by }) => {
    const { key } = await registered();
    await atFrozenTime(async (at) => {
      const payout = await payoutIn(key, status, at);
      const before = (await deliveries(key)).length;
      const moved = await act(key, payout.id, action);
      expect(moved.status, moved.text).toBe(200);
      expect(moved.body).toMatchObject({ id: payout.id, status: to, error: payout.error, amount: payout.amount, destination: payout.destination });
      expect(moved.body.updated_ms).toBeGreaterThan(payout.updated_ms);
      expect((await getPayout(key, payout.id)).text).toBe(moved.text);
      const after = await deliveries(key);
      if (by === 'bank') {
        expect(after).toHaveLength(before + 1);
        expect(after[0]).toMatchObject({ type: `payout.${to}`, object_id: payout.id, payment_id: null });
      } else {
        expect(after).toHaveLength(before);
      }
    });
  });

  it.each(moves.filter((move) => !move.allowed))('$status --$action--> refused with 409 invalid_state, nothing changed', async ({ status, action, done }) => {
    const { key } = await registered();
    await atFrozenTime(async (at) => {
      const payout = await payoutIn(key, status, at);
      const fetched = await getPayout(key, payout.id);
      const before = (await deliveries(key)).length;
      expectRefused(await act(key, payout.id, action), 409, 'invalid_state', `This payout cannot be ${done}: its status is ${status}.`);
      expect((await getPayout(key, payout.id)).text).toBe(fetched.text);
      expect(await deliveries(key)).toHaveLength(before);
    });
  });
});

describe('the merchant: cancel', () => {
  it('cancels a pending payout: the answer tells, no callback, and none of its steps ever applies', async () => {
    const { key, receiver } = await registered();
    const stepMs = 100;
    for (const value of ['4242424242424242', ...Object.keys(EXPECTED_PAYOUTS)]) {
      const created = await createPayout(key, payoutInput(value), { 'x-sandbox-settle-ms': String(stepMs) });
      const cancelled = await act(key, created.body.id, 'cancel');
      expect(cancelled.status).toBe(200);
      expect(cancelled.body).toMatchObject({ id: created.body.id, status: 'cancelled', error: null });
      expect(cancelled.body.updated_ms).toBeGreaterThan(created.body.updated_ms);
    }
    // Well past every step's delay, timers included.
    await sleep(2 * stepMs + QUIET_MS);
    expect(receiver.received).toEqual([]);
    expect(await deliveries(key)).toEqual([]);
  });

  it('refuses to cancel once the first step fell due, even unread: the read counts it first', async () => {
    const key = newKey();
    await atFrozenTime(async (at) => {
      const created = await createPayout(key, payoutInput(), SLOW_HEADERS);
      at(SLOW);
      expectRefused(await act(key, created.body.id, 'cancel'), 409, 'invalid_state', 'This payout cannot be cancelled: its status is in_transit.');
      const expiring = await createPayout(key, payoutInput('DE08370400440532013003'), SLOW_HEADERS);
      at(2 * SLOW);
      expectRefused(await act(key, expiring.body.id, 'cancel'), 409, 'invalid_state', 'This payout cannot be cancelled: its status is expired.');
    });
  });

  it('keeps a payout cancelled on a frozen clock long after its steps fell due', async () => {
    const key = newKey();
    await atFrozenTime(async (at) => {
      const created = await createPayout(key, payoutInput('4000000000000002'), SLOW_HEADERS);
      at(SLOW - 1);
      const cancelled = await act(key, created.body.id, 'cancel');
      expect(cancelled.body.status).toBe('cancelled');
      at(10 * SLOW);
      expect((await getPayout(key, created.body.id)).text).toBe(cancelled.text);
      expect(await deliveries(key)).toEqual([]);
    });
  });
});

describe('the bank: return', () => {
  it('sends a paid payout back: returned, with a signed payout.returned callback carrying what GET answers', async () => {
    const { key, receiver } = await registered();
    const created = await createPayout(key, payoutInput(TEST_IBAN));
    await receiver.waitForRequests(2, 3000);
    receiver.received.length = 0;
    expect((await getPayout(key, created.body.id)).body.status).toBe('paid');
    const returned = await act(key, created.body.id, 'return');
    expect(returned.body).toMatchObject({ id: created.body.id, status: 'returned', error: null });
    const event = await onlyCallback(key, receiver, 'payout.returned');
    expect(JSON.stringify(event.data.object)).toBe(returned.text);
  });
});

describe('idempotency', () => {
  it('answers a repeated payout with the same payout and pays out once; another request with the key is refused', async () => {
    const key = newKey();
    const headers = { 'idempotency-key': 'po_1', ...SLOW_HEADERS };
    const input = payoutInput(TEST_IBAN, { reference: 'po_once', description: 'November' });
    const first = await createPayout(key, input, headers);
    expect(first.status).toBe(200);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    // The same request with its fields in another order.
    const replay = await createPayout(key, Object.fromEntries(Object.entries(input).reverse()), headers);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.text).toBe(first.text);
    expect((await byReference(key, 'po_once')).body.id).toBe(first.body.id);
    expectRefused(
      await createPayout(key, payoutInput(TEST_IBAN, { reference: 'po_once', description: 'December' }), headers),
      409,
      'idempotency_mismatch',
      /Idempotency-Key/,
    );
    // The key on another route is another request.
    expectRefused(await act(key, first.body.id, 'cancel', headers), 409, 'idempotency_mismatch', /Idempotency-Key/);
    expect((await byReference(key, 'po_once')).body.id).toBe(first.body.id);
  });

  it('replays a payout as it is now, its due steps applied', async () => {
    const key = newKey();
    const headers = { 'idempotency-key': 'po_now', 'x-sandbox-settle-ms': '0' };
    const first = await createPayout(key, payoutInput(), headers);
    expect(first.body.status).toBe('pending');
    const replay = await createPayout(key, payoutInput(), headers);
    expect(replay.body).toMatchObject({ id: first.body.id, status: 'paid' });
    expect(replay.body.updated_ms).toBeGreaterThan(first.body.updated_ms);
  });

  it('answers a repeated cancel as it first did, once; without the key it is refused for its status', async () => {
    const key = newKey();
    const created = await createPayout(key, payoutInput(), SLOW_HEADERS);
    const headers = { 'idempotency-key': 'po_cancel' };
    const first = await act(key, created.body.id, 'cancel', headers);
    const replay = await act(key, created.body.id, 'cancel', headers);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.text).toBe(first.text);
    expectRefused(await act(key, created.body.id, 'cancel'), 409, 'invalid_state', 'This payout cannot be cancelled: its status is cancelled.');
  });

  it('does not record a refused payout, so its key may be used again', async () => {
    const key = newKey();
    const headers = { 'idempotency-key': 'po_refused' };
    expect((await createPayout(key, payoutInput('4242424242424241'), headers)).status).toBe(400);
    expect((await createPayout(key, payoutInput(), headers)).status).toBe(200);
  });
});

describe('GET by reference', () => {
  it("answers the latest payout of the key with that reference, as the service's recovery after a timeout needs", async () => {
    const key = newKey();
    const first = await createPayout(key, payoutInput(TEST_IBAN, { reference: 'po_timeout', amount: 100 }), SLOW_HEADERS);
    expect((await byReference(key, 'po_timeout')).text).toBe(first.text);
    const second = await createPayout(key, payoutInput(TEST_IBAN, { reference: 'po_timeout', amount: 200 }), SLOW_HEADERS);
    expect((await byReference(key, 'po_timeout')).body).toMatchObject({ id: second.body.id, amount: 200 });
    expectRefused(await byReference(key, 'po_never'), 404, 'resource_missing', 'No payout with reference po_never.');
    expectRefused(await call('GET', '/v1/payouts', { key }), 400, 'invalid_request', 'reference is required as a query parameter (GET …/payouts?reference=…).');
    expectRefused(await call('GET', '/v1/payouts?reference=', { key }), 400, 'invalid_request', /^reference is required /);
  });
});

describe('what a payout refuses', () => {
  const card = destinationOf('4242424242424242').card!;
  const account = destinationOf(TEST_IBAN);
  it.each<[string, Record<string, unknown>, string]>([
    ['amount', { amount: 0 }, 'amount must be at least 1.'],
    ['amount', { amount: 1.5 }, 'amount must be an integer.'],
    ['amount', { amount: '100' }, 'amount must be a number.'],
    ['amount', { amount: undefined }, 'amount is required.'],
    ['currency', { currency: 'EURO' }, 'currency must be 3 letters.'],
    ['currency', { currency: undefined }, 'currency is required.'],
    ['destination', { destination: undefined }, 'destination is required.'],
    ['destination', { destination: 'card' }, 'destination must be a JSON object.'],
    ['destination.type', { destination: { ...account, type: 'wallet' } }, 'destination.type must be one of card, bank_account.'],
    ['destination.type', { destination: { card } }, 'destination.type must be one of card, bank_account.'],
    ['destination.card', { destination: { type: 'card' } }, 'destination.card is required.'],
    ['destination.card.number', { destination: { type: 'card', card: { ...card, number: '4242' } } }, 'destination.card.number must be 12 to 19 digits.'],
    ['destination.card.exp_month', { destination: { type: 'card', card: { ...card, exp_month: 13 } } }, 'destination.card.exp_month must be 1 to 12.'],
    ['destination.card.exp_year', { destination: { type: 'card', card: { ...card, exp_year: 29 } } }, 'destination.card.exp_year must be a 4-digit year.'],
    ['destination.card.cvc', { destination: { type: 'card', card: { ...card, cvc: '123' } } }, 'destination.card.cvc is not a known field.'],
    ['destination.iban', { destination: { type: 'card', card, iban: TEST_IBAN } }, 'destination.iban is not a known field.'],
    ['destination.card', { destination: { ...account, card } }, 'destination.card is not a known field.'],
    [
      'destination.iban',
      { destination: { ...account, iban: 'de89370400440532013000' } },
      'destination.iban must be an IBAN: 15 to 34 capital letters and digits, without spaces.',
    ],
    ['destination.iban', { destination: { ...account, iban: undefined } }, 'destination.iban is required.'],
    ['destination.account_holder_name', { destination: { ...account, account_holder_name: '' } }, 'destination.account_holder_name must not be empty.'],
    ['reference', { reference: 'r'.repeat(101) }, 'reference must be at most 100 characters.'],
    ['description', { description: 'd'.repeat(501) }, 'description must be at most 500 characters.'],
    ['description', { description: 7 }, 'description must be a string.'],
    ['metadata', { metadata: {} }, 'metadata is not a known field.'],
  ])('refuses a bad %s with 400 invalid_request naming it', async (_field, overrides, message) => {
    const key = newKey();
    expectRefused(await createPayout(key, payoutInput(TEST_IBAN, { reference: 'po_refused', ...overrides })), 400, 'invalid_request', message);
    expectRefused(await byReference(key, 'po_refused'), 404, 'resource_missing', /^No payout /);
  });

  it('refuses a card number failing the Luhn check with 400 invalid_number, and an IBAN failing mod 97 with 400 invalid_iban', async () => {
    const key = newKey();
    const badCard = await createPayout(key, payoutInput('4242424242424241'));
    expectRefused(badCard, 400, 'invalid_number', 'destination.card.number is not a valid card number (the check digit does not match).');
    const badIban = await createPayout(key, payoutInput('DE89370400440532013001'));
    expectRefused(badIban, 400, 'invalid_iban', 'destination.iban is not a valid IBAN (its check digits do not match).');
  });

  it.each(['600001', '-1', 'soon'])('refuses x-sandbox-settle-ms: %s with 400 naming the header', async (value) => {
    const answer = await createPayout(newKey(), payoutInput(), { 'x-sandbox-settle-ms': value });
    expectRefused(answer, 400, 'invalid_request', 'x-sandbox-settle-ms must be an integer from 0 to 600000.');
  });

  it('needs a secret key of the personality', async () => {
    expectRefused(await call('POST', '/v1/payouts', { key: null, body: payoutInput() }), 401, 'invalid_api_key', /^Send Authorization/);
    expectRefused(await call('GET', '/fauxpay/v1/payouts/sbx_po_x', { key: newKey() }), 401, 'invalid_api_key', /^Send Authorization/);
  });
});

describe('isolation and routes', () => {
  it("answers 404 resource_missing for another key's payout and for unknown ones, on every route", async () => {
    const owner = newKey();
    const created = await createPayout(owner, payoutInput(TEST_IBAN, { reference: 'po_owner' }), SLOW_HEADERS);
    const other = newKey();
    const missing = `No payout ${created.body.id}.`;
    expectRefused(await getPayout(other, created.body.id), 404, 'resource_missing', missing);
    for (const action of ACTIONS) expectRefused(await act(other, created.body.id, action), 404, 'resource_missing', missing);
    expectRefused(await byReference(other, 'po_owner'), 404, 'resource_missing', 'No payout with reference po_owner.');
    expectRefused(await getPayout(owner, 'sbx_po_000000000000000000000000'), 404, 'resource_missing', 'No payout sbx_po_000000000000000000000000.');
    // fauxpay has memory of its own: the sandbox personality's payout is not one of its payouts.
    expectRefused(await getPayout(newFauxpayKey(), created.body.id, FAUXPAY), 404, 'resource_missing', missing);
    // Nothing changed for the owner.
    expect((await getPayout(owner, created.body.id)).text).toBe(created.text);
  });

  it("has each route move at its own route only, and the processor's moves at none", async () => {
    const key = newKey();
    const { id } = (await createPayout(key, payoutInput(), SLOW_HEADERS)).body;
    for (const move of Object.keys(PAYOUT_MOVES) as PayoutMove[]) {
      const { by } = PAYOUT_MOVES[move];
      const elsewhere =
        by === 'processor'
          ? [`/v1/payouts/${id}/${move}`, `/v1/test_helpers/payouts/${id}/${move}`]
          : [by === 'bank' ? `/v1/payouts/${id}/${move}` : `/v1/test_helpers/payouts/${id}/${move}`];
      for (const path of elsewhere) expectRefused(await call('POST', path, { key, body: {} }), 404, 'not_found', `There is no route POST ${path}.`);
      if (by !== 'processor') expectRefused(await call('GET', movePath(id, move), { key }), 404, 'not_found', /^There is no route GET /);
    }
    expectRefused(await call('POST', `/v1/payouts/${id}`, { key, body: {} }), 404, 'not_found', `There is no route POST /v1/payouts/${id}.`);
  });

  it('takes an empty body on the moves', async () => {
    const key = newKey();
    const { id } = (await createPayout(key, payoutInput(), SLOW_HEADERS)).body;
    expectRefused(await call('POST', `/v1/payouts/${id}/cancel`, { key, body: { reason: 'x' } }), 400, 'invalid_request', 'reason is not a known field.');
    expect((await getPayout(key, id)).body.status).toBe('pending');
  });
});

describe('fauxpay', () => {
  it('has payouts under its own prefix, moving and moved by the same routes, but sends no callbacks', async () => {
    const { receiver } = await registered();
    const key = newFauxpayKey();
    const paid = await createPayout(key, payoutInput(TEST_IBAN, { reference: 'po_faux' }), {}, FAUXPAY);
    const failing = await createPayout(key, payoutInput('4000000000000002'), {}, FAUXPAY);
    const cancelled = await createPayout(key, payoutInput(), SLOW_HEADERS, FAUXPAY);
    expect(paid.body).toMatchObject({ status: 'pending', currency: 'eur' });
    expect((await act(key, cancelled.body.id, 'cancel', {}, FAUXPAY)).body.status).toBe('cancelled');
    await vi.waitFor(async () => expect((await getPayout(key, paid.body.id, FAUXPAY)).body.status).toBe('paid'), { timeout: 3000, interval: 20 });
    // Created a moment after the paid one, it may settle a moment later too.
    await vi.waitFor(async () => expect((await getPayout(key, failing.body.id, FAUXPAY)).body).toMatchObject(EXPECTED_PAYOUTS['4000000000000002']!.at(-1)!), {
      timeout: 3000,
      interval: 20,
    });
    expect((await call('GET', `${FAUXPAY}/payouts?reference=po_faux`, { key })).body.id).toBe(paid.body.id);
    expect((await act(key, paid.body.id, 'return', {}, FAUXPAY)).body.status).toBe('returned');
    // The sandbox personality does not know fauxpay's payout.
    expectRefused(await getPayout(newKey(), paid.body.id), 404, 'resource_missing', /^No payout /);
    await sleep(QUIET_MS);
    expect(receiver.received).toEqual([]);
  });
});

describe('the payout settle delay', () => {
  it('is 3 s per step by default, payoutSettleMs as set, SANDBOX_PAYOUT_SETTLE_MS from the environment, and the header over all', async () => {
    const byDefault = await startSandbox({ port: 0 });
    const byOption = await startSandbox({ port: 0, payoutSettleMs: 10_000 });
    const byConfig = await startSandboxFromConfig(loadSandboxConfig({ SANDBOX_PORT: '0', SANDBOX_PAYOUT_SETTLE_MS: '20000' }));
    try {
      await atFrozenTime(async (at) => {
        const key = newKey();
        const payout = async (base: string, headers: Headers = {}) => {
          const created = await createPayout(key, payoutInput(), headers, '/v1', base);
          expect(created.body.status).toBe('pending');
          return async () => (await getPayout(key, created.body.id, '/v1', base)).body.status;
        };
        const status = {
          byDefault: await payout(byDefault.url),
          byOption: await payout(byOption.url),
          byConfig: await payout(byConfig.url),
          byHeader: await payout(byOption.url, { 'x-sandbox-settle-ms': '500' }),
        };
        const statuses = async () => Object.fromEntries(await Promise.all(Object.entries(status).map(async ([name, read]) => [name, await read()])));
        const expectAt = async (offsetMs: number, expected: Record<string, string>) => {
          at(offsetMs);
          expect(await statuses(), `at ${offsetMs} ms`).toEqual(expected);
        };
        await expectAt(499, { byDefault: 'pending', byOption: 'pending', byConfig: 'pending', byHeader: 'pending' });
        await expectAt(500, { byDefault: 'pending', byOption: 'pending', byConfig: 'pending', byHeader: 'in_transit' });
        await expectAt(999, { byDefault: 'pending', byOption: 'pending', byConfig: 'pending', byHeader: 'in_transit' });
        await expectAt(1000, { byDefault: 'pending', byOption: 'pending', byConfig: 'pending', byHeader: 'paid' });
        await expectAt(2999, { byDefault: 'pending', byOption: 'pending', byConfig: 'pending', byHeader: 'paid' });
        await expectAt(3000, { byDefault: 'in_transit', byOption: 'pending', byConfig: 'pending', byHeader: 'paid' });
        await expectAt(6000, { byDefault: 'paid', byOption: 'pending', byConfig: 'pending', byHeader: 'paid' });
        await expectAt(10_000, { byDefault: 'paid', byOption: 'in_transit', byConfig: 'pending', byHeader: 'paid' });
        await expectAt(19_999, { byDefault: 'paid', byOption: 'in_transit', byConfig: 'pending', byHeader: 'paid' });
        await expectAt(20_000, { byDefault: 'paid', byOption: 'paid', byConfig: 'in_transit', byHeader: 'paid' });
        await expectAt(40_000, { byDefault: 'paid', byOption: 'paid', byConfig: 'paid', byHeader: 'paid' });
      });
    } finally {
      vi.useRealTimers();
      await Promise.all([byDefault.close(), byOption.close(), byConfig.close()]);
    }
  });

  it('SANDBOX_PAYOUT_SETTLE_MS is 3000 unless set, and a bad value is refused naming the variable', () => {
    expect(loadSandboxConfig({}).SANDBOX_PAYOUT_SETTLE_MS).toBe(3000);
    expect(loadSandboxConfig({ SANDBOX_PAYOUT_SETTLE_MS: '0' }).SANDBOX_PAYOUT_SETTLE_MS).toBe(0);
    for (const value of ['soon', '-1', '1.5', '600001']) {
      expect(() => loadSandboxConfig({ SANDBOX_PAYOUT_SETTLE_MS: value })).toThrow('SANDBOX_PAYOUT_SETTLE_MS: must be an integer from 0 to 600000');
    }
  });
});
