// The routing decision (docs/routing.md): which connector accounts a payment goes to, in what order, and the
// sentence that says why. Pure: the service gathers the facts, the eligible accounts, circuit states, success
// rates and a draw, and stores what this returns; the same inputs always give the same decision.
//
// 1. The algorithm orders the eligible accounts it names (never any other, never twice):
//    - none set: `eligible` as given (today's behaviour);
//    - priority: its accounts that are eligible, in its order;
//    - volumeSplit: the eligible accounts' percents (renormalised over them) cut [0, 1) into shares in the
//      split's order; the account whose share holds `draw` goes first, the others follow by percent;
//    - rules: the first rule whose conditions all hold decides (its eligible accounts; none of them eligible:
//      the defaults); no rule holds: the defaults;
//    - successRate: its eligible accounts by smoothed rate (successes + 1) / (total + 2), so an account with few
//      answers is neither trusted nor condemned, ties in its order; a share explorationPercent / 100 of payments
//      puts another account than the best first, so a recovered connector is noticed. That share is decided by
//      the draw's low bits (frac(draw × 2^16)), not by `draw` itself, so it is independent of where `draw`
//      falls (a draw of 32 random bits leaves 16 for it); which other account explores is uniform among them.
// 2. Health, for every algorithm: accounts whose circuit is open are skipped; when every account the algorithm
//    chose is open they are all kept, in order (failing open beats refusing the payment). Half-open counts as
//    closed: the service marks it so only for the one payment holding the probe.
// 3. The first candidate is chosen; no candidate: chosen is null.
import type { CircuitState, RoutingAlgorithm, RoutingCondition, RoutingDecision, RoutingFacts, SuccessRate } from './algorithm.ts';

export interface RoutingInputs {
  facts: RoutingFacts;
  /** Account ids that can take this payment (enabled, its method, currency, country, the payment's own connector list), in the profile's default order. */
  eligible: readonly string[];
  /** Circuit state per account (missing = closed). The service has already turned a half-open account into 'half_open' only for the one payment that holds its probe, 'open' for everyone else. */
  health: ReadonlyMap<string, CircuitState>;
  /** For successRate: each account's recent rate under the facts' key (missing = no data). */
  rates: ReadonlyMap<string, SuccessRate>;
  /** A number in [0, 1) drawn for this payment, stable for it (the service derives it from the payment id): volume split and exploration use it. */
  draw: number;
}

/** How a reason names a connector account; the ids themselves unless the caller knows better names. */
export type AccountName = (connectorAccountId: string) => string;

/** The key success rates are kept under: method, card network and currency (`card:visa:EUR`, `wallet:none:USD`). */
export function rateKeyOf(facts: RoutingFacts): string {
  return `${facts.paymentMethodType}:${facts.cardNetwork?.toLowerCase() ?? 'none'}:${facts.currency.toUpperCase()}`;
}

/** Whether one condition of a rule holds for the payment (the comment of RoutingCondition says how each field is read). */
export function conditionHolds(condition: RoutingCondition, facts: RoutingFacts): boolean {
  if (condition.field === 'amount') {
    const { gt, gte, lt, lte } = condition;
    const amount = facts.amount;
    return (
      (gt === undefined || amount > gt) && (gte === undefined || amount >= gte) && (lt === undefined || amount < lt) && (lte === undefined || amount <= lte)
    );
  }
  // Metadata values are the merchant's own strings and compare exactly; the other fields are codes (ISO
  // currencies and countries, card networks, method types) whose letters compare case-insensitively.
  const exact = condition.field === 'metadata';
  const value = exact ? (Object.hasOwn(facts.metadata, condition.key) ? facts.metadata[condition.key]! : null) : facts[condition.field];
  return (condition.in === undefined || listed(condition.in, value, exact)) && (condition.notIn === undefined || !listed(condition.notIn, value, exact));
}

/** Whether `value` is in `list`; a missing value is in no list. */
function listed(list: readonly string[], value: string | null, exact: boolean): boolean {
  if (value === null) return false;
  for (const item of list) if (exact ? item === value : sameCode(item, value)) return true;
  return false;
}

/**
 * Equal but for the case of ASCII letters, without lower-casing copies: a rules table is read for every
 * payment, and allocating per list item made 100 rules cost about four times the 50 µs budget (docs/routing.md).
 */
function sameCode(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    const lower = x | 0x20;
    if (x !== y && (lower !== (y | 0x20) || lower < 0x61 || lower > 0x7a)) return false;
  }
  return true;
}

/** The algorithm's order of the eligible accounts, before health, and the clause that explains it. */
interface Ordering {
  order: string[];
  clause: string;
  rates?: RoutingDecision['rates'];
}

/** frac(draw × 2^16), the draw's low bits, decides exploration (the comment at the top says why). */
const EXPLORATION_DRAW_SCALE = 2 ** 16;

export function decideRoute(algorithm: RoutingAlgorithm | null, inputs: RoutingInputs, nameOf: AccountName = (id) => id): RoutingDecision {
  const type = algorithm?.type ?? 'priority';
  if (inputs.eligible.length === 0)
    return decision(type, [], ['no connector account can take this payment (its method, currency, country or connector list rule them all out)']);
  const ordering = orderOf(algorithm, inputs, nameOf);
  const { candidates, clauses } = afterHealth(ordering.order, inputs.health, nameOf);
  return { ...decision(type, candidates, [ordering.clause, ...clauses]), ...(ordering.rates && { rates: ordering.rates }) };
}

function decision(algorithm: RoutingDecision['algorithm'], candidates: string[], clauses: string[]): RoutingDecision {
  const sentence = clauses.join('; ');
  return { algorithm, candidates, chosen: candidates[0] ?? null, reason: `${sentence.charAt(0).toUpperCase()}${sentence.slice(1)}.` };
}

function orderOf(algorithm: RoutingAlgorithm | null, inputs: RoutingInputs, nameOf: AccountName): Ordering {
  const eligible = new Set(inputs.eligible);
  const usable = (ids: readonly string[]) => [...new Set(ids)].filter((id) => eligible.has(id));
  switch (algorithm?.type) {
    case undefined:
      return { order: [...new Set(inputs.eligible)], clause: "no routing algorithm is set, so the eligible accounts go in the profile's default order" };
    case 'priority': {
      const order = usable(algorithm.connectorAccountIds);
      return {
        order,
        clause: order.length ? `priority: ${inOrder(order, nameOf)}` : 'priority: none of the set accounts can take this payment',
      };
    }
    case 'volumeSplit':
      return volumeSplit(algorithm.splits, usable, inputs.draw, nameOf);
    case 'rules':
      return rules(algorithm, inputs.facts, usable, nameOf);
    case 'successRate':
      return successRate(algorithm, usable(algorithm.connectorAccountIds), inputs, nameOf);
  }
}

function volumeSplit(
  splits: Extract<RoutingAlgorithm, { type: 'volumeSplit' }>['splits'],
  usable: (ids: readonly string[]) => string[],
  draw: number,
  nameOf: AccountName,
): Ordering {
  const shares = usable(splits.map((split) => split.connectorAccountId)).map((id) => splits.find((split) => split.connectorAccountId === id)!);
  // A stable sort: equal percents keep the split's order.
  const byPercent = [...shares].sort((a, b) => b.percent - a.percent).map((share) => share.connectorAccountId);
  const total = shares.reduce((sum, share) => sum + share.percent, 0);
  if (shares.length === 0) return { order: [], clause: "volume split: none of the split's accounts can take this payment" };
  if (total <= 0) return { order: byPercent, clause: "volume split: the eligible accounts have no share, so they go in the split's order" };
  // draw < cumulative / total rather than draw × total < cumulative: 70 / 100 is exactly the double 0.7, so a
  // draw of 0.7 falls in the second share of a 70/30 split, as it should.
  // The last share's bound is total / total, exactly 1, so only a draw outside the contract's [0, 1) reaches `??`.
  let cumulative = 0;
  const first = shares.find((share) => draw < (cumulative += share.percent) / total) ?? shares.at(-1)!;
  const rest = byPercent.filter((id) => id !== first.connectorAccountId);
  const renormalised = total === 100 ? '' : ` (shares taken of the ${total} % whose accounts can take this payment)`;
  const followers = rest.length ? `, then ${inOrder(rest, nameOf)} by share` : '';
  return {
    order: [first.connectorAccountId, ...rest],
    clause: `volume split: draw ${draw.toFixed(3)} fell in ${nameOf(first.connectorAccountId)}'s ${first.percent} % share${renormalised}${followers}`,
  };
}

function rules(
  algorithm: Extract<RoutingAlgorithm, { type: 'rules' }>,
  facts: RoutingFacts,
  usable: (ids: readonly string[]) => string[],
  nameOf: AccountName,
): Ordering {
  const index = algorithm.rules.findIndex((rule) => rule.conditions.every((condition) => conditionHolds(condition, facts)));
  const defaults = usable(algorithm.defaultConnectorAccountIds);
  const toDefaults = defaults.length ? `the defaults, ${inOrder(defaults, nameOf)}` : 'and none of the default accounts can take this payment either';
  if (index === -1) return { order: defaults, clause: `no rule matched: ${toDefaults}` };
  const rule = algorithm.rules[index]!;
  const matched = `rule ${index + 1}, "${rule.name}", matched`;
  const order = usable(rule.connectorAccountIds);
  if (order.length) return { order, clause: `${matched}: ${inOrder(order, nameOf)}` };
  return { order: defaults, clause: `${matched} but none of its accounts can take this payment: ${toDefaults}` };
}

function successRate(algorithm: Extract<RoutingAlgorithm, { type: 'successRate' }>, listed: string[], inputs: RoutingInputs, nameOf: AccountName): Ordering {
  const rates = listed.map((connectorAccountId) => ({ connectorAccountId, ...(inputs.rates.get(connectorAccountId) ?? { successes: 0, total: 0 }) }));
  if (rates.length === 0) return { order: [], clause: "success rate: none of the algorithm's accounts can take this payment", rates };
  const smoothed = (rate: SuccessRate) => (rate.successes + 1) / (rate.total + 2);
  // A stable sort: equal rates keep the algorithm's order.
  const ranked = [...rates].sort((a, b) => smoothed(b) - smoothed(a));
  const [best, ...others] = ranked.map((rate) => rate.connectorAccountId) as [string, ...string[]];
  const share = Math.min(Math.max(algorithm.explorationPercent, 0), 100) / 100;
  const probe = (inputs.draw * EXPLORATION_DRAW_SCALE) % 1;
  const compared = ranked.map((rate) => `${nameOf(rate.connectorAccountId)} ${shownRate(rate)}`).join(', ');
  const of = `success rate of ${inputs.facts.paymentMethodType}${inputs.facts.cardNetwork ? ` ${inputs.facts.cardNetwork}` : ''} ${inputs.facts.currency.toUpperCase()} payments`;
  if (others.length === 0 || probe >= share) return { order: [best, ...others], clause: `${of}, best first: ${compared}`, rates: ranked };
  // probe / share is uniform in [0, 1) given probe < share: it picks which other account explores.
  const explorer = others[Math.min(others.length - 1, Math.floor((probe / share) * others.length))]!;
  return {
    order: [explorer, best, ...others.filter((id) => id !== explorer)],
    clause: `${of}: this payment explores (${algorithm.explorationPercent} % do), so ${nameOf(explorer)} goes before the best; by rate: ${compared}`,
    rates: ranked,
  };
}

function shownRate({ successes, total }: SuccessRate): string {
  return total === 0 ? '(no answers yet)' : `${Math.round((successes / total) * 100)} % (${successes}/${total})`;
}

function afterHealth(order: string[], health: ReadonlyMap<string, CircuitState>, nameOf: AccountName): { candidates: string[]; clauses: string[] } {
  const open = order.filter((id) => health.get(id) === 'open');
  const failOpen = open.length > 0 && open.length === order.length;
  const candidates = failOpen ? order : order.filter((id) => health.get(id) !== 'open');
  const probes = candidates.filter((id) => health.get(id) === 'half_open');
  const clauses = [
    ...(failOpen
      ? [
          open.length === 1
            ? `${nameOf(open[0]!)}'s circuit is open, but no other account is left, so it is tried anyway`
            : `the circuits of all of them (${names(open, nameOf)}) are open, so they are tried anyway, in order`,
        ]
      : open.length
        ? [`${names(open, nameOf)} skipped: circuit open`]
        : []),
    ...(probes.length ? [`${names(probes, nameOf)} ${probes.length === 1 ? 'is' : 'are'} half-open: this payment is the probe`] : []),
  ];
  return { candidates, clauses };
}

/** "a, then b, then c": the order accounts are tried in. */
function inOrder(ids: readonly string[], nameOf: AccountName): string {
  return ids.map(nameOf).join(', then ');
}

/** "a", "a and b", "a, b and c". */
function names(ids: readonly string[], nameOf: AccountName): string {
  const shown = ids.map(nameOf);
  return shown.length < 2 ? (shown[0] ?? '') : `${shown.slice(0, -1).join(', ')} and ${shown.at(-1)}`;
}
