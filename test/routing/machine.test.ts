// The routing decision (src/modules/routing/machine.ts, docs/routing.md): every condition operator on every field,
// each algorithm, circuit health, the shares of volume split and exploration over seeded draws, and the
// invariants of any decision over generated inputs.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { CircuitState, RoutingAlgorithm, RoutingCondition, RoutingFacts, SuccessRate } from '../../src/modules/routing/algorithm.ts';
import { conditionHolds, decideRoute, rateKeyOf, type RoutingInputs } from '../../src/modules/routing/machine.ts';
import { PAYMENT_METHOD_TYPES } from '../../src/modules/payments/methods.ts';
import { prng } from '../support/prng.ts';

const FACTS: RoutingFacts = {
  amount: 10_000,
  currency: 'eur',
  paymentMethodType: 'card',
  cardNetwork: 'visa',
  billingCountry: 'DE',
  metadata: { tier: 'gold' },
};
const NO_CARD: RoutingFacts = { ...FACTS, paymentMethodType: 'wallet', cardNetwork: null, billingCountry: null, metadata: {} };

function inputs(overrides: Partial<RoutingInputs> = {}): RoutingInputs {
  return { facts: FACTS, eligible: ['stripe-1', 'adyen-1', 'fauxpay-1'], health: new Map(), rates: new Map(), draw: 0.5, ...overrides };
}
const circuits = (entries: Record<string, CircuitState>) => new Map(Object.entries(entries));
const rateMap = (entries: Record<string, SuccessRate>) => new Map(Object.entries(entries));

describe('rateKeyOf', () => {
  it('is method:network:currency, the currency upper-case and a missing network "none"', () => {
    expect(rateKeyOf({ ...FACTS, cardNetwork: 'Visa' })).toBe('card:visa:EUR');
    expect(rateKeyOf(NO_CARD)).toBe('wallet:none:EUR');
  });
});

describe('conditionHolds', () => {
  const cases: [string, RoutingCondition, RoutingFacts, boolean][] = [
    // amount: every given bound must hold, each at and beside its edge (FACTS.amount is 10,000).
    ['amount without bounds', { field: 'amount' }, FACTS, true],
    ['amount gt, equal', { field: 'amount', gt: 10_000 }, FACTS, false],
    ['amount gt, below', { field: 'amount', gt: 9_999 }, FACTS, true],
    ['amount gte, equal', { field: 'amount', gte: 10_000 }, FACTS, true],
    ['amount gte, above', { field: 'amount', gte: 10_001 }, FACTS, false],
    ['amount lt, equal', { field: 'amount', lt: 10_000 }, FACTS, false],
    ['amount lt, above', { field: 'amount', lt: 10_001 }, FACTS, true],
    ['amount lte, equal', { field: 'amount', lte: 10_000 }, FACTS, true],
    ['amount lte, below', { field: 'amount', lte: 9_999 }, FACTS, false],
    ['amount between, at the low end', { field: 'amount', gte: 10_000, lte: 20_000 }, FACTS, true],
    ['amount between, at the high end', { field: 'amount', gte: 5_000, lte: 10_000 }, FACTS, true],
    ['amount between, outside', { field: 'amount', gte: 10_001, lte: 20_000 }, FACTS, false],
    ['amount, one of two bounds fails', { field: 'amount', gt: 5_000, lt: 10_000 }, FACTS, false],
    // currency: ISO codes compare case-insensitively.
    ['currency in, other case', { field: 'currency', in: ['EUR', 'USD'] }, FACTS, true],
    ['currency in, absent', { field: 'currency', in: ['USD'] }, FACTS, false],
    ['currency notIn, other case', { field: 'currency', notIn: ['Eur'] }, FACTS, false],
    ['currency notIn, absent', { field: 'currency', notIn: ['USD'] }, FACTS, true],
    ['currency in and notIn, both hold', { field: 'currency', in: ['EUR'], notIn: ['USD'] }, FACTS, true],
    ['currency in and notIn, notIn fails', { field: 'currency', in: ['EUR'], notIn: ['EUR'] }, FACTS, false],
    ['currency in an empty list', { field: 'currency', in: [] }, FACTS, false],
    ['currency notIn an empty list', { field: 'currency', notIn: [] }, FACTS, true],
    ['paymentMethodType in', { field: 'paymentMethodType', in: ['wallet', 'card'] }, FACTS, true],
    ['paymentMethodType in, absent', { field: 'paymentMethodType', in: ['wallet'] }, FACTS, false],
    ['paymentMethodType notIn', { field: 'paymentMethodType', notIn: ['card'] }, FACTS, false],
    ['paymentMethodType notIn, absent', { field: 'paymentMethodType', notIn: ['wallet'] }, FACTS, true],
    ['cardNetwork in, other case', { field: 'cardNetwork', in: ['VISA'] }, FACTS, true],
    ['cardNetwork in, absent', { field: 'cardNetwork', in: ['mastercard'] }, FACTS, false],
    ['cardNetwork notIn', { field: 'cardNetwork', notIn: ['visa'] }, FACTS, false],
    ['cardNetwork notIn, absent', { field: 'cardNetwork', notIn: ['amex'] }, FACTS, true],
    ['cardNetwork in, differing in a character that is not a letter', { field: 'cardNetwork', in: ['visa`'] }, { ...FACTS, cardNetwork: 'visa@' }, false],
    ['cardNetwork in, longer', { field: 'cardNetwork', in: ['visa2'] }, FACTS, false],
    ['cardNetwork in, shorter', { field: 'cardNetwork', in: ['vis'] }, FACTS, false],
    ['cardNetwork null, in', { field: 'cardNetwork', in: ['visa'] }, NO_CARD, false],
    ['cardNetwork null, notIn', { field: 'cardNetwork', notIn: ['visa'] }, NO_CARD, true],
    ['billingCountry in, other case', { field: 'billingCountry', in: ['de', 'fr'] }, FACTS, true],
    ['billingCountry in, absent', { field: 'billingCountry', in: ['FR'] }, FACTS, false],
    ['billingCountry notIn', { field: 'billingCountry', notIn: ['DE'] }, FACTS, false],
    ['billingCountry notIn, absent', { field: 'billingCountry', notIn: ['FR'] }, FACTS, true],
    ['billingCountry null, in', { field: 'billingCountry', in: ['DE'] }, NO_CARD, false],
    ['billingCountry null, notIn', { field: 'billingCountry', notIn: ['DE'] }, NO_CARD, true],
    // metadata: the merchant's own strings compare exactly; a missing key is in no list.
    ['metadata in', { field: 'metadata', key: 'tier', in: ['silver', 'gold'] }, FACTS, true],
    ['metadata in, other case', { field: 'metadata', key: 'tier', in: ['Gold'] }, FACTS, false],
    ['metadata notIn', { field: 'metadata', key: 'tier', notIn: ['gold'] }, FACTS, false],
    ['metadata notIn, absent', { field: 'metadata', key: 'tier', notIn: ['silver'] }, FACTS, true],
    ['metadata missing key, in', { field: 'metadata', key: 'tier', in: ['gold'] }, NO_CARD, false],
    ['metadata missing key, notIn', { field: 'metadata', key: 'tier', notIn: ['gold'] }, NO_CARD, true],
    ['metadata inherited key is missing', { field: 'metadata', key: 'constructor', in: [String(Object.prototype.constructor)] }, FACTS, false],
  ];

  it.each(cases)('%s', (_name, condition, facts, expected) => expect(conditionHolds(condition, facts)).toBe(expected));
});

describe('decideRoute: no algorithm and priority', () => {
  it('without an algorithm keeps the eligible accounts in the given order', () => {
    const decision = decideRoute(null, inputs());
    expect(decision).toMatchObject({ algorithm: 'priority', candidates: ['stripe-1', 'adyen-1', 'fauxpay-1'], chosen: 'stripe-1' });
    expect(decision.reason).toMatch(/no routing algorithm is set/i);
  });

  it('priority keeps its own order, only the eligible accounts, each once', () => {
    const algorithm: RoutingAlgorithm = { type: 'priority', connectorAccountIds: ['fauxpay-1', 'gone-1', 'stripe-1', 'fauxpay-1'] };
    expect(decideRoute(algorithm, inputs())).toMatchObject({ candidates: ['fauxpay-1', 'stripe-1'], chosen: 'fauxpay-1' });
  });

  it('priority with none of its accounts eligible chooses nothing and says so', () => {
    const decision = decideRoute({ type: 'priority', connectorAccountIds: ['gone-1'] }, inputs());
    expect(decision).toMatchObject({ candidates: [], chosen: null });
    expect(decision.reason).toMatch(/none of the set accounts can take this payment/);
  });

  it('with no eligible account chooses nothing, whatever the algorithm', () => {
    const decision = decideRoute({ type: 'priority', connectorAccountIds: ['stripe-1'] }, inputs({ eligible: [] }));
    expect(decision).toMatchObject({ algorithm: 'priority', candidates: [], chosen: null });
    expect(decision.reason).toMatch(/no connector account can take this payment/i);
  });
});

describe('decideRoute: volume split', () => {
  const seventyThirty: RoutingAlgorithm = {
    type: 'volumeSplit',
    splits: [
      { connectorAccountId: 'stripe-1', percent: 70 },
      { connectorAccountId: 'adyen-1', percent: 30 },
    ],
  };

  it.each([
    [0, 'stripe-1'],
    [0.6999999999, 'stripe-1'],
    [0.7, 'adyen-1'],
    [0.9999999999, 'adyen-1'],
  ])('70/30: draw %s goes first to %s', (draw, first) => {
    const decision = decideRoute(seventyThirty, inputs({ draw }));
    expect(decision.candidates).toEqual([first, first === 'stripe-1' ? 'adyen-1' : 'stripe-1']);
    expect(decision.reason).toContain(`fell in ${first}'s`);
  });

  it('renormalises over the eligible accounts: 50/(20 ineligible)/30 cuts at 50/80', () => {
    const algorithm: RoutingAlgorithm = {
      type: 'volumeSplit',
      splits: [
        { connectorAccountId: 'stripe-1', percent: 50 },
        { connectorAccountId: 'gone-1', percent: 20 },
        { connectorAccountId: 'adyen-1', percent: 30 },
      ],
    };
    expect(decideRoute(algorithm, inputs({ draw: 0.6249 })).chosen).toBe('stripe-1');
    const decision = decideRoute(algorithm, inputs({ draw: 0.625 }));
    expect(decision.candidates).toEqual(['adyen-1', 'stripe-1']);
    expect(decision.reason).toMatch(/of the 80 %/);
  });

  it('puts the others after the drawn one by percent, and never draws a 0 % account', () => {
    const algorithm: RoutingAlgorithm = {
      type: 'volumeSplit',
      splits: [
        { connectorAccountId: 'fauxpay-1', percent: 0 },
        { connectorAccountId: 'stripe-1', percent: 10 },
        { connectorAccountId: 'adyen-1', percent: 90 },
      ],
    };
    expect(decideRoute(algorithm, inputs({ draw: 0 })).candidates).toEqual(['stripe-1', 'adyen-1', 'fauxpay-1']);
    expect(decideRoute(algorithm, inputs({ draw: 0.5 })).candidates).toEqual(['adyen-1', 'stripe-1', 'fauxpay-1']);
  });

  it('sends 70/30 of 1,000 uniform draws within ±5 points', () => {
    const random = prng(20);
    let first = 0;
    for (let i = 0; i < 1000; i++) if (decideRoute(seventyThirty, inputs({ draw: random() })).chosen === 'stripe-1') first++;
    expect(first).toBeGreaterThanOrEqual(650);
    expect(first).toBeLessThanOrEqual(750);
  });
});

describe('decideRoute: rules', () => {
  const eurCards: RoutingCondition[] = [
    { field: 'currency', in: ['EUR'] },
    { field: 'paymentMethodType', in: ['card'] },
  ];
  const table = (...rules: { name: string; conditions: RoutingCondition[]; connectorAccountIds: string[] }[]): RoutingAlgorithm => ({
    type: 'rules',
    rules,
    defaultConnectorAccountIds: ['fauxpay-1', 'stripe-1'],
  });

  it('the first rule whose conditions all hold decides, even when a later one holds too', () => {
    const algorithm = table(
      { name: 'big', conditions: [{ field: 'amount', gt: 50_000 }], connectorAccountIds: ['stripe-1'] },
      { name: 'EUR cards', conditions: eurCards, connectorAccountIds: ['adyen-1', 'stripe-1'] },
      { name: 'everything', conditions: [], connectorAccountIds: ['fauxpay-1'] },
    );
    const decision = decideRoute(algorithm, inputs());
    expect(decision).toMatchObject({ algorithm: 'rules', candidates: ['adyen-1', 'stripe-1'], chosen: 'adyen-1' });
    expect(decision.reason).toBe('Rule 2, "EUR cards", matched: adyen-1, then stripe-1.');
  });

  it('a rule holds only when all its conditions do', () => {
    const algorithm = table({ name: 'EUR cards in FR', conditions: [...eurCards, { field: 'billingCountry', in: ['FR'] }], connectorAccountIds: ['adyen-1'] });
    expect(decideRoute(algorithm, inputs()).candidates).toEqual(['fauxpay-1', 'stripe-1']);
  });

  it('no rule holds: the defaults, and the reason says so', () => {
    const decision = decideRoute(table({ name: 'USD', conditions: [{ field: 'currency', in: ['USD'] }], connectorAccountIds: ['adyen-1'] }), inputs());
    expect(decision.candidates).toEqual(['fauxpay-1', 'stripe-1']);
    expect(decision.reason).toMatch(/^No rule matched: the defaults, fauxpay-1, then stripe-1\.$/);
  });

  it('a matching rule none of whose accounts is eligible falls to the defaults, and the reason says so', () => {
    const decision = decideRoute(table({ name: 'EUR cards', conditions: eurCards, connectorAccountIds: ['gone-1'] }), inputs());
    expect(decision.candidates).toEqual(['fauxpay-1', 'stripe-1']);
    expect(decision.reason).toContain('"EUR cards", matched but none of its accounts can take this payment: the defaults');
  });

  it('no default eligible either: nothing is chosen', () => {
    const decision = decideRoute({ type: 'rules', rules: [], defaultConnectorAccountIds: ['gone-1'] }, inputs());
    expect(decision).toMatchObject({ candidates: [], chosen: null });
    expect(decision.reason).toMatch(/none of the default accounts can take this payment/);
  });
});

describe('decideRoute: success rate', () => {
  const bySuccess = (explorationPercent: number, connectorAccountIds = ['stripe-1', 'adyen-1', 'fauxpay-1']): RoutingAlgorithm => ({
    type: 'successRate',
    connectorAccountIds,
    windowSize: 100,
    explorationPercent,
  });
  const rates = rateMap({ 'stripe-1': { successes: 40, total: 100 }, 'adyen-1': { successes: 90, total: 100 }, 'fauxpay-1': { successes: 1, total: 1 } });

  it('orders by the smoothed rate: 90/100 beats a lucky 1/1, which beats 40/100; the rates compared are on the decision', () => {
    const decision = decideRoute(bySuccess(0), inputs({ rates }));
    expect(decision.candidates).toEqual(['adyen-1', 'fauxpay-1', 'stripe-1']);
    expect(decision.rates).toEqual([
      { connectorAccountId: 'adyen-1', successes: 90, total: 100 },
      { connectorAccountId: 'fauxpay-1', successes: 1, total: 1 },
      { connectorAccountId: 'stripe-1', successes: 40, total: 100 },
    ]);
    expect(decision.reason).toContain('adyen-1 90 % (90/100)');
  });

  it('keeps the list order between equal rates and counts no data as 0/0', () => {
    const decision = decideRoute(bySuccess(0, ['fauxpay-1', 'stripe-1', 'gone-1']), inputs());
    expect(decision.candidates).toEqual(['fauxpay-1', 'stripe-1']);
    expect(decision.rates).toEqual([
      { connectorAccountId: 'fauxpay-1', successes: 0, total: 0 },
      { connectorAccountId: 'stripe-1', successes: 0, total: 0 },
    ]);
  });

  it('explores in explorationPercent of draws, uniformly among the others, whatever part of [0, 1) the draw is in', () => {
    const random = prng(7);
    const explored = { 'stripe-1': 0, 'fauxpay-1': 0 } as Record<string, number>;
    // Exploration counted apart for draws volume split would send to a 70 % share and to the 30 % one.
    const byHalf = { low: { draws: 0, explored: 0 }, high: { draws: 0, explored: 0 } };
    const draws = 20_000;
    for (let i = 0; i < draws; i++) {
      const draw = random();
      const decision = decideRoute(bySuccess(10), inputs({ rates, draw }));
      const half = draw < 0.7 ? byHalf.low : byHalf.high;
      half.draws++;
      if (decision.chosen !== 'adyen-1') {
        half.explored++;
        explored[decision.chosen!]!++;
        expect(decision.candidates[1]).toBe('adyen-1');
        expect(decision.reason).toContain('this payment explores (10 % do)');
      }
    }
    const share = (explored['stripe-1']! + explored['fauxpay-1']!) / draws;
    expect(share).toBeGreaterThan(0.09);
    expect(share).toBeLessThan(0.11);
    for (const half of Object.values(byHalf)) expect(Math.abs(half.explored / half.draws - 0.1)).toBeLessThan(0.015);
    expect(Math.abs(explored['stripe-1']! - explored['fauxpay-1']!) / (share * draws)).toBeLessThan(0.1);
  });

  it('never explores at 0 %, nor with a single account', () => {
    const random = prng(8);
    for (let i = 0; i < 2000; i++) {
      const draw = random();
      expect(decideRoute(bySuccess(0), inputs({ rates, draw })).chosen).toBe('adyen-1');
      expect(decideRoute(bySuccess(50, ['stripe-1']), inputs({ rates, draw })).candidates).toEqual(['stripe-1']);
    }
  });

  it('names the success rate key in its reason', () => {
    expect(decideRoute(bySuccess(0), inputs({ rates })).reason).toMatch(/^Success rate of card visa EUR payments, best first: /);
  });
});

describe('decideRoute: circuit health', () => {
  const priority: RoutingAlgorithm = { type: 'priority', connectorAccountIds: ['adyen-1', 'stripe-1', 'fauxpay-1'] };

  it('skips open accounts, names them, and keeps the others in order', () => {
    const decision = decideRoute(priority, inputs({ health: circuits({ 'adyen-1': 'open', 'fauxpay-1': 'closed' }) }));
    expect(decision).toMatchObject({ candidates: ['stripe-1', 'fauxpay-1'], chosen: 'stripe-1' });
    expect(decision.reason).toContain('adyen-1 skipped: circuit open');
  });

  it('fails open: every candidate open keeps them all, in order, and says so', () => {
    const health = circuits({ 'adyen-1': 'open', 'stripe-1': 'open', 'fauxpay-1': 'open' });
    const decision = decideRoute(priority, inputs({ health }));
    expect(decision.candidates).toEqual(['adyen-1', 'stripe-1', 'fauxpay-1']);
    expect(decision.reason).toContain('the circuits of all of them (adyen-1, stripe-1 and fauxpay-1) are open, so they are tried anyway');
  });

  it('fails open with a single open candidate too, and says so', () => {
    const rules: RoutingAlgorithm = { type: 'rules', rules: [], defaultConnectorAccountIds: ['adyen-1'] };
    const decision = decideRoute(rules, inputs({ health: circuits({ 'adyen-1': 'open' }) }));
    expect(decision.candidates).toEqual(['adyen-1']);
    expect(decision.reason).toContain("adyen-1's circuit is open, but no other account is left, so it is tried anyway");
  });

  it('treats half-open as closed: this payment is the probe', () => {
    const decision = decideRoute(priority, inputs({ health: circuits({ 'adyen-1': 'half_open', 'stripe-1': 'open' }) }));
    expect(decision.candidates).toEqual(['adyen-1', 'fauxpay-1']);
    expect(decision.reason).toBe(
      'Priority: adyen-1, then stripe-1, then fauxpay-1; stripe-1 skipped: circuit open; adyen-1 is half-open: this payment is the probe.',
    );
  });

  it.each<[string, RoutingAlgorithm]>([
    ['no algorithm', null as unknown as RoutingAlgorithm],
    [
      'volume split',
      {
        type: 'volumeSplit',
        splits: [
          { connectorAccountId: 'adyen-1', percent: 100 },
          { connectorAccountId: 'stripe-1', percent: 0 },
        ],
      },
    ],
    ['rules', { type: 'rules', rules: [], defaultConnectorAccountIds: ['adyen-1', 'stripe-1'] }],
    ['success rate', { type: 'successRate', connectorAccountIds: ['adyen-1', 'stripe-1'], windowSize: 100, explorationPercent: 0 }],
  ])('applies to %s too', (_name, algorithm) => {
    const decision = decideRoute(algorithm, inputs({ eligible: ['adyen-1', 'stripe-1'], health: circuits({ 'adyen-1': 'open' }) }));
    expect(decision).toMatchObject({ candidates: ['stripe-1'], chosen: 'stripe-1' });
    expect(decision.reason).toContain('adyen-1 skipped: circuit open');
  });

  it('names accounts through the lookup it is given', () => {
    const names: Record<string, string> = { 'adyen-1': 'Adyen EU', 'stripe-1': 'Stripe US', 'fauxpay-1': 'FauxPay' };
    const decision = decideRoute(priority, inputs({ health: circuits({ 'adyen-1': 'open' }) }), (id) => names[id]!);
    expect(decision.reason).toBe('Priority: Adyen EU, then Stripe US, then FauxPay; Adyen EU skipped: circuit open.');
    expect(decision.chosen).toBe('stripe-1');
  });
});

describe('decideRoute: invariants over generated inputs', () => {
  const ACCOUNTS = ['a-1', 'a-2', 'a-3', 'a-4', 'a-5'];
  const account = fc.constantFrom(...ACCOUNTS);
  const accounts = fc.array(account, { maxLength: 7 });
  const values = fc.array(fc.constantFrom('EUR', 'usd', 'card', 'wallet', 'visa', 'DE', 'fr', 'gold'), { maxLength: 3 });
  const list = { in: fc.option(values, { nil: undefined }), notIn: fc.option(values, { nil: undefined }) };
  const bound = fc.option(fc.integer({ min: 0, max: 20_000 }), { nil: undefined });
  const condition: fc.Arbitrary<RoutingCondition> = fc.oneof(
    fc.record({ field: fc.constant('amount' as const), gt: bound, gte: bound, lt: bound, lte: bound }),
    fc.record({ field: fc.constantFrom('currency' as const, 'paymentMethodType' as const, 'cardNetwork' as const, 'billingCountry' as const), ...list }),
    fc.record({ field: fc.constant('metadata' as const), key: fc.constantFrom('tier', 'channel'), ...list }),
  );
  const algorithm: fc.Arbitrary<RoutingAlgorithm | null> = fc.oneof(
    fc.constant(null),
    fc.record({ type: fc.constant('priority' as const), connectorAccountIds: accounts }),
    fc.record({
      type: fc.constant('volumeSplit' as const),
      splits: fc.array(fc.record({ connectorAccountId: account, percent: fc.integer({ min: 0, max: 100 }) }), { maxLength: 5 }),
    }),
    fc.record({
      type: fc.constant('rules' as const),
      rules: fc.array(fc.record({ name: fc.string(), conditions: fc.array(condition, { maxLength: 3 }), connectorAccountIds: accounts }), { maxLength: 5 }),
      defaultConnectorAccountIds: accounts,
    }),
    fc.record({
      type: fc.constant('successRate' as const),
      connectorAccountIds: accounts,
      windowSize: fc.constant(100),
      explorationPercent: fc.integer({ min: 0, max: 50 }),
    }),
  );
  const facts: fc.Arbitrary<RoutingFacts> = fc.record({
    amount: fc.integer({ min: 0, max: 20_000 }),
    currency: fc.constantFrom('EUR', 'usd'),
    paymentMethodType: fc.constantFrom(...PAYMENT_METHOD_TYPES),
    cardNetwork: fc.option(fc.constantFrom('visa', 'mastercard'), { nil: null }),
    billingCountry: fc.option(fc.constantFrom('DE', 'FR'), { nil: null }),
    metadata: fc.dictionary(fc.constantFrom('tier', 'channel'), fc.constantFrom('gold', 'web')),
  });
  const generated = fc.record({
    algorithm,
    facts,
    eligible: fc.uniqueArray(account),
    health: fc.dictionary(account, fc.constantFrom<CircuitState>('closed', 'open', 'half_open')),
    rates: fc.dictionary(
      account,
      fc.integer({ min: 0, max: 100 }).chain((total) => fc.record({ successes: fc.integer({ min: 0, max: total }), total: fc.constant(total) })),
    ),
    draw: fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
  });

  it('candidates are eligible, unique, open only when all are, chosen first; the reason is one sentence', () => {
    fc.assert(
      fc.property(generated, ({ algorithm, facts, eligible, health, rates, draw }) => {
        const circuit = circuits(health);
        const decision = decideRoute(algorithm, { facts, eligible, health: circuit, rates: rateMap(rates), draw });
        const { candidates } = decision;
        expect(candidates.every((id) => eligible.includes(id))).toBe(true);
        expect(new Set(candidates).size).toBe(candidates.length);
        expect(decision.chosen).toBe(candidates[0] ?? null);
        const open = candidates.filter((id) => circuit.get(id) === 'open');
        expect(open.length === 0 || open.length === candidates.length).toBe(true);
        expect(decision.algorithm).toBe(algorithm?.type ?? 'priority');
        expect(decision.reason).toMatch(/^[A-Z].*\.$/s);
        if (algorithm === null) expect(candidates).toEqual(eligible.filter((id) => open.length > 0 || circuit.get(id) !== 'open'));
      }),
      { seed: 20, numRuns: 2000 },
    );
  });
});
