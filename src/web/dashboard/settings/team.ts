// The merchant's team (docs/dashboard.md, "Invitations and the team"): members with their roles for everyone;
// for owners, pending invitations, a new invitation whose accept link is shown once to hand over, a member's
// role changed, a member removed.
import {
  DashboardSettingsChangeRoleDocument,
  DashboardSettingsInvitationsDocument,
  DashboardSettingsInviteDocument,
  DashboardSettingsRemoveMemberDocument,
  DashboardSettingsTeamDocument,
  type DashboardSettingsMemberFragment,
  type TeamRole,
} from '../../gql/graphql.ts';
import { element } from '../../dom.ts';
import type { DashboardContext, DashboardPage } from '../page.ts';
import { dateTime } from '../shared-view.ts';
import { actionButton, actionForm, labelled, may, refuseField, scrollingTable, section, secretOnce, select } from './ui.ts';

const ROLES: TeamRole[] = ['OWNER', 'ADMIN', 'DEVELOPER', 'VIEWER'];

function memberRow(context: DashboardContext, member: DashboardSettingsMemberFragment, redraw: () => Promise<void>): (Node | string)[] {
  const you = member.id === context.user.id ? ' (you)' : '';
  if (!may(context, 'manageTeam')) return [`${member.email}${you}`, member.role.toLowerCase(), dateTime(member.createdAt)];
  const role = select(`role-${member.id}`, ROLES, member.role);
  const change = actionButton(
    context,
    'Change role',
    () => `Make ${member.email} ${role.value.toLowerCase()}?`,
    'Change role',
    async () => {
      await context.api.request(DashboardSettingsChangeRoleDocument, { userId: member.id, role: role.value as TeamRole });
      context.showNotice(`${member.email} is now ${role.value.toLowerCase()}.`);
      await redraw();
    },
    { 'aria-label': `Change the role of ${member.email}` },
  );
  const remove = actionButton(
    context,
    'Remove',
    () => `Remove ${member.email} from the team? Their sessions end at once.`,
    'Remove',
    async () => {
      await context.api.request(DashboardSettingsRemoveMemberDocument, { userId: member.id });
      context.showNotice(`${member.email} is removed.`);
      await redraw();
    },
    { 'aria-label': `Remove ${member.email}`, class: 'danger' },
  );
  return [
    `${member.email}${you}`,
    element('div', { class: 'row' }, labelled(`Role of ${member.email}`, role), change),
    dateTime(member.createdAt),
    element('div', { class: 'row' }, remove),
  ];
}

function inviteForm(context: DashboardContext, shown: HTMLElement, redraw: () => Promise<void>): HTMLElement {
  const email = element('input', { id: 'invite-email', type: 'email', autocomplete: 'off' });
  const role = select('invite-role', ROLES, 'DEVELOPER');
  return section(
    'Invite a member',
    element('p', {}, 'No email is sent: hand the link over yourself. It works once, for 72 hours.'),
    actionForm(
      context,
      'Invite',
      () => `Invite ${email.value.trim()} as ${role.value.toLowerCase()}?`,
      'Invite',
      async () => {
        if (!/^[^@\s]+@[^@\s]+$/.test(email.value.trim())) return refuseField(context, email, 'Email: must be an email address, such as ada@example.com.');
        const { inviteTeamMember } = await context.api.request(DashboardSettingsInviteDocument, { email: email.value.trim(), role: role.value as TeamRole });
        email.value = '';
        await redraw();
        shown.replaceChildren(
          secretOnce(
            'invitation-link',
            `The invitation of ${inviteTeamMember.invitation.email}`,
            inviteTeamMember.acceptUrl,
            'Hand this link to them now: it is never shown again.',
          ),
        );
      },
      labelled('Email', email),
      labelled('Role', role),
    ),
  );
}

export const page: DashboardPage = {
  route: /^settings\/team$/,
  title: 'Team',
  navLabel: 'Team',
  async render(root, _params, context) {
    const members = element('div');
    const invitations = element('div');
    const link = element('div');
    const owner = may(context, 'manageTeam');
    const redraw = async () => {
      link.replaceChildren();
      const { teamMembers } = await context.api.request(DashboardSettingsTeamDocument, {});
      members.replaceChildren(
        scrollingTable(
          'Team members',
          owner ? ['Member', 'Role', 'Since', ''] : ['Member', 'Role', 'Since'],
          teamMembers.map((member) => memberRow(context, member, redraw)),
        ),
      );
      if (!owner) return;
      const pending = (await context.api.request(DashboardSettingsInvitationsDocument, {})).invitations;
      invitations.replaceChildren(
        pending.length
          ? scrollingTable(
              'Pending invitations',
              ['Email', 'Role', 'Invited', 'Expires'],
              pending.map((invitation) => [invitation.email, invitation.role.toLowerCase(), dateTime(invitation.createdAt), dateTime(invitation.expiresAt)]),
            )
          : element('p', {}, 'No pending invitations.'),
      );
    };
    await redraw();
    root.replaceChildren(
      section('Members', members),
      ...(owner
        ? [section('Pending invitations', link, invitations), inviteForm(context, link, redraw)]
        : [element('p', {}, 'Only owners invite, change roles and remove members.')]),
    );
  },
};
