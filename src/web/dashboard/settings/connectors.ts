// The merchant's connector accounts in the session's mode (docs/reliability.md: the circuit breaker's
// state is their health), and a new account from its credentials.
import {
  DashboardSettingsConnectorsDocument,
  DashboardSettingsCreateConnectorDocument,
  DashboardSettingsSetConnectorDisabledDocument,
  type DashboardSettingsConnectorFragment,
  type Mode,
} from '../../gql/graphql.ts';
import { element } from '../../dom.ts';
import type { DashboardContext, DashboardPage } from '../page.ts';
import { dateTime } from '../shared-view.ts';
import { actionButton, actionForm, labelled, may, refuseField, scrollingTable, section, select } from './ui.ts';

const CONNECTORS = ['sandbox', 'fauxpay', 'stripe', 'adyen'];

const HEALTH: Record<string, { text: string; badge: string }> = {
  CLOSED: { text: 'healthy', badge: 'status-succeeded' },
  HALF_OPEN: { text: 'probing', badge: 'status-pending' },
  OPEN: { text: 'paused', badge: 'status-failed' },
};

function health(account: DashboardSettingsConnectorFragment): Node | string {
  if (!account.health) return 'unknown';
  const { text, badge } = HEALTH[account.health.state]!;
  const reopens = account.health.reopensAt ? ` until ${dateTime(account.health.reopensAt)}` : '';
  return element('span', { class: `badge ${badge}` }, `${text}${reopens}`);
}

/** Disables an enabled account (routing skips it) or enables a disabled one. */
function switchButton(context: DashboardContext, account: DashboardSettingsConnectorFragment, redraw: () => Promise<void>): HTMLButtonElement {
  const verb = account.disabled ? 'Enable' : 'Disable';
  return actionButton(
    context,
    verb,
    () =>
      account.disabled
        ? `Route payments to ${account.connectorName} account ${account.id} again?`
        : `Stop routing payments to ${account.connectorName} account ${account.id}? Those already on it carry on.`,
    verb,
    async () => {
      await context.api.request(DashboardSettingsSetConnectorDisabledDocument, { id: account.id, disabled: !account.disabled });
      context.showNotice(`The ${account.connectorName} account ${account.id} is ${account.disabled ? 'enabled' : 'disabled'}.`);
      await redraw();
    },
    { 'aria-label': `${verb} ${account.id}`, ...(account.disabled ? {} : { class: 'danger' }) },
  );
}

function accountRow(context: DashboardContext, account: DashboardSettingsConnectorFragment, redraw: () => Promise<void>): (Node | string)[] {
  return [
    account.connectorName,
    element('code', {}, account.id),
    health(account),
    account.disabled ? element('span', { class: 'badge status-failed' }, 'disabled') : element('span', { class: 'badge status-succeeded' }, 'enabled'),
    account.paymentMethods.join(', '),
    dateTime(account.createdAt),
    ...(may(context, 'manageConnectors') ? [element('div', { class: 'row' }, switchButton(context, account, redraw))] : []),
  ];
}

function addForm(context: DashboardContext, redraw: () => Promise<void>): HTMLElement {
  const connector = select('connector-name', CONNECTORS);
  const credentials = element('textarea', { id: 'connector-credentials', rows: '3', spellcheck: 'false', autocomplete: 'off', placeholder: '{"apiKey": "…"}' });
  const mode = select('connector-mode', ['TEST', 'LIVE'], context.mode);
  return section(
    'Add an account',
    actionForm(
      context,
      'Add the account',
      () => `Add a ${connector.value} account in ${mode.value.toLowerCase()} mode?`,
      'Add',
      async () => {
        let parsed: unknown;
        try {
          parsed = JSON.parse(credentials.value);
        } catch {
          parsed = undefined;
        }
        if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
          return refuseField(context, credentials, 'Credentials: must be a JSON object, such as {"apiKey": "sk_sandbox_…"}.');
        }
        const { createConnectorAccount } = await context.api.request(DashboardSettingsCreateConnectorDocument, {
          input: { connectorName: connector.value, credentials: parsed, mode: mode.value as Mode },
        });
        credentials.value = '';
        context.showNotice(`The ${createConnectorAccount.connectorName} account ${createConnectorAccount.id} is added.`);
        await redraw();
      },
      labelled('Connector', connector),
      labelled('Credentials (JSON)', credentials),
      labelled('Mode', mode),
    ),
  );
}

export const page: DashboardPage = {
  route: /^settings\/connectors$/,
  title: 'Connectors',
  navLabel: 'Connectors',
  async render(root, _params, context) {
    if (!may(context, 'readConnectors')) return void root.replaceChildren(element('p', {}, 'Your role may not see connector accounts.'));
    const list = element('div');
    const redraw = async () => {
      const { connectorAccounts } = await context.api.request(DashboardSettingsConnectorsDocument, {});
      list.replaceChildren(
        connectorAccounts.length
          ? scrollingTable(
              'Connector accounts',
              ['Connector', 'Account', 'Health', 'State', 'Payment methods', 'Added', ...(may(context, 'manageConnectors') ? [''] : [])],
              connectorAccounts.map((account) => accountRow(context, account, redraw)),
            )
          : element('p', {}, 'No connector accounts yet: payments cannot be routed.'),
      );
    };
    await redraw();
    root.replaceChildren(
      section(`Connector accounts in ${context.mode.toLowerCase()} mode`, list),
      ...(may(context, 'manageConnectors') ? [addForm(context, redraw)] : []),
    );
  },
};
