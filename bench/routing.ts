// The routing decision's own cost (issue 20: a rules table of 100 rules decides in under 50 µs at p50):
// decideRoute in the bench process, no stack, on a table whose every rule is read to its last condition (the
// payment matches only the last rule), beside its ceiling, a priority list over the same accounts: the decision
// with no rule to read. One call is near the clock's resolution, so each sample times a batch of calls.
import type { RoutingAlgorithm, RoutingCondition, RoutingRule } from '../src/modules/routing/algorithm.ts';
import { decideRoute, type RoutingInputs } from '../src/modules/routing/machine.ts';
import { ratio, summarize } from './lib/stats.ts';

const RULES = 100;
const CALLS_PER_SAMPLE = 100;
const SAMPLES = 2000;
const WARMUP_CALLS = 20_000;
const ACCOUNTS = ['stripe-1', 'adyen-1', 'fauxpay-1'];

/** Rule i holds for payments whose metadata segment is `segment-i`; its other conditions hold for the benched payment. */
function rule(index: number): RoutingRule {
  const conditions: RoutingCondition[] = [
    { field: 'amount', gte: 1_000, lte: 500_000 },
    { field: 'currency', in: ['USD', 'GBP', 'CHF', 'SEK', 'EUR'] },
    { field: 'cardNetwork', notIn: ['amex', 'discover', 'jcb', 'unionpay', 'diners'] },
    { field: 'metadata', key: 'segment', in: [`segment-${index}`, `segment-${index}-b`] },
  ];
  return { name: `segment ${index}`, conditions, connectorAccountIds: [ACCOUNTS[index % ACCOUNTS.length]!, ACCOUNTS[(index + 1) % ACCOUNTS.length]!] };
}

const rules: RoutingAlgorithm = { type: 'rules', rules: Array.from({ length: RULES }, (_, index) => rule(index)), defaultConnectorAccountIds: ACCOUNTS };
const priority: RoutingAlgorithm = { type: 'priority', connectorAccountIds: ACCOUNTS };

const inputs: RoutingInputs = {
  facts: {
    amount: 12_500,
    currency: 'eur',
    paymentMethodType: 'card',
    cardNetwork: 'visa',
    billingCountry: 'DE',
    metadata: { segment: `segment-${RULES - 1}`, channel: 'web' },
  },
  eligible: ACCOUNTS,
  // One open account among the candidates, so the health step skips one as it would in production.
  health: new Map([['adyen-1', 'open']]),
  rates: new Map(),
  draw: 0.42,
};

/** Microseconds per call, one sample per batch of CALLS_PER_SAMPLE. */
function time(algorithm: RoutingAlgorithm): number[] {
  let chosen = 0;
  for (let call = 0; call < WARMUP_CALLS; call++) chosen += decideRoute(algorithm, inputs).candidates.length;
  const samples: number[] = [];
  for (let sample = 0; sample < SAMPLES; sample++) {
    const started = process.hrtime.bigint();
    for (let call = 0; call < CALLS_PER_SAMPLE; call++) chosen += decideRoute(algorithm, inputs).candidates.length;
    samples.push(Number(process.hrtime.bigint() - started) / 1000 / CALLS_PER_SAMPLE);
  }
  // Read, so the calls cannot be optimised away.
  if (chosen === 0) throw new Error('routing bench: no decision chose an account');
  return samples;
}

export function benchRouting() {
  const check = decideRoute(rules, inputs);
  if (!check.reason.startsWith(`Rule ${RULES}, `)) throw new Error(`routing bench: expected the last rule to decide, got "${check.reason}"`);
  const rulesUs = summarize(time(rules));
  const priorityUs = summarize(time(priority));
  return {
    rules: RULES,
    conditionsPerRule: rule(0).conditions.length,
    callsPerSample: CALLS_PER_SAMPLE,
    samples: SAMPLES,
    rulesUs,
    priorityUs,
    ratios: { p50ToPriority: ratio(rulesUs.p50, priorityUs.p50) },
  };
}
