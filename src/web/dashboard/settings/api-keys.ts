// The merchant's API keys (docs/api.md, "Keys"): a new key's secret shown once, revoking one at once.
import {
  DashboardSettingsApiKeysDocument,
  DashboardSettingsCreateApiKeyDocument,
  DashboardSettingsRevokeApiKeyDocument,
  type ApiKeyType,
  type DashboardSettingsApiKeyFragment,
} from '../../gql/graphql.ts';
import { element } from '../../dom.ts';
import type { DashboardContext, DashboardPage } from '../page.ts';
import { dateTime } from '../shared-view.ts';
import { actionButton, actionForm, labelled, may, refuseField, scrollingTable, section, secretOnce, select } from './ui.ts';

function keyRow(context: DashboardContext, key: DashboardSettingsApiKeyFragment, redraw: () => Promise<void>): (Node | string)[] {
  const actions = element('div', { class: 'row' });
  if (!key.revokedAt && may(context, 'manageApiKeys')) {
    actions.append(
      actionButton(
        context,
        'Revoke',
        () => `Revoke ${key.name} (${key.redacted}) now? Requests with it fail at once.`,
        'Revoke',
        async () => {
          await context.api.request(DashboardSettingsRevokeApiKeyDocument, { keyId: key.id });
          context.showNotice(`${key.name} is revoked.`);
          await redraw();
        },
        { 'aria-label': `Revoke ${key.name}`, class: 'danger' },
      ),
    );
  }
  return [
    key.name,
    key.type.toLowerCase(),
    key.mode.toLowerCase(),
    element('code', {}, key.redacted),
    dateTime(key.createdAt),
    key.revokedAt
      ? element('span', { class: 'badge status-failed' }, `revoked ${dateTime(key.revokedAt)}`)
      : element('span', { class: 'badge status-succeeded' }, 'active'),
    actions,
  ];
}

function createForm(context: DashboardContext, shown: HTMLElement, redraw: () => Promise<void>): HTMLElement {
  const type = select('api-key-type', ['SECRET', 'PUBLISHABLE']);
  const name = element('input', { id: 'api-key-name', type: 'text', autocomplete: 'off' });
  return section(
    'Create a key',
    actionForm(
      context,
      'Create the key',
      () => `Create the ${type.value.toLowerCase()} key “${name.value.trim()}” in ${context.mode.toLowerCase()} mode?`,
      'Create',
      async () => {
        if (!name.value.trim()) return refuseField(context, name, 'Name: required, to tell the key from the others.');
        const { createApiKey } = await context.api.request(DashboardSettingsCreateApiKeyDocument, {
          input: { type: type.value as ApiKeyType, name: name.value.trim() },
        });
        name.value = '';
        await redraw();
        shown.replaceChildren(
          secretOnce('api-key-secret', `The new key ${createApiKey.apiKey.name}`, createApiKey.key, 'Store it now: it is never shown again.'),
        );
      },
      labelled('Type', type),
      labelled('Name', name),
    ),
  );
}

export const page: DashboardPage = {
  route: /^settings\/api-keys$/,
  title: 'API keys',
  navLabel: 'API keys',
  async render(root, _params, context) {
    const list = element('div');
    const secret = element('div', { id: 'api-key-secret-shown' });
    const redraw = async () => {
      secret.replaceChildren();
      const { merchant } = await context.api.request(DashboardSettingsApiKeysDocument, {});
      list.replaceChildren(
        scrollingTable(
          'API keys',
          ['Name', 'Type', 'Mode', 'Key', 'Created', 'State', ''],
          merchant.apiKeys.map((key) => keyRow(context, key, redraw)),
        ),
      );
    };
    await redraw();
    root.replaceChildren(section('Keys of this merchant', secret, list), ...(may(context, 'manageApiKeys') ? [createForm(context, secret, redraw)] : []));
  },
};
