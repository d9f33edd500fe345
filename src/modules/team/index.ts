// The team module's public entry: dashboard users, sessions, roles and the audit log (docs/dashboard.md).
export { type SignedIn, type TeamService } from './service.ts';
export { refusalOf, ROOT_FIELD_PERMISSIONS, ROLE_PERMISSIONS, PERMISSIONS, rolesTableMarkdown, type Permission } from './roles.ts';
export type { AuditRecord } from './store.ts';
export { ensureDemoOwner } from './demo.ts';
