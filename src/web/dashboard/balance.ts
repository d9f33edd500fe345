// The Balance page (`#/balance`, docs/ledger.md): the merchant's balance in each currency, its ledger entries
// a page at a time, and for a platform its connected merchants with their balances.
import { element } from '../dom.ts';
import { DashboardBalanceDocument, DashboardConnectedMerchantsDocument, DashboardLedgerDocument } from '../gql/graphql.ts';
import type { DashboardPage } from './page.ts';
import { BALANCE_HEADINGS, LEDGER_HEADINGS, balanceRow, ledgerRow } from './ledger-view.ts';
import { pagedTable, scrollRegion, table } from './shared-view.ts';

export const page: DashboardPage = {
  route: /^balance$/,
  title: 'Balance',
  navLabel: 'Balance',
  async render(root, _params, context) {
    const [{ merchant }, ledger] = await Promise.all([
      context.api.request(DashboardBalanceDocument, {}),
      pagedTable(
        'Ledger entries',
        'More ledger entries',
        LEDGER_HEADINGS,
        async (after) => (await context.api.request(DashboardLedgerDocument, { after, paymentId: null })).merchant.ledgerEntries,
        (entry) => [ledgerRow(entry)],
        context.showFailure,
      ),
    ]);
    const balance = table(BALANCE_HEADINGS, []);
    balance.tBodies[0]!.append(...merchant.balance.map((entry) => balanceRow(entry)));
    const connected = merchant.isPlatform
      ? await pagedTable(
          'Connected merchants',
          'More connected merchants',
          ['Merchant', 'Id', ...BALANCE_HEADINGS],
          async (after) => (await context.api.request(DashboardConnectedMerchantsDocument, { after })).connectedMerchants,
          (connectedMerchant) =>
            connectedMerchant.balance.length
              ? connectedMerchant.balance.map((entry) => balanceRow(entry, [connectedMerchant.name, connectedMerchant.id]))
              : [element('tr', {}, ...[connectedMerchant.name, connectedMerchant.id, '—', '—', '—'].map((cell) => element('td', {}, cell)))],
          context.showFailure,
        )
      : null;
    const section = (id: string, heading: string, body: HTMLElement) =>
      element('section', { class: 'card', 'aria-labelledby': `${id}-heading` }, element('h2', { id: `${id}-heading` }, heading), element('div', { id }, body));
    root.replaceChildren(
      section('balance', 'Balance', merchant.balance.length ? scrollRegion('Balance', balance) : element('p', {}, 'No money has moved yet.')),
      ...(connected ? [section('connected-merchants', 'Connected merchants', connected)] : []),
      section('ledger', 'Ledger', ledger),
    );
  },
};
