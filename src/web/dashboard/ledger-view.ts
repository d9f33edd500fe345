// Ledger entries and balances as the Payment and Balance pages show them (docs/ledger.md).
import { formatMinor } from '../../kernel/money.ts';
import { element } from '../dom.ts';
import type { DashboardBalanceFragment, DashboardLedgerPageFragment } from '../gql/graphql.ts';
import { dateTime } from './shared-view.ts';

type LedgerEntry = DashboardLedgerPageFragment['edges'][number]['node'];

export const LEDGER_HEADINGS = ['Date', 'Type', 'Role', 'Amount', 'Source', 'Payment'];

const row = (cells: string[]) => element('tr', {}, ...cells.map((cell) => element('td', {}, cell)));

/** A credit (+) or a debit (-) of the merchant's balance. */
export const ledgerRow = (entry: LedgerEntry) =>
  row([
    dateTime(entry.createdAt),
    entry.type,
    entry.role.replace(/_/g, ' '),
    `${entry.amount > 0 ? '+' : ''}${formatMinor(entry.amount, entry.currency)}`,
    entry.sourceId,
    entry.paymentId ?? '—',
  ]);

export const BALANCE_HEADINGS = ['Currency', 'Available', 'Pending'];
export const balanceCells = (balance: DashboardBalanceFragment) => [
  balance.currency,
  formatMinor(balance.available, balance.currency),
  formatMinor(balance.pending, balance.currency),
];
export const balanceRow = (balance: DashboardBalanceFragment, before: string[] = []) => row([...before, ...balanceCells(balance)]);
