// The sandbox's banks: the test IBANs of bank debits and payouts and what each one does, the sandbox's own
// account that bank transfers are sent to, and the bank redirect's refusal. TEST_BANK_ACCOUNTS is the one
// source of truth for debit and payout outcomes, as TEST_CARDS is for cards: the server decides from it and
// the tests walk it.
import { APPROVED, PAYOUTS_PAID, PAYOUT_EXPIRES, failed, payoutFails, type Outcome, type PayoutBehaviour, type ProcessorError } from './outcomes.ts';

export interface TestBankAccount {
  iban: string;
  /** How a debit from the account settles, once the settlement delay has passed. */
  outcome: Outcome;
  /** What a payout to the account does; absent, it is sent and paid. */
  payout?: PayoutBehaviour;
}

export const TEST_BANK_ACCOUNTS: readonly TestBankAccount[] = [
  { iban: 'DE89370400440532013000', outcome: APPROVED },
  { iban: 'DE62370400440532013001', outcome: failed('insufficient_funds', 'The bank account has insufficient funds.') },
  {
    iban: 'DE35370400440532013002',
    outcome: failed('account_closed', 'The bank account is closed.'),
    payout: payoutFails('account_closed', 'The destination account is closed.'),
  },
  { iban: 'DE08370400440532013003', outcome: APPROVED, payout: PAYOUT_EXPIRES },
];

/** Where the customers of bank transfers send the money: one account, the payment told apart by its reference. */
export const SANDBOX_TRANSFER_IBAN = 'GB65SBXB00000000000001';

export const BANK_AUTHORIZATION_FAILED: ProcessorError = {
  code: 'bank_authorization_failed',
  message: 'The customer did not authorize the payment at their bank.',
  retryable: false,
};

const ACCOUNT_BY_IBAN = new Map(TEST_BANK_ACCOUNTS.map((account) => [account.iban, account]));

/**
 * The ISO 13616 check: with the country and check digits moved to the end and letters read as 10 to 35, the
 * number is 1 modulo 97. Computed digit by digit, since the number is far beyond Number's precision.
 */
export function ibanValid(iban: string): boolean {
  if (!/^[A-Z]{2}\d{2}[A-Z0-9]+$/.test(iban)) return false;
  const rearranged = iban.slice(4) + iban.slice(0, 4);
  let remainder = 0;
  for (const character of rearranged) {
    const value = Number.parseInt(character, 36);
    remainder = (value > 9 ? remainder * 100 + value : remainder * 10 + value) % 97;
  }
  return remainder === 1;
}

/** How a debit from a valid IBAN settles: its test row's outcome, or success for any other account. */
export function bankDebitOutcome(iban: string): Outcome {
  return ACCOUNT_BY_IBAN.get(iban)?.outcome ?? APPROVED;
}

/** What a payout to a valid IBAN does: its test row's behaviour, or sent and paid for any other account. */
export function bankPayoutBehaviour(iban: string): PayoutBehaviour {
  return ACCOUNT_BY_IBAN.get(iban)?.payout ?? PAYOUTS_PAID;
}
