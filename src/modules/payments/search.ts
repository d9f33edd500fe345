// What the payments query's `search` text asks for (docs/api.md, "Finding payments"). One reading per text, so a
// search never means two things: a payment id, an email, a card's last four digits, or an amount with a decimal point.
import { CURRENCY_EXPONENTS, parseMajor } from '../../kernel/money.ts';

/** The same value in each group of currencies that share a minor-unit exponent ("12.50" is 1250 in USD, nothing in JPY). */
export interface AmountInCurrencies {
  currencies: string[];
  amount: number;
}

export type PaymentSearch =
  { kind: 'id'; id: string } | { kind: 'email'; email: string } | { kind: 'last4'; last4: string } | { kind: 'amount'; amounts: AmountInCurrencies[] };

export const SEARCH_RULE = 'must be a payment id (pay_…), an email address, a card’s last four digits, or an amount with a decimal point such as 12.50';

/** An email as kept and searched for: one @, no spaces (whether it receives mail is the merchant's business). */
export const EMAIL_PATTERN = /^[^\s@]+@[^\s@]+$/;

const CURRENCIES_BY_EXPONENT: ReadonlyMap<number, string[]> = Object.entries(CURRENCY_EXPONENTS).reduce((groups, [currency, exponent]) => {
  groups.set(exponent, [...(groups.get(exponent) ?? []), currency]);
  return groups;
}, new Map<number, string[]>());

/** The search `text` asks for, or null when it is none of the kinds (SEARCH_RULE). */
export function paymentSearchOf(text: string): PaymentSearch | null {
  const trimmed = text.trim();
  if (trimmed.startsWith('pay_')) return { kind: 'id', id: trimmed };
  if (EMAIL_PATTERN.test(trimmed)) return { kind: 'email', email: trimmed.toLowerCase() };
  if (/^\d{4}$/.test(trimmed)) return { kind: 'last4', last4: trimmed };
  if (/^\d+\.\d+$/.test(trimmed)) return { kind: 'amount', amounts: amountsOf(trimmed) };
  return null;
}

// Trailing zeros of the fraction say nothing of the value: "500.00" is 500 yen as well as 500 dollars.
function amountsOf(decimal: string): AmountInCurrencies[] {
  const value = decimal.replace(/\.?0+$/, '');
  return [...CURRENCIES_BY_EXPONENT.values()].flatMap((currencies) => {
    const amount = parseMajor(value, currencies[0]!);
    return amount === null || amount < 1 ? [] : [{ currencies, amount }];
  });
}
