// The only writer of the team's tables: dashboard users, invitations, sessions and the audit log.
import type { Mode } from '../../kernel/api-keys.ts';
import { AppError } from '../../kernel/errors.ts';
import { newId } from '../../kernel/ids.ts';
import type { Role } from '../../kernel/principal.ts';
import type { DashboardInvitation, DashboardSession, DashboardUser } from '../../generated/prisma/client.ts';
import type { Database } from '../../platform/db/client.ts';

/** One row of the audit log, as written: never an input value beyond the subject's id. */
export interface AuditRecord {
  merchantId: string;
  userId: string | null;
  userEmail: string | null;
  action: string;
  subjectId: string | null;
  outcome: string;
  requestId: string | null;
}

export class TeamStore {
  constructor(private readonly db: Database) {}

  createSession(userId: string, tokenHash: string, mode: Mode, expiresAt: Date): Promise<DashboardSession> {
    return this.db.dashboardSession.create({ data: { id: newId('dashboardSession'), userId, tokenHash, mode, expiresAt } });
  }

  /** Ends the session at once; false when it had already ended. */
  async revokeSession(sessionId: string): Promise<boolean> {
    const { count } = await this.db.dashboardSession.updateMany({ where: { id: sessionId, revokedAt: null }, data: { revokedAt: new Date() } });
    return count === 1;
  }

  async setSessionMode(sessionId: string, mode: Mode): Promise<void> {
    await this.db.dashboardSession.updateMany({ where: { id: sessionId, revokedAt: null }, data: { mode } });
  }

  /** Sets a user's password (the demo's owner, whose password is the demo's secrets file's). */
  async upsertUser(user: { id: string; merchantId: string; email: string; passwordHash: string; role: Role }): Promise<DashboardUser> {
    const { id, ...fields } = user;
    return this.db.dashboardUser.upsert({ where: { id }, create: user, update: { ...fields, removedAt: null } });
  }

  createInvitation(invitation: Omit<DashboardInvitation, 'id' | 'acceptedAt' | 'createdAt'>): Promise<DashboardInvitation> {
    return this.db.dashboardInvitation.create({ data: { id: newId('dashboardInvitation'), ...invitation } });
  }

  /**
   * The invitation's user, created with its one use of the invitation: a second acceptance (or a race of two) finds it
   * used and creates nothing.
   */
  async acceptInvitation(invitationId: string, passwordHash: string, now: Date): Promise<DashboardUser> {
    return this.db.$transaction(async (tx) => {
      const [invitation] = await tx.$queryRaw<DashboardInvitation[]>`
        UPDATE dashboard_invitations SET accepted_at = ${now}
        WHERE id = ${invitationId} AND accepted_at IS NULL AND expires_at > ${now}
        RETURNING id, merchant_id AS "merchantId", email, role`;
      if (invitation === undefined) throw new AppError('INVALID_STATE', 'token: this invitation was already used or has expired.', { field: 'token' });
      return tx.dashboardUser.create({
        data: { id: newId('dashboardUser'), merchantId: invitation.merchantId, email: invitation.email, role: invitation.role, passwordHash },
      });
    });
  }

  /**
   * Changes a member's role, or removes them (role null), but never leaves the merchant without an owner: the owners are
   * locked first, so two owners demoting each other at once cannot both succeed. A removed user's sessions end with them
   * (TeamService.authenticate and unusable read the user's removal).
   */
  /** `byKey`: asked by a secret API key, which may not touch an owner or make one (docs/dashboard.md, "Roles"). */
  async changeMember(merchantId: string, userId: string, role: Role | null, byKey: boolean): Promise<DashboardUser> {
    return this.db.$transaction(async (tx) => {
      const owners = await tx.$queryRaw<{ id: string }[]>`
        SELECT id FROM dashboard_users WHERE merchant_id = ${merchantId} AND role = 'owner' AND removed_at IS NULL FOR UPDATE`;
      const member = await tx.dashboardUser.findFirst({ where: { id: userId, merchantId, removedAt: null } });
      if (member === null) throw new AppError('NOT_FOUND', `No team member with id ${JSON.stringify(userId)} exists for this merchant.`);
      if (byKey && (member.role === 'owner' || role === 'owner')) throw new AppError('FORBIDDEN', OWNERS_BY_OWNERS, { field: 'userId' });
      if (member.role === 'owner' && role !== 'owner' && owners.length === 1) {
        throw new AppError('INVALID_STATE', 'userId: the last owner cannot be removed or demoted; make another member owner first.', {
          field: 'userId',
          status: 'LAST_OWNER',
        });
      }
      return tx.dashboardUser.update({ where: { id: userId }, data: role === null ? { removedAt: new Date() } : { role } });
    });
  }

  /** Whether the merchant has an owner who has not been removed. */
  async hasOwner(merchantId: string): Promise<boolean> {
    return (await this.db.dashboardUser.count({ where: { merchantId, role: 'owner', removedAt: null } })) > 0;
  }

  async record(entry: AuditRecord): Promise<void> {
    await this.db.auditLogEntry.create({ data: { id: newId('auditLogEntry'), ...entry } });
  }
}

/**
 * A secret key may be minted by any role that manages keys, so a key may not make or change an owner: only a
 * signed-in owner does, once the merchant has one (a key invites the first).
 */
export const OWNERS_BY_OWNERS = 'Only a signed-in owner may make, change or remove an owner; an API key may invite the first owner only.';
