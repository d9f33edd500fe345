// Dashboard users (docs/dashboard.md): sign-in and sessions, invitations, roles and the audit log. A session's token
// lives in the browser's cookie only (stored as its SHA-256); its CSRF token is derived from it, so nothing else is
// stored and a stolen database holds neither.
import { createHash, createHmac, randomBytes } from 'node:crypto';
import bcrypt from 'bcryptjs';
import type { Mode } from '../../kernel/api-keys.ts';
import { secretsEqual } from '../../kernel/api-keys.ts';
import { AppError } from '../../kernel/errors.ts';
import type { Role, SecretKeyPrincipal, SessionPrincipal } from '../../kernel/principal.ts';
import { parseInput } from '../../kernel/validation.ts';
import type { DashboardInvitation, DashboardUser } from '../../generated/prisma/client.ts';
import type { ServiceContext } from '../../platform/context.ts';
import { connectionPage, DEFAULT_PAGE_SIZE, olderThanCursor } from '../../platform/db/pagination.ts';
import { isUniqueViolation } from '../../platform/db/unique-violation.ts';
import {
  acceptInvitationInput,
  auditLogInput,
  inviteTeamMemberInput,
  loginInput,
  modeInput,
  removeTeamMemberInput,
  updateTeamMemberRoleInput,
} from './inputs.ts';
import { OWNERS_BY_OWNERS, TeamStore, type AuditRecord } from './store.ts';

/** What a sign-in gives the browser: the cookie's token (never shown to scripts), and what the page may read. */
export interface SignedIn {
  token: string;
  expiresAt: Date;
  csrfToken: string;
  mode: Mode;
  user: { id: string; email: string; role: Role; merchantId: string };
}

type UserPrincipal = SecretKeyPrincipal;

const WRONG_CREDENTIALS = 'The email address or password is wrong.';

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const newToken = () => randomBytes(32).toString('base64url');

export class TeamService {
  readonly #store: TeamStore;
  /** A bcrypt hash of nothing anyone knows, checked when the email is unknown so both answers take as long. */
  #dummyHash: Promise<string> | undefined;

  constructor(private readonly context: ServiceContext) {
    this.#store = new TeamStore(context.db);
  }

  hashPassword(password: string): Promise<string> {
    return bcrypt.hash(password, this.context.config.DASHBOARD_BCRYPT_COST);
  }

  /** The CSRF token of the session whose cookie holds `token` (docs/dashboard.md, "CSRF"). */
  csrfTokenOf(token: string): string {
    return createHmac('sha256', token).update('dashboard csrf').digest('base64url');
  }

  /** Whether `presented` is the CSRF token of the session `token`, compared in constant time. */
  csrfMatches(token: string, presented: string | null | undefined): boolean {
    return typeof presented === 'string' && secretsEqual(presented, this.csrfTokenOf(token));
  }

  /** Signs in: UNAUTHENTICATED with one answer whether the email is unknown or the password wrong. */
  async login(rawInput: unknown, requestId: string | null): Promise<SignedIn> {
    const input = parseInput(loginInput, rawInput);
    const email = input.email.trim().toLowerCase();
    const user = await this.context.db.dashboardUser.findUnique({ where: { email } });
    const active = user !== null && user.removedAt === null;
    const matches = await bcrypt.compare(input.password, active ? user.passwordHash : await this.dummyHash());
    if (!active || !matches) {
      if (active) await this.recordOrLog({ ...actorOf(user), action: 'login', subjectId: null, outcome: 'UNAUTHENTICATED', requestId });
      else this.context.logger.info({ requestId }, 'dashboard sign-in with an unknown email address');
      throw new AppError('UNAUTHENTICATED', WRONG_CREDENTIALS);
    }
    const signedIn = await this.startSession(user, 'TEST');
    await this.recordOrLog({ ...actorOf(user), action: 'login', subjectId: null, outcome: 'ok', requestId });
    return signedIn;
  }

  /** The principal of the session whose cookie holds `token`: UNAUTHENTICATED when it is unknown, ended, expired or its user removed. */
  async authenticate(token: string): Promise<SessionPrincipal> {
    const session = await this.context.db.dashboardSession.findUnique({ where: { tokenHash: sha256(token) }, include: { user: true } });
    if (session === null || session.revokedAt !== null || session.user.removedAt !== null) {
      throw new AppError('UNAUTHENTICATED', 'The dashboard session has ended; sign in again.');
    }
    if (session.expiresAt.getTime() <= Date.now()) throw new AppError('UNAUTHENTICATED', 'The dashboard session has expired; sign in again.');
    const { user } = session;
    return {
      kind: 'secretKey',
      merchantId: user.merchantId,
      mode: session.mode,
      keyId: session.id,
      user: { id: user.id, email: user.email, role: user.role as Role, sessionId: session.id },
    };
  }

  async logout(principal: SessionPrincipal, requestId: string | null): Promise<void> {
    await this.#store.revokeSession(principal.user.sessionId);
    await this.recordOrLog({ ...actorOfPrincipal(principal), action: 'logout', subjectId: principal.user.sessionId, outcome: 'ok', requestId });
  }

  async switchMode(principal: SessionPrincipal, rawInput: unknown, requestId: string | null): Promise<Mode> {
    const { mode } = parseInput(modeInput, rawInput);
    // Live access is the operator's to grant (docs/api.md, "Keys"): a merchant without a usable live secret key has none.
    if (mode === 'LIVE' && !(await this.hasLiveAccess(principal.merchantId)))
      throw new AppError('FORBIDDEN', 'mode: this merchant has no live access yet (no usable live secret key); ask the operator.', { field: 'mode' });
    await this.#store.setSessionMode(principal.user.sessionId, mode);
    await this.recordOrLog({ ...actorOfPrincipal(principal), action: `mode:${mode}`, subjectId: principal.user.sessionId, outcome: 'ok', requestId });
    return mode;
  }

  private async hasLiveAccess(merchantId: string): Promise<boolean> {
    const now = new Date();
    const key = await this.context.db.apiKey.findFirst({
      where: { merchantId, mode: 'LIVE', type: 'SECRET', revokedAt: null, OR: [{ expiresAt: null }, { expiresAt: { gt: now } }] },
      select: { id: true },
    });
    return key !== null;
  }

  /** Creates the invitation's user with `password` and signs them in. */
  async acceptInvitation(rawInput: unknown, requestId: string | null): Promise<SignedIn> {
    const input = parseInput(acceptInvitationInput, rawInput);
    const invitation = await this.context.db.dashboardInvitation.findUnique({ where: { tokenHash: sha256(input.token) } });
    if (invitation === null) throw new AppError('NOT_FOUND', 'token: no invitation has this token.', { field: 'token' });
    let user: DashboardUser;
    try {
      user = await this.#store.acceptInvitation(invitation.id, await this.hashPassword(input.password), new Date());
    } catch (error) {
      if (isUniqueViolation(error)) throw new AppError('INVALID_STATE', `token: ${invitation.email} already has a dashboard user.`, { field: 'token' });
      throw error;
    }
    await this.recordOrLog({ ...actorOf(user), action: 'acceptInvitation', subjectId: invitation.id, outcome: 'ok', requestId });
    return this.startSession(user, 'TEST');
  }

  /** Which of `sessionIds` may no longer be used (ended, expired, user removed): their running subscriptions end. */
  async unusable(sessionIds: readonly string[]): Promise<Set<string>> {
    if (sessionIds.length === 0) return new Set();
    const usable = await this.context.db.dashboardSession.findMany({
      where: { id: { in: [...sessionIds] }, revokedAt: null, expiresAt: { gt: new Date() }, user: { removedAt: null } },
      select: { id: true },
    });
    const active = new Set(usable.map((row) => row.id));
    return new Set(sessionIds.filter((id) => !active.has(id)));
  }

  /** The signed-in user, or null for an API key. */
  async viewer(principal: UserPrincipal): Promise<DashboardUser | null> {
    if (principal.user === undefined) return null;
    return this.context.db.dashboardUser.findUnique({ where: { id: principal.user.id } });
  }

  members(principal: UserPrincipal): Promise<DashboardUser[]> {
    return this.context.db.dashboardUser.findMany({
      where: { merchantId: principal.merchantId, removedAt: null },
      orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
    });
  }

  invitations(principal: UserPrincipal): Promise<DashboardInvitation[]> {
    return this.context.db.dashboardInvitation.findMany({
      where: { merchantId: principal.merchantId, acceptedAt: null, expiresAt: { gt: new Date() } },
      orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
    });
  }

  /** An invitation and its one-time link (there is no mail: the inviter hands it over). */
  async invite(principal: UserPrincipal, rawInput: unknown): Promise<{ invitation: DashboardInvitation; acceptUrl: string }> {
    const input = parseInput(inviteTeamMemberInput, rawInput);
    if (principal.user === undefined && input.role === 'owner' && (await this.#store.hasOwner(principal.merchantId)))
      throw new AppError('FORBIDDEN', OWNERS_BY_OWNERS, { field: 'role' });
    const existing = await this.context.db.dashboardUser.findUnique({ where: { email: input.email }, select: { id: true } });
    if (existing !== null) throw new AppError('INVALID_STATE', `email: ${input.email} already has a dashboard user.`, { field: 'email' });
    const token = newToken();
    const invitation = await this.#store.createInvitation({
      merchantId: principal.merchantId,
      email: input.email,
      role: input.role,
      tokenHash: sha256(token),
      invitedBy: principal.user?.id ?? null,
      expiresAt: new Date(Date.now() + this.context.config.DASHBOARD_INVITATION_HOURS * 3_600_000),
    });
    // In the fragment, so the token reaches neither this service's access logs nor a Referer.
    return { invitation, acceptUrl: `${this.context.publicUrl}/dashboard/login#invitation=${token}` };
  }

  async updateRole(principal: UserPrincipal, rawInput: unknown): Promise<DashboardUser> {
    const input = parseInput(updateTeamMemberRoleInput, rawInput);
    return this.#store.changeMember(principal.merchantId, input.userId, input.role, principal.user === undefined);
  }

  async remove(principal: UserPrincipal, rawInput: unknown): Promise<DashboardUser> {
    const input = parseInput(removeTeamMemberInput, rawInput);
    return this.#store.changeMember(principal.merchantId, input.userId, null, principal.user === undefined);
  }

  async auditLog(principal: UserPrincipal, rawInput: unknown) {
    const input = parseInput(auditLogInput, rawInput);
    const first = input.first ?? DEFAULT_PAGE_SIZE;
    const rows = await this.context.db.auditLogEntry.findMany({
      where: { merchantId: principal.merchantId, ...olderThanCursor(input.after, 'auditLogEntry') },
      orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
      take: first + 1,
    });
    return connectionPage(rows, first);
  }

  record(entry: AuditRecord): Promise<void> {
    return this.#store.record(entry);
  }

  /**
   * Records what a sign-in route did, after it is done: a failed audit write is logged, never turned into the
   * route's answer (a session made, or a wrong password's 401 that must still count against the limit).
   */
  private async recordOrLog(entry: AuditRecord): Promise<void> {
    await this.record(entry).catch((error: unknown) => this.context.logger.error({ err: error, action: entry.action }, 'audit log write failed'));
  }

  /** The demo's owner (`npm start`), with the password its secrets file keeps. */
  async ensureOwner(user: { id: string; merchantId: string; email: string; password: string }): Promise<void> {
    const { password, ...fields } = user;
    await this.#store.upsertUser({ ...fields, passwordHash: await this.hashPassword(password), role: 'owner' });
  }

  private async startSession(user: DashboardUser, mode: Mode): Promise<SignedIn> {
    const token = newToken();
    const expiresAt = new Date(Date.now() + this.context.config.DASHBOARD_SESSION_HOURS * 3_600_000);
    await this.#store.createSession(user.id, sha256(token), mode, expiresAt);
    return {
      token,
      expiresAt,
      csrfToken: this.csrfTokenOf(token),
      mode,
      user: { id: user.id, email: user.email, role: user.role as Role, merchantId: user.merchantId },
    };
  }

  private dummyHash(): Promise<string> {
    return (this.#dummyHash ??= this.hashPassword(newToken()));
  }
}

function actorOf(user: DashboardUser) {
  return { merchantId: user.merchantId, userId: user.id, userEmail: user.email };
}

function actorOfPrincipal(principal: SessionPrincipal) {
  return { merchantId: principal.merchantId, userId: principal.user.id, userEmail: principal.user.email };
}
