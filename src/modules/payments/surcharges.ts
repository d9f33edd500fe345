// Surcharges: what a merchant adds to a payment for the method the customer pays with (a card's fee, say),
// by a rule on its business profile: a fixed amount, a percentage in basis points, or both. The SDK shows
// it in paymentMethods before the customer chooses; confirm adds it, and the processor is asked for the
// amount plus the surcharge. Pure arithmetic in minor units, rounded half up.
import type { PaymentMethodType } from './methods.ts';

export interface SurchargeRule {
  paymentMethodType: PaymentMethodType;
  /** Minor units of the payment's currency. */
  fixedAmount: number;
  /** Hundredths of a percent of the payment's amount (150 = 1.5 %). */
  percentBps: number;
}

export const SURCHARGE_LIMITS = { maxFixedAmount: 1_000_000, maxPercentBps: 2_000 } as const;

/** The surcharge `rules` put on `amount` paid with `type`: 0 when no rule names the type. */
export function surchargeFor(amount: number, type: PaymentMethodType, rules: readonly SurchargeRule[]): number {
  const rule = rules.find((candidate) => candidate.paymentMethodType === type);
  if (rule === undefined) return 0;
  // Integer arithmetic: (amount * bps + 5000) / 10000, floored, is amount * bps / 10000 rounded half up.
  return rule.fixedAmount + Math.floor((amount * rule.percentBps + 5_000) / 10_000);
}

/** The first rule the list breaks, naming the field (`surcharges.1.percentBps`), or null. */
export function surchargeRulesProblem(rules: readonly SurchargeRule[]): { field: string; rule: string } | null {
  const seen = new Set<string>();
  for (const [index, rule] of rules.entries()) {
    if (seen.has(rule.paymentMethodType)) return { field: `surcharges.${index}.paymentMethodType`, rule: 'names a payment method type a second time' };
    seen.add(rule.paymentMethodType);
    if (!Number.isSafeInteger(rule.fixedAmount) || rule.fixedAmount < 0 || rule.fixedAmount > SURCHARGE_LIMITS.maxFixedAmount) {
      return { field: `surcharges.${index}.fixedAmount`, rule: `must be a whole number of minor units from 0 to ${SURCHARGE_LIMITS.maxFixedAmount}` };
    }
    if (!Number.isSafeInteger(rule.percentBps) || rule.percentBps < 0 || rule.percentBps > SURCHARGE_LIMITS.maxPercentBps) {
      return { field: `surcharges.${index}.percentBps`, rule: `must be whole basis points from 0 to ${SURCHARGE_LIMITS.maxPercentBps} (20 %)` };
    }
    if (rule.fixedAmount === 0 && rule.percentBps === 0)
      return { field: `surcharges.${index}`, rule: 'must charge something (a fixed amount, a percentage, or both)' };
  }
  return null;
}
