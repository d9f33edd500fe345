// The merchant's API keys (docs/api.md, "Keys"): a new key's secret shown once, revoking one at once.
import {
  DashboardSettingsApiKeysDocument,
  DashboardSettingsCreateApiKeyDocument,
  DashboardSettingsRevokeApiKeyDocument,
  DashboardSettingsRotateApiKeyDocument,
  type ApiKeyType,
  type DashboardSettingsApiKeyFragment,
} from '../../gql/graphql.ts';
import { element } from '../../dom.ts';
import type { DashboardContext, DashboardPage } from '../page.ts';
import { dateTime } from '../shared-view.ts';
import { actionButton, actionForm, labelled, may, refuseField, scrollingTable, section, secretOnce, select } from './ui.ts';

/** How long a rotated key's predecessor keeps working (rotateApiKey's expiresInSeconds). */
const OVERLAPS: [string, string][] = [
  ['3600', '1 hour'],
  ['86400', '24 hours'],
  ['604800', '7 days'],
  ['0', 'no time: revoke it now'],
];

function rotateControls(context: DashboardContext, key: DashboardSettingsApiKeyFragment, shown: HTMLElement, redraw: () => Promise<void>): HTMLElement[] {
  const overlap = element('select', { id: `overlap-${key.id}` }, ...OVERLAPS.map(([value, text]) => element('option', { value }, text)));
  overlap.value = '86400';
  const rotate = actionButton(
    context,
    'Rotate',
    () => `Replace ${key.name} (${key.redacted}) with a new key? The old one keeps working for ${overlap.selectedOptions[0]!.text}.`,
    'Rotate',
    async () => {
      const { rotateApiKey } = await context.api.request(DashboardSettingsRotateApiKeyDocument, { keyId: key.id, expiresInSeconds: Number(overlap.value) });
      await redraw();
      const until = rotateApiKey.previousApiKey.expiresAt ? ` The old key works until ${dateTime(rotateApiKey.previousApiKey.expiresAt)}.` : '';
      shown.replaceChildren(
        secretOnce('api-key-secret', `The new key ${rotateApiKey.apiKey.name}`, rotateApiKey.key, `Store it now: it is never shown again.${until}`),
      );
    },
    { 'aria-label': `Rotate ${key.name}` },
  );
  return [labelled(`Old ${key.name} works for`, overlap), rotate];
}

function keyRow(context: DashboardContext, key: DashboardSettingsApiKeyFragment, shown: HTMLElement, redraw: () => Promise<void>): (Node | string)[] {
  const actions = element('div', { class: 'row' });
  if (!key.revokedAt && may(context, 'manageApiKeys')) {
    actions.append(
      ...rotateControls(context, key, shown, redraw),
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
    key.expiresAt ? dateTime(key.expiresAt) : 'never',
    key.revokedAt
      ? element('span', { class: 'badge status-failed' }, `revoked ${dateTime(key.revokedAt)}`)
      : element('span', { class: 'badge status-succeeded' }, 'active'),
    actions,
  ];
}

function createForm(context: DashboardContext, shown: HTMLElement, redraw: () => Promise<void>): HTMLElement {
  const type = select('api-key-type', ['SECRET', 'PUBLISHABLE']);
  const name = element('input', { id: 'api-key-name', type: 'text', autocomplete: 'off' });
  const days = element('input', { id: 'api-key-expiry', type: 'number', min: '1', max: '366', inputmode: 'numeric' });
  return section(
    'Create a key',
    actionForm(
      context,
      'Create the key',
      () => `Create the ${type.value.toLowerCase()} key “${name.value.trim()}” in ${context.mode.toLowerCase()} mode?`,
      'Create',
      async () => {
        if (!name.value.trim()) return refuseField(context, name, 'Name: required, to tell the key from the others.');
        const expiresInDays = days.value.trim() ? Number(days.value) : null;
        if (expiresInDays !== null && !(Number.isInteger(expiresInDays) && expiresInDays >= 1 && expiresInDays <= 366)) {
          return refuseField(context, days, 'Expires in days: a whole number from 1 to 366, or empty for a key that does not expire.');
        }
        const { createApiKey } = await context.api.request(DashboardSettingsCreateApiKeyDocument, {
          input: {
            type: type.value as ApiKeyType,
            name: name.value.trim(),
            expiresAt: expiresInDays === null ? null : new Date(Date.now() + expiresInDays * 86_400_000).toISOString(),
          },
        });
        name.value = '';
        days.value = '';
        await redraw();
        shown.replaceChildren(
          secretOnce('api-key-secret', `The new key ${createApiKey.apiKey.name}`, createApiKey.key, 'Store it now: it is never shown again.'),
        );
      },
      labelled('Type', type),
      labelled('Name', name),
      labelled('Expires in days (optional)', days),
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
          ['Name', 'Type', 'Mode', 'Key', 'Created', 'Expires', 'State', ''],
          merchant.apiKeys.map((key) => keyRow(context, key, secret, redraw)),
        ),
      );
    };
    await redraw();
    root.replaceChildren(section('Keys of this merchant', secret, list), ...(may(context, 'manageApiKeys') ? [createForm(context, secret, redraw)] : []));
  },
};
