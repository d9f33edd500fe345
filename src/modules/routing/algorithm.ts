// The routing algorithms a business profile can set (docs/routing.md), as plain data: what setRoutingAlgorithm
// stores, what machine.ts decides with, what a payment's routing decision explains. Pure: types and limits only.
import type { PaymentMethodType } from '../payments/methods.ts';

/** A condition of a rule on one fact of the payment; a rule holds when all its conditions do. */
export type RoutingCondition =
  /** Minor units of the payment's currency; `between` is gte and lte together. */
  | { field: 'amount'; gt?: number; gte?: number; lt?: number; lte?: number }
  | { field: 'currency' | 'paymentMethodType' | 'cardNetwork' | 'billingCountry'; in?: string[]; notIn?: string[] }
  /** The value of the payment's metadata key `key` (a missing key is in no list: `in` fails, `notIn` holds). */
  | { field: 'metadata'; key: string; in?: string[]; notIn?: string[] };

export interface RoutingRule {
  name: string;
  conditions: RoutingCondition[];
  connectorAccountIds: string[];
}

export type RoutingAlgorithm =
  /** Connector accounts in order: today's behaviour, the default. */
  | { type: 'priority'; connectorAccountIds: string[] }
  /** Percents add up to 100; each payment goes first to one account drawn by them, the others follow. */
  | { type: 'volumeSplit'; splits: { connectorAccountId: string; percent: number }[] }
  /** The first rule whose conditions all hold decides; none does: the default accounts. */
  | { type: 'rules'; rules: RoutingRule[]; defaultConnectorAccountIds: string[] }
  /** The best recent authorization rate for the payment's method, card network and currency first; some traffic explores. */
  | { type: 'successRate'; connectorAccountIds: string[]; windowSize: number; explorationPercent: number };

export type RoutingAlgorithmType = RoutingAlgorithm['type'];

export const SUCCESS_RATE_DEFAULTS = { windowSize: 100, explorationPercent: 5 } as const;
export const ROUTING_LIMITS = {
  rules: 200,
  conditionsPerRule: 20,
  listValues: 100,
  accounts: 50,
  windowSize: { min: 10, max: 1000 },
  explorationPercent: { max: 50 },
} as const;

/** What routing knows of a payment: the facts rules test, and the key success rates are kept under. */
export interface RoutingFacts {
  amount: number;
  currency: string;
  paymentMethodType: PaymentMethodType;
  /** The card's network (visa, mastercard, …) for card payments; null otherwise. */
  cardNetwork: string | null;
  /** ISO 3166-1 alpha-2 country of the customer's billing address, when known. */
  billingCountry: string | null;
  metadata: Readonly<Record<string, string>>;
}

/** A connector account's circuit breaker (health.ts): open accounts are skipped for a cool-down, half-open ones take a probe. */
export type CircuitState = 'closed' | 'open' | 'half_open';

/** A recent authorization rate: successes out of the last `total` answers (at most the window). */
export interface SuccessRate {
  successes: number;
  total: number;
}

/** Why and where a payment goes: stored on the payment (Payment.routing) and returned by routingPreview. */
export interface RoutingDecision {
  algorithm: RoutingAlgorithmType;
  /** Connector account ids in the order they will be tried (retries follow it). */
  candidates: string[];
  /** The first candidate: where the first attempt goes; null when no account can take the payment. */
  chosen: string | null;
  /** One sentence a merchant reads: the rule that matched, the draw, the rates compared, the accounts skipped and why. */
  reason: string;
  /** For success-rate routing, the rates it compared. */
  rates?: ({ connectorAccountId: string } & SuccessRate)[];
}
