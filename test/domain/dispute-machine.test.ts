// The Dispute state machine and the evidence rules, driven by the code's own tables
// (DISPUTE_TRANSITIONS, DISPUTE_STATUSES, DISPUTE_STATUS_EVENTS); only Hyperswitch's event names are restated.
import { describe, expect, it } from 'vitest';
import {
  DISPUTE_STATUSES,
  DISPUTE_STATUS_EVENTS,
  DISPUTE_TARGETS,
  DISPUTE_TRANSITIONS,
  disputePath,
  disputeHold,
  evidenceProblem,
  isDisputeMoveAllowed,
  type DisputeStatus,
} from '../../src/modules/disputes/machine.ts';
import { EVENT_TYPES } from '../../src/modules/events/catalog.ts';
import { prng } from '../support/prng.ts';

const pairs = DISPUTE_STATUSES.flatMap((from) => DISPUTE_STATUSES.map((to) => [from, to] as const));
const inTable = (from: DisputeStatus, to: DisputeStatus) => DISPUTE_TRANSITIONS.some((row) => row.from === from && row.to === to);

describe('the dispute transition table', () => {
  it.each(pairs)('%s → %s is allowed exactly when the table has the row', (from, to) => {
    expect(isDisputeMoveAllowed(from, to)).toBe(inTable(from, to));
  });

  it('opens every dispute OPENED; only the merchant’s answers and the network’s decisions move it on', () => {
    expect(DISPUTE_TRANSITIONS.filter((row) => row.from === null).map((row) => row.to)).toEqual(['OPENED']);
    const terminal = DISPUTE_STATUSES.filter((status) => !DISPUTE_TRANSITIONS.some((row) => row.from === status));
    expect(terminal.sort()).toEqual(['ACCEPTED', 'CANCELLED', 'EXPIRED', 'LOST', 'WON']);
    // A decision (won, lost) needs a challenge first.
    expect(DISPUTE_TRANSITIONS.filter((row) => row.to === 'WON' || row.to === 'LOST').map((row) => row.from)).toEqual(['CHALLENGED', 'CHALLENGED']);
  });

  it('maps every processor status onto a status, and every status onto its dispute_* event', () => {
    expect(new Set(Object.values(DISPUTE_TARGETS))).toEqual(new Set(DISPUTE_STATUSES));
    expect(Object.values(DISPUTE_STATUS_EVENTS).sort()).toEqual(EVENT_TYPES.filter((type) => type.startsWith('dispute_')).sort());
    for (const status of DISPUTE_STATUSES) expect(DISPUTE_STATUS_EVENTS[status]).toBe(`dispute_${status.toLowerCase()}`);
  });
});

describe('disputePath', () => {
  it.each([
    ['OPENED', 'OPENED', []],
    ['OPENED', 'ACCEPTED', ['ACCEPTED']],
    ['OPENED', 'WON', ['CHALLENGED', 'WON']],
    ['OPENED', 'LOST', ['CHALLENGED', 'LOST']],
    ['CHALLENGED', 'LOST', ['LOST']],
    ['EXPIRED', 'WON', null],
    ['WON', 'OPENED', null],
    ['ACCEPTED', 'CHALLENGED', null],
  ] as const)('%s → %s: %j', (from, to, expected) => {
    expect(disputePath(from, to)).toEqual(expected);
  });

  it.each(pairs)('%s → %s follows the table’s rows only', (from, to) => {
    const path = disputePath(from, to);
    if (path === null) return;
    let at: DisputeStatus = from;
    for (const step of path) {
      expect(isDisputeMoveAllowed(at, step)).toBe(true);
      at = step;
    }
    expect(at).toBe(to);
  });
});

describe('evidenceProblem', () => {
  it.each([
    [{ receipt: 'Order 1234' }, null],
    [Object.fromEntries(Array.from({ length: 20 }, (_, index) => [`doc_${index}`, 'x'])), null],
    [{ receipt: 'x'.repeat(5000) }, null],
    [null, { field: 'evidence', rule: 'must be an object of named text fields' }],
    ['text', { field: 'evidence', rule: 'must be an object of named text fields' }],
    [['a'], { field: 'evidence', rule: 'must be an object of named text fields' }],
    [{}, { field: 'evidence', rule: 'must have 1 to 20 fields' }],
    [Object.fromEntries(Array.from({ length: 21 }, (_, index) => [`doc_${index}`, 'x'])), { field: 'evidence', rule: 'must have 1 to 20 fields' }],
    [{ Receipt: 'x' }, { field: 'evidence', rule: 'field names must be 1 to 40 lowercase letters, digits or _' }],
    [{ ['a'.repeat(41)]: 'x' }, { field: 'evidence', rule: 'field names must be 1 to 40 lowercase letters, digits or _' }],
    [{ receipt: '' }, { field: 'evidence.receipt', rule: 'must be text of 1 to 5000 characters' }],
    [{ receipt: 'x'.repeat(5001) }, { field: 'evidence.receipt', rule: 'must be text of 1 to 5000 characters' }],
    [{ receipt: 'a\u0000b' }, { field: 'evidence.receipt', rule: 'must be text of 1 to 5000 characters' }],
    [{ receipt: 42 }, { field: 'evidence.receipt', rule: 'must be text of 1 to 5000 characters' }],
  ])('%j → %j', (evidence, expected) => {
    expect(evidenceProblem(evidence)).toEqual(expected);
  });

  it('never throws on hostile JSON, and accepts only objects of short text', () => {
    const random = prng(11);
    const values = [null, true, 0, -1, 1e308, '', 'x', 'x'.repeat(6000), [], {}, { a: 'b' }, '\u0000'];
    for (let run = 0; run < 2000; run += 1) {
      const evidence: Record<string, unknown> = {};
      const size = Math.floor(random() * 4);
      for (let index = 0; index < size; index += 1)
        evidence[String.fromCharCode(97 + Math.floor(random() * 30)) + index] = values[Math.floor(random() * values.length)];
      const problem = evidenceProblem(evidence);
      const valid =
        size > 0 &&
        Object.entries(evidence).every(
          ([key, value]) => /^[a-z0-9_]+$/.test(key) && typeof value === 'string' && value.length >= 1 && value.length <= 5000 && !value.includes('\u0000'),
        );
      expect(problem === null).toBe(valid);
    }
  });
});

describe('a first report of a dispute against its payment', () => {
  const payment = { status: 'SUCCEEDED', amount: 850, surchargeAmount: 50, amountReceived: 900, currency: 'EUR' } as const;
  it.each([
    [{ amount: 900, currency: 'EUR' }, null],
    [{ amount: 1, currency: 'EUR' }, null],
    [{ amount: 901, currency: 'EUR' }, 'dispute_amount_over_captured'],
    [{ amount: 900, currency: 'USD' }, 'dispute_currency_mismatch'],
  ] as const)('%o is held with %s', (dispute, hold) => {
    expect(disputeHold(dispute, payment)).toBe(hold);
  });

  it('refuses more than a payment whose status is final captured', () => {
    for (const status of ['PARTIALLY_CAPTURED', 'FAILED', 'CANCELLED', 'EXPIRED', 'CANCELLED_POST_CAPTURE'] as const) {
      expect(disputeHold({ amount: 1, currency: 'EUR' }, { ...payment, status, amountReceived: 0 })).toBe('dispute_amount_over_captured');
    }
  });

  it('waits for the capture of a payment that may still record one, up to its amount plus surcharge', () => {
    for (const status of ['PROCESSING', 'REQUIRES_CAPTURE', 'PARTIALLY_AUTHORIZED', 'REQUIRES_CUSTOMER_ACTION'] as const) {
      const pending = { ...payment, status, amountReceived: 0 };
      expect(disputeHold({ amount: 900, currency: 'EUR' }, pending)).toBe('dispute_awaiting_capture');
      expect(disputeHold({ amount: 901, currency: 'EUR' }, pending)).toBe('dispute_amount_over_captured');
      expect(disputeHold({ amount: 900, currency: 'USD' }, pending)).toBe('dispute_currency_mismatch');
    }
  });
});
