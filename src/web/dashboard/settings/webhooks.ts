// Each business profile's webhook endpoints (docs/webhooks.md): the URL of each mode, a test event to the
// session mode's endpoint.
import {
  DashboardSettingsProfilesDocument,
  DashboardSettingsRotateSigningKeyDocument,
  DashboardSettingsSendTestWebhookDocument,
  DashboardSettingsSetWebhookUrlDocument,
  type DashboardSettingsProfileFragment,
  type Mode,
} from '../../gql/graphql.ts';
import { element } from '../../dom.ts';
import type { DashboardContext, DashboardPage } from '../page.ts';
import { dateTime } from '../shared-view.ts';
import { actionButton, actionForm, labelled, may, refuseField, section, secretOnce, select } from './ui.ts';

const MODES: Mode[] = ['TEST', 'LIVE'];

function urlForm(context: DashboardContext, profile: DashboardSettingsProfileFragment, mode: Mode, redraw: () => Promise<unknown>): HTMLElement {
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

/** Rotates a mode's signing key: the old one keeps signing beside the new one for the overlap (docs/webhooks.md). */
function rotateForm(context: DashboardContext, profile: DashboardSettingsProfileFragment, redraw: () => Promise<HTMLElement>): HTMLElement {
  const mode = select(`rotate-mode-${profile.id}`, MODES, context.mode);
  const hours = element('input', { id: `rotate-overlap-${profile.id}`, type: 'number', min: '0', max: '168', inputmode: 'numeric' });
  hours.value = '24';
  const rotated = profile.webhookSigningKeyRotatedAt ? `Last rotated ${dateTime(profile.webhookSigningKeyRotatedAt)}.` : 'Never rotated.';
  const overlapEnd = profile.previousWebhookSigningKeyExpiresAt
    ? ` The previous key signs too until ${dateTime(profile.previousWebhookSigningKeyExpiresAt)}.`
    : '';
  return element(
    'div',
    {},
    element('h3', {}, 'Signing key'),
    element('p', {}, rotated + overlapEnd),
    actionForm(
      context,
      'Rotate the signing key',
      () => `Rotate ${profile.name}’s ${mode.value.toLowerCase()} signing key? The old key keeps signing for ${hours.value || 0} hours.`,
      'Rotate',
      async () => {
        const overlap = Number(hours.value);
        if (!(Number.isInteger(overlap) && overlap >= 0 && overlap <= 168))
          return refuseField(context, hours, 'Overlap in hours: a whole number from 0 to 168 (7 days).');
        const { rotateWebhookSigningKey } = await context.api.request(DashboardSettingsRotateSigningKeyDocument, {
          profileId: profile.id,
          mode: mode.value as Mode,
          overlapSeconds: overlap * 3600,
        });
        const until = rotateWebhookSigningKey.businessProfile.previousWebhookSigningKeyExpiresAt;
        const drawn = await redraw();
        drawn
          .querySelector(`[data-profile-id="${profile.id}"] h2`)
          ?.after(
            secretOnce(
              `signing-key-${profile.id}`,
              `The new ${rotateWebhookSigningKey.mode.toLowerCase()} signing key of ${profile.name}`,
              rotateWebhookSigningKey.paymentResponseHashKey,
              `Store it now: it is never shown again. ${until ? `The old key signs beside it until ${dateTime(until)}.` : 'The old key no longer signs.'}`,
            ),
          );
      },
      labelled('Mode', mode),
      labelled('Overlap in hours', hours),
    ),
  );
}

function profileSection(context: DashboardContext, profile: DashboardSettingsProfileFragment, redraw: () => Promise<HTMLElement>): HTMLElement {
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
    shown.append(rotateForm(context, profile, redraw));
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
      return root;
    };
    await redraw();
  },
};
