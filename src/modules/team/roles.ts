// What each dashboard role may do (docs/dashboard.md, "Roles"): the one table of it. A signed-in user acts through
// its merchant's secret access, so every root field a secret key may call is named here with the permission it
// needs; src/api/session-permissions.ts refuses the rest before any work. A new root field without an entry is
// refused to every user, and test/team/roles.test.ts fails until it has one.
import { ROLES, type Role } from '../../kernel/principal.ts';

export const PERMISSIONS = {
  read: 'See payments, refunds, disputes, payouts, customers, events, settings and team members',
  'apiKeys:manage': 'Issue and revoke API keys',
  'webhooks:manage': 'Change business profiles (their webhook endpoint), send test events, retry deliveries',
  'connectors:read': 'See connector accounts',
  'money:write': 'Create, confirm, capture, cancel, refund and sync payments; payouts; disputes; payment links; subscriptions; mandates',
  'connectors:manage': 'Add connector accounts, connected merchants and their processor accounts',
  'routing:manage': 'Change routing algorithms',
  'team:manage': 'Invite team members, change their roles, remove them, see invitations',
  'audit:read': 'Read the audit log',
  adminKey: 'Operator actions: only the admin API key, never a user',
} as const;

export type Permission = keyof typeof PERMISSIONS;

const VIEWER: readonly Permission[] = ['read'];
const DEVELOPER: readonly Permission[] = [...VIEWER, 'apiKeys:manage', 'webhooks:manage', 'connectors:read'];
const ADMIN: readonly Permission[] = [...DEVELOPER, 'money:write', 'connectors:manage', 'routing:manage'];
const OWNER: readonly Permission[] = [...ADMIN, 'team:manage', 'audit:read'];

export const ROLE_PERMISSIONS: Record<Role, ReadonlySet<Permission>> = {
  owner: new Set(OWNER),
  admin: new Set(ADMIN),
  developer: new Set(DEVELOPER),
  viewer: new Set(VIEWER),
};

/** Each root field (query, mutation, subscription) a session may call, and the permission it needs. */
export const ROOT_FIELD_PERMISSIONS: Record<string, Permission> = {
  // Queries
  activity: 'read',
  auditLog: 'audit:read',
  businessProfiles: 'read',
  connectedMerchants: 'read',
  connectorAccounts: 'connectors:read',
  customer: 'read',
  dispute: 'read',
  disputes: 'read',
  event: 'read',
  events: 'read',
  invitations: 'team:manage',
  mandate: 'read',
  mandates: 'read',
  merchant: 'read',
  payment: 'read',
  paymentLink: 'read',
  paymentMethods: 'read',
  paymentSessions: 'read',
  payments: 'read',
  payout: 'read',
  payouts: 'read',
  refund: 'read',
  refunds: 'read',
  routingPreview: 'read',
  subscription: 'read',
  subscriptions: 'read',
  teamMembers: 'read',
  viewer: 'read',
  // Subscriptions
  paymentChanges: 'read',
  paymentEvents: 'read',
  paymentUpdated: 'read',
  // Mutations
  acceptDispute: 'money:write',
  cancelPayment: 'money:write',
  cancelPaymentPostCapture: 'money:write',
  cancelPayout: 'money:write',
  cancelSubscription: 'money:write',
  capturePayment: 'money:write',
  challengeDispute: 'money:write',
  confirmPayment: 'money:write',
  createApiKey: 'apiKeys:manage',
  createBusinessProfile: 'webhooks:manage',
  createConnectedMerchant: 'connectors:manage',
  createConnectorAccount: 'connectors:manage',
  createMerchantAccount: 'adminKey',
  createPayment: 'money:write',
  createPaymentLink: 'money:write',
  createPayout: 'money:write',
  createRefund: 'money:write',
  createSubscription: 'money:write',
  deactivatePaymentLink: 'money:write',
  inviteTeamMember: 'team:manage',
  removeTeamMember: 'team:manage',
  retryWebhookDelivery: 'webhooks:manage',
  revokeApiKey: 'apiKeys:manage',
  revokeMandate: 'money:write',
  rotateApiKey: 'apiKeys:manage',
  rotateWebhookSigningKey: 'webhooks:manage',
  sendTestWebhook: 'webhooks:manage',
  setConnectedMerchantProcessorAccount: 'connectors:manage',
  setRoutingAlgorithm: 'routing:manage',
  syncPayment: 'money:write',
  syncRefund: 'money:write',
  updateBusinessProfile: 'webhooks:manage',
  updateConnectorAccount: 'connectors:manage',
  updateMerchantAccount: 'adminKey',
  updateTeamMemberRole: 'team:manage',
};

/** Why `role` may not call root field `field`, or null when it may. */
export function refusalOf(role: Role, field: string): string | null {
  const permission = ROOT_FIELD_PERMISSIONS[field];
  if (permission === undefined) return `${field} is not open to dashboard users.`;
  if (ROLE_PERMISSIONS[role].has(permission)) return null;
  return `The ${role} role may not call ${field}: it needs the "${permission}" permission.`;
}

/** The roles table of docs/dashboard.md, generated from ROLE_PERMISSIONS (a test checks the docs hold it). */
export function rolesTableMarkdown(): string {
  const header = `| Permission | What it allows | ${ROLES.join(' | ')} |`;
  const rule = `|---|---|${ROLES.map(() => '---').join('|')}|`;
  const rows = (Object.keys(PERMISSIONS) as Permission[]).map(
    (permission) =>
      `| \`${permission}\` | ${PERMISSIONS[permission]} | ${ROLES.map((role) => (ROLE_PERMISSIONS[role].has(permission) ? 'yes' : '')).join(' | ')} |`,
  );
  return [header, rule, ...rows].join('\n');
}
