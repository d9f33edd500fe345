// The team's GraphQL types and root fields (docs/dashboard.md). Which users may call each is the roles table's
// (roles.ts); a secret API key, which has no user, may call them all, so a merchant's own tooling can manage its team.
import { ROLES } from '../../kernel/principal.ts';
import { builder } from '../../platform/graphql/builder.ts';
import { connectionOf } from '../../platform/graphql/connections.ts';
import { inputTypeFor } from '../../platform/graphql/inputs.ts';
import { inviteTeamMemberInput, removeTeamMemberInput, updateTeamMemberRoleInput } from './inputs.ts';

const TeamRoleEnum = builder.enumType('TeamRole', {
  description: 'A dashboard user’s role (docs/dashboard.md, "Roles").',
  values: Object.fromEntries(ROLES.map((role) => [role.toUpperCase(), { value: role }])) as Record<Uppercase<(typeof ROLES)[number]>, { value: string }>,
});

const TeamMemberRef = builder.prismaObject('DashboardUser', {
  name: 'TeamMember',
  description: 'A person who signs in to the dashboard for the merchant.',
  fields: (t) => ({
    id: t.exposeID('id'),
    email: t.exposeString('email'),
    role: t.expose('role', { type: TeamRoleEnum }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
  }),
});

const InvitationRef = builder.prismaObject('DashboardInvitation', {
  name: 'TeamInvitation',
  description: 'An invitation not yet accepted: its link is shown once, when it is made.',
  fields: (t) => ({
    id: t.exposeID('id'),
    email: t.exposeString('email'),
    role: t.expose('role', { type: TeamRoleEnum }),
    invitedBy: t.exposeString('invitedBy', { nullable: true, description: 'The inviting user’s id; null when a secret API key invited.' }),
    expiresAt: t.expose('expiresAt', { type: 'DateTime' }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
  }),
});

const AuditLogEntryRef = builder.prismaObject('AuditLogEntry', {
  description: 'One action of a dashboard user (or of the team API with a secret key): who, what, when and how it ended.',
  fields: (t) => ({
    id: t.exposeID('id'),
    userId: t.exposeString('userId', { nullable: true }),
    userEmail: t.exposeString('userEmail', { nullable: true }),
    action: t.exposeString('action', { description: 'A GraphQL mutation’s root field, or login, logout, acceptInvitation, mode:TEST, mode:LIVE.' }),
    subjectId: t.exposeString('subjectId', { nullable: true, description: 'The id the action was about (its input’s paymentId, id, …), if any.' }),
    outcome: t.exposeString('outcome', { description: '"ok", or the error code it was refused with.' }),
    requestId: t.exposeString('requestId', { nullable: true }),
    at: t.expose('createdAt', { type: 'DateTime' }),
  }),
});

const AuditLogConnection = connectionOf('AuditLogEntry', AuditLogEntryRef);

builder.queryField('viewer', (t) =>
  t.withAuth({ secretKey: true }).field({
    type: TeamMemberRef,
    nullable: true,
    description: 'The signed-in dashboard user; null with an API key.',
    resolve: (_root, _args, { principal, services }) => services.team.viewer(principal),
  }),
);

builder.queryField('teamMembers', (t) =>
  t.withAuth({ secretKey: true }).field({
    type: [TeamMemberRef],
    description: 'The merchant’s dashboard users, oldest first.',
    resolve: (_root, _args, { principal, services }) => services.team.members(principal),
  }),
);

builder.queryField('invitations', (t) =>
  t.withAuth({ secretKey: true }).field({
    type: [InvitationRef],
    description: 'The merchant’s invitations not yet accepted nor expired, newest first.',
    resolve: (_root, _args, { principal, services }) => services.team.invitations(principal),
  }),
);

builder.queryField('auditLog', (t) =>
  t.withAuth({ secretKey: true }).field({
    type: AuditLogConnection,
    description: 'What the merchant’s dashboard users did, newest first (docs/dashboard.md, "Audit log").',
    args: { first: t.arg.int({ description: '1 to 100; 20 by default.' }), after: t.arg.string() },
    resolve: (_root, args, { principal, services }) => services.team.auditLog(principal, args),
  }),
);

const InviteTeamMemberInput = inputTypeFor('InviteTeamMemberInput', inviteTeamMemberInput, {
  fields: (t) => ({ email: t.string({ required: true }), role: t.field({ type: TeamRoleEnum, required: true }) }),
});

const InviteTeamMemberPayload = builder.simpleObject('InviteTeamMemberPayload', {
  fields: (t) => ({
    invitation: t.field({ type: InvitationRef }),
    acceptUrl: t.string({ description: 'The one-time link that sets a password and signs in: hand it to the person. Never shown again.' }),
  }),
});

builder.mutationField('inviteTeamMember', (t) =>
  t.withAuth({ secretKey: true }).field({
    type: InviteTeamMemberPayload,
    description: 'Invites a person to the merchant’s dashboard with a role.',
    args: { input: t.arg({ type: InviteTeamMemberInput, required: true }) },
    resolve: (_root, { input }, { principal, services }) => services.team.invite(principal, input),
  }),
);

const UpdateTeamMemberRoleInput = inputTypeFor('UpdateTeamMemberRoleInput', updateTeamMemberRoleInput, {
  fields: (t) => ({ userId: t.string({ required: true }), role: t.field({ type: TeamRoleEnum, required: true }) }),
});

const TeamMemberPayload = builder.simpleObject('TeamMemberPayload', { fields: (t) => ({ member: t.field({ type: TeamMemberRef }) }) });

builder.mutationField('updateTeamMemberRole', (t) =>
  t.withAuth({ secretKey: true }).field({
    type: TeamMemberPayload,
    description: 'Changes a member’s role; the last owner cannot be demoted.',
    args: { input: t.arg({ type: UpdateTeamMemberRoleInput, required: true }) },
    resolve: async (_root, { input }, { principal, services }) => ({ member: await services.team.updateRole(principal, input) }),
  }),
);

const RemoveTeamMemberInput = inputTypeFor('RemoveTeamMemberInput', removeTeamMemberInput, {
  fields: (t) => ({ userId: t.string({ required: true }) }),
});

builder.mutationField('removeTeamMember', (t) =>
  t.withAuth({ secretKey: true }).field({
    type: TeamMemberPayload,
    description: 'Removes a member and ends their sessions; the last owner cannot be removed.',
    args: { input: t.arg({ type: RemoveTeamMemberInput, required: true }) },
    resolve: async (_root, { input }, { principal, services }) => ({ member: await services.team.remove(principal, input) }),
  }),
);
