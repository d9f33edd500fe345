// Each business profile's webhook endpoints (docs/webhooks.md): the URL of each mode, a test event to the
// session mode's endpoint.
import {
  DashboardSettingsProfilesDocument,
  DashboardSettingsSendTestWebhookDocument,
  DashboardSettingsSetWebhookUrlDocument,
  type DashboardSettingsProfileFragment,
  type Mode,
} from '../../gql/graphql.ts';
import { element } from '../../dom.ts';
import type { DashboardContext, DashboardPage } from '../page.ts';
import { dateTime } from '../shared-view.ts';
import { actionButton, actionForm, labelled, may, section } from './ui.ts';

const MODES: Mode[] = ['TEST', 'LIVE'];

function urlForm(context: DashboardContext, profile: DashboardSettingsProfileFragment, mode: Mode, redraw: () => Promise<void>): HTMLElement {
  const id = `webhook-url-${profile.id}-${mode.toLowerCase()}`;
  const current = mode === 'TEST' ? profile.testWebhookUrl : profile.liveWebhookUrl;
  const disabledAt = mode === 'TEST' ? profile.testWebhookDisabledAt : profile.liveWebhookDisabledAt;
  const label = `${mode === 'TEST' ? 'Test' : 'Live'} webhook URL`;
  const input = element('input', { id, type: 'url', inputmode: 'url', autocomplete: 'off', placeholder: 'https://…' });
  input.value = current ?? '';
  const shown = labelled(label, input);
  if (disabledAt)
    shown.append(
      element('p', { class: 'error' }, `Disabled since ${dateTime(disabledAt)}: the endpoint answered 410 Gone. Saving the URL again re-enables it.`),
    );
  if (!may(context, 'manageWebhooks')) {
    input.readOnly = true;
    return shown;
  }
  return actionForm(
    context,
    `Save the ${mode.toLowerCase()} URL`,
    () =>
      input.value.trim()
        ? `Send ${profile.name}’s ${mode.toLowerCase()} events to ${input.value.trim()}?`
        : `Stop sending ${profile.name}’s ${mode.toLowerCase()} events?`,
    'Save',
    async () => {
      await context.api.request(DashboardSettingsSetWebhookUrlDocument, { profileId: profile.id, mode, webhookUrl: input.value.trim() || null });
      context.showNotice(`${profile.name}’s ${mode.toLowerCase()} webhook URL is saved.`);
      await redraw();
    },
    shown,
  );
}

function profileSection(context: DashboardContext, profile: DashboardSettingsProfileFragment, redraw: () => Promise<void>): HTMLElement {
  const shown = section(`${profile.name}${profile.isDefault ? ' (default profile)' : ''}`, ...MODES.map((mode) => urlForm(context, profile, mode, redraw)));
  shown.dataset['profileId'] = profile.id;
  if (may(context, 'manageWebhooks')) {
    shown.append(
      actionButton(
        context,
        'Send a test event',
        () => `Send a test event to ${profile.name}’s ${context.mode.toLowerCase()} endpoint?`,
        'Send',
        async () => {
          const { sendTestWebhook } = await context.api.request(DashboardSettingsSendTestWebhookDocument, { profileId: profile.id });
          context.showNotice(`Test event ${sendTestWebhook.id} sent: ${sendTestWebhook.deliveryStatus.toLowerCase()}.`);
        },
      ),
    );
  }
  return shown;
}

export const page: DashboardPage = {
  route: /^settings\/webhooks$/,
  title: 'Webhooks',
  navLabel: 'Webhooks',
  async render(root, _params, context) {
    const redraw = async () => {
      const { businessProfiles } = await context.api.request(DashboardSettingsProfilesDocument, {});
      root.replaceChildren(...businessProfiles.map((profile) => profileSection(context, profile, redraw)));
    };
    await redraw();
  },
};
