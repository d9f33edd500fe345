// The Refund state machine and the refund amount rule, driven by the code's own tables
// (REFUND_TRANSITIONS, REFUND_STATUSES, REFUND_STATUS_EVENTS); only Hyperswitch's event mapping is restated.
import { describe, expect, it } from 'vitest';
import { isEventType } from '../../src/modules/events/catalog.ts';
import {
  isRefundMoveAllowed,
  OPEN_REFUND_STATUSES,
  REFUND_STATUSES,
  REFUND_STATUS_EVENTS,
  REFUND_TARGETS,
  REFUND_TRANSITIONS,
  RESERVING_REFUND_STATUSES,
  refundAmount,
  type RefundStatus,
} from '../../src/modules/refunds/machine.ts';
import { prng } from '../support/prng.ts';

const pairs = REFUND_STATUSES.flatMap((from) => REFUND_STATUSES.map((to) => [from, to] as const));
const inTable = (from: RefundStatus, to: RefundStatus) => REFUND_TRANSITIONS.some((row) => row.from === from && row.to === to);

describe('the refund transition table', () => {
  it.each(pairs)('%s → %s is allowed exactly when the table has the row', (from, to) => {
    expect(isRefundMoveAllowed(from, to)).toBe(inTable(from, to));
  });

  it('starts every refund PENDING, and ends only in SUCCEEDED or FAILED', () => {
    expect(REFUND_TRANSITIONS.filter((row) => row.from === null).map((row) => row.to)).toEqual(['PENDING']);
    const terminal = REFUND_STATUSES.filter((status) => !REFUND_TRANSITIONS.some((row) => row.from === status));
    expect(terminal).toEqual(['SUCCEEDED', 'FAILED']);
    // Open statuses are exactly those that can still move (the sync schedule watches them).
    expect([...OPEN_REFUND_STATUSES].sort()).toEqual(REFUND_STATUSES.filter((status) => !terminal.includes(status)).sort());
  });

  it('reaches every status from PENDING', () => {
    const reached = new Set<RefundStatus>(['PENDING']);
    for (let grew = true; grew;) {
      grew = false;
      for (const row of REFUND_TRANSITIONS) {
        if (row.from !== null && reached.has(row.from) && !reached.has(row.to)) {
          reached.add(row.to);
          grew = true;
        }
      }
    }
    expect([...reached].sort()).toEqual([...REFUND_STATUSES].sort());
  });

  it('maps every processor answer to a status, and a failed refund alone gives its amount back', () => {
    expect(new Set(Object.values(REFUND_TARGETS))).toEqual(new Set(REFUND_STATUSES));
    expect(REFUND_STATUSES.filter((status) => !RESERVING_REFUND_STATUSES.has(status))).toEqual(['FAILED']);
  });

  it('emits Hyperswitch’s refund events, with the seed’s refund_review for REVIEW, and none while pending', () => {
    expect(REFUND_STATUS_EVENTS).toEqual({ PENDING: null, SUCCEEDED: 'refund_succeeded', FAILED: 'refund_failed', REVIEW: 'refund_review' });
    for (const event of Object.values(REFUND_STATUS_EVENTS)) if (event !== null) expect(isEventType(event)).toBe(true);
  });
});

describe('refundAmount', () => {
  it.each([
    [undefined, 1250, { amount: 1250 }],
    [1, 1250, { amount: 1 }],
    [1250, 1250, { amount: 1250 }],
    [1251, 1250, { problem: 'must be at most 1250, the captured amount not yet refunded or held by pending refunds' }],
    [0, 1250, { problem: 'must be a whole number of minor units, at least 1' }],
    [-1, 1250, { problem: 'must be a whole number of minor units, at least 1' }],
    [1.5, 1250, { problem: 'must be a whole number of minor units, at least 1' }],
    [undefined, 0, { problem: 'nothing is left to refund: the captured amount is fully refunded or held by pending refunds' }],
    [5, 0, { problem: 'nothing is left to refund: the captured amount is fully refunded or held by pending refunds' }],
  ])('requested %s of %s refundable → %j', (requested, refundable, expected) => {
    expect(refundAmount(requested, refundable)).toEqual(expected);
  });

  it('never lets a sequence of refunds exceed what was captured (random sequences)', () => {
    const random = prng(7);
    for (let run = 0; run < 500; run += 1) {
      const captured = 1 + Math.floor(random() * 10_000);
      let held = 0;
      for (let step = 0; step < 20; step += 1) {
        const requested = random() < 0.2 ? undefined : Math.floor(random() * captured * 0.6) - 5;
        const decided = refundAmount(requested, captured - held);
        if ('amount' in decided) {
          expect(decided.amount).toBeGreaterThanOrEqual(1);
          held += decided.amount;
        }
        expect(held).toBeLessThanOrEqual(captured);
      }
    }
  });
});
