// What the team API accepts (sign-in, invitations, roles, the audit log): validated by the service, and the shape of
// its GraphQL inputs and REST bodies.
import { z } from 'zod';
import { ROLES } from '../../kernel/principal.ts';

export const MIN_PASSWORD_LENGTH = 12;

const email = z.string().trim().toLowerCase().max(254, 'must be at most 254 characters').pipe(z.email('must be an email address'));

/** bcrypt reads 72 bytes at most: a longer password would be cut silently, so it is refused instead. */
const newPassword = z
  .string('must be a string')
  .min(MIN_PASSWORD_LENGTH, `must be at least ${MIN_PASSWORD_LENGTH} characters`)
  .refine((password) => Buffer.byteLength(password) <= 72, 'must be at most 72 bytes (bcrypt reads no more)');

const role = z.enum(ROLES, `must be one of ${ROLES.join(', ')}`);

const userId = z.string().max(64);

export const loginInput = z.object({ email: z.string('must be a string').max(254), password: z.string('must be a string').max(1024) });

export const acceptInvitationInput = z.object({ token: z.string('must be a string').max(256), password: newPassword });

export const modeInput = z.object({ mode: z.enum(['TEST', 'LIVE'], 'must be TEST or LIVE') });

export const inviteTeamMemberInput = z.object({ email, role });

export const updateTeamMemberRoleInput = z.object({ userId, role });

export const removeTeamMemberInput = z.object({ userId });

export const auditLogInput = z.object({
  first: z.number().int().min(1, 'must be at least 1').max(100, 'must be at most 100').nullish(),
  after: z.string().nullish(),
});
