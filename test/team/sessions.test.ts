// Dashboard sign-in and sessions (docs/dashboard.md): the cookie, CSRF, expiry, logout, invitations, the last owner,
// the audit log, and passwords kept out of answers and logs. Real API, sandbox and worker over HTTP.
import { Writable } from 'node:stream';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import {
  AuditLogDocument,
  CreateApiKeyDocument,
  CreatePaymentDocument,
  CreateRefundDocument,
  InvitationsDocument,
  InviteTeamMemberDocument,
  PaymentChangesDocument,
  PaymentDocument,
  PaymentsDocument,
  RemoveTeamMemberDocument,
  TeamMembersDocument,
  UpdateTeamMemberRoleDocument,
  ViewerDocument,
} from '../gql/graphql.ts';
import { createMerchant, startTestApi, type TestApi } from '../support/api.ts';
import { dataOf, errorOf } from '../support/graphql-client.ts';
import { merchantWithSandbox, startStack, type Stack } from '../support/stack.ts';
import { subscribeWs, wsClient } from '../support/subscriptions.ts';
import { member, PASSWORD, post, signIn, uniqueEmail, type Session } from '../support/team.ts';
import { paidPayment } from '../support/webhooks.ts';
import { createLogger } from '../../src/platform/logger.ts';

const logLines: string[] = [];
let stack: Stack;
let sql: pg.Client;

beforeAll(async () => {
  const destination = new Writable({
    write(chunk, _encoding, done) {
      logLines.push(String(chunk));
      done();
    },
  });
  stack = await startStack({ logger: createLogger('debug', destination) });
  sql = new pg.Client({ connectionString: inject('databaseUrl') });
  await sql.connect();
});
afterAll(async () => {
  await sql?.end();
  await stack?.close();
});

const url = () => stack.api.url;

describe('sign-in', () => {
  it('sets an HttpOnly, SameSite=Strict session cookie and answers the user, mode and CSRF token, never the password', async () => {
    const merchant = await createMerchant(stack.api);
    const owner = await member(url(), merchant.secret, 'OWNER');
    const session = await signIn(url(), owner.body.user.email.toUpperCase());
    expect(session.setCookie).toMatch(/^dashboard_session=[A-Za-z0-9_-]{43}; HttpOnly; SameSite=Strict; Path=\/; Max-Age=43\d{3}$/);
    // The service's URL is http://127.0.0.1: a Secure cookie would never come back, so there it is not Secure.
    expect(session.setCookie).not.toContain('Secure');
    expect(session.body).toMatchObject({ user: { email: owner.body.user.email, role: 'owner', merchantId: merchant.merchantId }, mode: 'TEST' });
    expect(JSON.stringify(session.body)).not.toContain(PASSWORD);
    expect(dataOf(await session.gql(ViewerDocument, {})).viewer).toMatchObject({ email: owner.body.user.email, role: 'OWNER' });
    const current = await fetch(`${url()}/dashboard/session`, { headers: { cookie: session.cookie } });
    const { expiresAt, ...withoutExpiry } = session.body as Session['body'] & { expiresAt: string };
    expect(new Date(expiresAt).getTime() - Date.now()).toBeGreaterThan(11.9 * 3_600_000);
    expect(await current.json()).toEqual(withoutExpiry);
    expect((await fetch(`${url()}/dashboard/session`)).status).toBe(401);
  });

  it('answers a wrong password and an unknown email alike', async () => {
    const merchant = await createMerchant(stack.api);
    const owner = await member(url(), merchant.secret, 'OWNER');
    const wrong = await post(url(), '/dashboard/login', { email: owner.body.user.email, password: 'not the password at all' });
    const unknown = await post(url(), '/dashboard/login', { email: uniqueEmail('nobody'), password: PASSWORD });
    expect(wrong.status).toBe(401);
    expect(wrong.setCookie).toBeNull();
    expect({ status: unknown.status, code: unknown.body.error.code, message: unknown.body.error.message }).toEqual({
      status: 401,
      code: wrong.body.error.code,
      message: wrong.body.error.message,
    });
  });

  it('keeps passwords out of every log line', () => {
    expect(logLines.length).toBeGreaterThan(0);
    expect(logLines.filter((line) => line.includes(PASSWORD) || line.includes('not the password at all'))).toEqual([]);
  });
});

describe('failed sign-ins', () => {
  let api: TestApi;
  beforeAll(async () => {
    api = await startTestApi({
      RATE_LIMIT_LOGINS_PER_EMAIL: '3/600',
      RATE_LIMIT_LOGINS_PER_IP: '5/600',
      REDIS_PREFIX: `${inject('redisPrefix')}_login`,
      // Served behind HTTPS: the cookie is Secure.
      PUBLIC_URL: 'https://payments.example',
    });
  });
  afterAll(() => api?.close());

  it('are limited per email address, then per client IP, even with the right password', async () => {
    const merchant = await createMerchant(api);
    const owner = await member(api.url, merchant.secret, 'OWNER');
    expect(owner.setCookie).toMatch(/; Secure$/);
    const email = owner.body.user.email;
    for (let attempt = 0; attempt < 3; attempt += 1)
      expect((await post(api.url, '/dashboard/login', { email, password: 'wrong password 123' })).status).toBe(401);
    const limited = await post(api.url, '/dashboard/login', { email, password: PASSWORD });
    expect([limited.status, limited.body.error.code]).toEqual([429, 'RATE_LIMITED']);
    expect(limited.body.error.message).toContain('email');
    // Two more failures for other addresses reach this IP's limit of 5.
    for (const other of [uniqueEmail('a'), uniqueEmail('b')])
      expect((await post(api.url, '/dashboard/login', { email: other, password: PASSWORD })).status).toBe(401);
    const second = await member(api.url, merchant.secret, 'VIEWER');
    const byIp = await post(api.url, '/dashboard/login', { email: second.body.user.email, password: PASSWORD });
    expect([byIp.status, byIp.body.error.message]).toEqual([429, expect.stringContaining('address')]);
  });
});

describe('parallel sign-in guesses', () => {
  let api: TestApi;
  beforeAll(async () => {
    api = await startTestApi({
      RATE_LIMIT_LOGINS_PER_EMAIL: '3/600',
      RATE_LIMIT_LOGINS_PER_IP: '1000/600',
      REDIS_PREFIX: `${inject('redisPrefix')}_login_burst`,
      // Every address and no public URL: a TLS proxy may be in front, so the cookie is Secure.
      HOST: '0.0.0.0',
    });
  });
  afterAll(() => api?.close());

  it('check no more passwords than the limit, however many arrive at once; a right one then still counts for the email', async () => {
    const merchant = await createMerchant(api);
    const owner = await member(api.url, merchant.secret, 'OWNER');
    const email = owner.body.user.email;
    // A right password forgives its own attempt: the email's three failures are all still available.
    const signedIn = await post(api.url, '/dashboard/login', { email, password: PASSWORD });
    expect([signedIn.status, signedIn.setCookie]).toEqual([200, expect.stringMatching(/; Secure$/)]);
    const burst = await Promise.all(Array.from({ length: 12 }, () => post(api.url, '/dashboard/login', { email, password: 'wrong password 123' })));
    const statuses = burst.map((answer) => answer.status).sort();
    expect(statuses).toEqual([...Array<number>(3).fill(401), ...Array<number>(9).fill(429)]);
  });
});

describe('CSRF', () => {
  it('refuses a cookie-authenticated request without the session’s token, and does nothing', async () => {
    const merchant = await merchantWithSandbox(stack);
    const admin = await member(url(), merchant.secret, 'ADMIN');
    const create = { input: { amount: 500, currency: 'USD' } };
    // The last character changed (to one it is not: a token ending in A stayed itself one run in 64).
    const wrong = `${admin.csrfToken.slice(0, -1)}${admin.csrfToken.endsWith('A') ? 'B' : 'A'}`;
    for (const csrf of [{ 'x-csrf-token': '' }, { 'x-csrf-token': wrong }]) {
      const refused = errorOf(await admin.gql(CreatePaymentDocument, create, csrf), 'FORBIDDEN');
      expect(refused.extensions?.field).toBe('X-CSRF-Token');
    }
    // A page on another site can send the cookie (were it not SameSite=Strict) but not the header.
    const bare = await fetch(`${url()}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', cookie: admin.cookie },
      body: JSON.stringify({ query: 'mutation { createPayment(input: {amount: 500, currency: "USD"}) { id } }' }),
    });
    expect(bare.status).toBe(403);
    expect(dataOf(await merchant.secret(PaymentsDocument, {})).payments.edges).toEqual([]);
    // Logout and the mode switch need it too.
    expect((await post(url(), '/dashboard/logout', {}, { cookie: admin.cookie })).status).toBe(403);
    expect((await post(url(), '/dashboard/session/mode', { mode: 'LIVE' }, { cookie: admin.cookie, 'x-csrf-token': 'nope' })).status).toBe(403);
    expect(dataOf(await admin.gql(ViewerDocument, {})).viewer?.id).toBe(admin.body.user.id);
    // With the token it works, and the payment's history names the session as the actor, as it names a key.
    const created = dataOf(await admin.gql(CreatePaymentDocument, create)).createPayment;
    const { payment } = dataOf(await admin.gql(PaymentDocument, { id: created.id }));
    const actors = new Set(payment?.history.map((change) => change.actor));
    expect([...actors]).toEqual([expect.stringMatching(/^ses_[0-9A-Za-z]{24}$/)]);
  });

  it('is required in graphql-ws connection_init', async () => {
    const merchant = await merchantWithSandbox(stack);
    const viewer = await member(url(), merchant.secret, 'VIEWER');
    const refused = subscribeWs(cookieWsClient(viewer.cookie, undefined), PaymentChangesDocument, { profileId: merchant.profileId });
    expect((await refused.waitForError()).map((error) => error.extensions?.code)).toEqual(['FORBIDDEN']);
    const accepted = subscribeWs(cookieWsClient(viewer.cookie, viewer.csrfToken), PaymentChangesDocument, { profileId: merchant.profileId });
    await paidPayment(merchant);
    await accepted.waitFor(1);
    accepted.close();
  });
});

/** A graphql-ws client that sends `cookie` with its upgrade, as a browser does, and `csrfToken` in connection_init. */
function cookieWsClient(cookie: string, csrfToken: string | undefined) {
  return wsClient(url(), undefined, undefined, csrfToken === undefined ? {} : { csrfToken }, { cookie });
}

describe('sessions end', () => {
  it('at their absolute expiry', async () => {
    const merchant = await createMerchant(stack.api);
    const session = await member(url(), merchant.secret, 'VIEWER');
    dataOf(await session.gql(ViewerDocument, {}));
    await sql.query(`UPDATE dashboard_sessions SET expires_at = now() - interval '1 second' WHERE user_id = $1`, [session.body.user.id]);
    expect(errorOf(await session.gql(ViewerDocument, {}), 'UNAUTHENTICATED').message).toContain('expired');
    expect((await fetch(`${url()}/dashboard/session`, { headers: { cookie: session.cookie } })).status).toBe(401);
  });

  it('at logout, with their subscriptions, and the cookie is cleared', async () => {
    const merchant = await merchantWithSandbox(stack);
    const session = await member(url(), merchant.secret, 'VIEWER');
    const stream = subscribeWs(cookieWsClient(session.cookie, session.csrfToken), PaymentChangesDocument, { profileId: merchant.profileId });
    await paidPayment(merchant);
    await stream.waitFor(1);
    const out = await post(url(), '/dashboard/logout', {}, { cookie: session.cookie, 'x-csrf-token': session.csrfToken });
    expect(out.status).toBe(200);
    expect(out.setCookie).toMatch(/^dashboard_session=; HttpOnly; SameSite=Strict; Path=\/; Max-Age=0$/);
    expect((await stream.waitForError()).map((error) => error.extensions?.code)).toContain('UNAUTHENTICATED');
    errorOf(await session.gql(ViewerDocument, {}), 'UNAUTHENTICATED');
  });
});

describe('the team', () => {
  it('joins by invitation: the link works once, and sets a password of at least 12 characters', async () => {
    const merchant = await createMerchant(stack.api);
    const owner = await member(url(), merchant.secret, 'OWNER');
    const email = uniqueEmail('dev');
    const invited = dataOf(await owner.gql(InviteTeamMemberDocument, { input: { email: email.toUpperCase(), role: 'DEVELOPER' } })).inviteTeamMember;
    expect(invited.invitation).toMatchObject({ email, role: 'DEVELOPER', invitedBy: owner.body.user.id });
    expect(dataOf(await owner.gql(InvitationsDocument, {})).invitations.map((invitation) => invitation.email)).toEqual([email]);
    const token = new URL(invited.acceptUrl).hash.replace('#invitation=', '');
    expect(invited.acceptUrl).toBe(`${url()}/dashboard/login#invitation=${token}`);
    const short = await post(url(), '/dashboard/invitations/accept', { token, password: 'too short' });
    expect([short.status, short.body.error.field, short.body.error.message]).toEqual([400, 'password', 'password: must be at least 12 characters']);
    const accepted = await post(url(), '/dashboard/invitations/accept', { token, password: PASSWORD });
    expect(accepted.body.user).toMatchObject({ email, role: 'developer', merchantId: merchant.merchantId });
    const again = await post(url(), '/dashboard/invitations/accept', { token, password: PASSWORD });
    expect([again.status, again.body.error.message]).toEqual([409, 'token: this invitation was already used or has expired.']);
    expect(dataOf(await owner.gql(InvitationsDocument, {})).invitations).toEqual([]);
    expect(dataOf(await owner.gql(TeamMembersDocument, {})).teamMembers.map((user) => [user.email, user.role])).toEqual([
      [owner.body.user.email, 'OWNER'],
      [email, 'DEVELOPER'],
    ]);
    await signIn(url(), email);
  });

  it('keeps its last owner: not removed, not demoted, until another owner exists', async () => {
    const merchant = await createMerchant(stack.api);
    const owner = await member(url(), merchant.secret, 'OWNER');
    const userId = owner.body.user.id;
    for (const refused of [
      await owner.gql(RemoveTeamMemberDocument, { input: { userId } }),
      await owner.gql(UpdateTeamMemberRoleDocument, { input: { userId, role: 'ADMIN' } }),
    ]) {
      expect(errorOf(refused, 'INVALID_STATE').message).toContain('last owner');
    }
    const second = await member(url(), merchant.secret, 'ADMIN');
    dataOf(await owner.gql(UpdateTeamMemberRoleDocument, { input: { userId: second.body.user.id, role: 'OWNER' } }));
    dataOf(await second.gql(RemoveTeamMemberDocument, { input: { userId } }));
    // A removed member's sessions end with them.
    errorOf(await owner.gql(ViewerDocument, {}), 'UNAUTHENTICATED');
    expect((await post(url(), '/dashboard/login', { email: owner.body.user.email, password: PASSWORD })).status).toBe(401);
  });
});

/** Live access, as the operator grants it: a live secret key issued with the admin key. */
const grantLive = async (merchantId: string) =>
  dataOf(await stack.api.admin(CreateApiKeyDocument, { input: { merchantId, mode: 'LIVE', type: 'SECRET', name: 'live' } }));

describe('what neither a session nor a key may take for itself', () => {
  it('a sign-in or an invitation posted as a form (what another site can send unasked) is refused, signing no one in', async () => {
    for (const path of ['/dashboard/login', '/dashboard/invitations/accept']) {
      const response = await fetch(`${url()}${path}`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: '{"email":"a@b.example"}' });
      expect([response.status, response.headers.get('set-cookie'), ((await response.json()) as { error: { field: string } }).error.field]).toEqual([
        400,
        null,
        'Content-Type',
      ]);
    }
  });

  it('a session switches to live mode only once the operator has given the merchant a live secret key', async () => {
    const merchant = await merchantWithSandbox(stack);
    const admin = await member(url(), merchant.secret, 'ADMIN');
    const headers = { cookie: admin.cookie, 'x-csrf-token': admin.csrfToken };
    const refused = await post(url(), '/dashboard/session/mode', { mode: 'LIVE' }, headers);
    expect([refused.status, refused.body.error?.code, refused.body.error?.field]).toEqual([403, 'FORBIDDEN', 'mode']);
    await grantLive(merchant.merchantId);
    expect((await post(url(), '/dashboard/session/mode', { mode: 'LIVE' }, headers)).status).toBe(200);
  });

  it('a secret key (any role that manages keys can mint one) invites the first owner, but never makes, demotes or removes one after', async () => {
    const merchant = await merchantWithSandbox(stack);
    const owner = await member(url(), merchant.secret, 'OWNER');
    const developer = await member(url(), merchant.secret, 'DEVELOPER');
    for (const refused of [
      await merchant.secret(InviteTeamMemberDocument, { input: { email: uniqueEmail('usurper'), role: 'OWNER' } }),
      await merchant.secret(UpdateTeamMemberRoleDocument, { input: { userId: developer.body.user.id, role: 'OWNER' } }),
      await merchant.secret(UpdateTeamMemberRoleDocument, { input: { userId: owner.body.user.id, role: 'VIEWER' } }),
      await merchant.secret(RemoveTeamMemberDocument, { input: { userId: owner.body.user.id } }),
    ])
      errorOf(refused, 'FORBIDDEN');
    // Below owner, a key still manages the team (machines); a signed-in owner manages owners.
    dataOf(await merchant.secret(UpdateTeamMemberRoleDocument, { input: { userId: developer.body.user.id, role: 'ADMIN' } }));
    dataOf(await owner.gql(UpdateTeamMemberRoleDocument, { input: { userId: developer.body.user.id, role: 'OWNER' } }));
  });
});

describe('the audit log', () => {
  it('records who refunded what, how it ended, and the sign-ins, mode switches and logouts, with no input value beyond the id', async () => {
    const merchant = await merchantWithSandbox(stack);
    const owner = await member(url(), merchant.secret, 'OWNER');
    const admin = await member(url(), merchant.secret, 'ADMIN');
    const payment = await paidPayment(merchant);
    dataOf(await admin.gql(CreateRefundDocument, { input: { paymentId: payment.id, amount: 100, reason: 'customer-secret-reason' } }));
    errorOf(await admin.gql(CreateRefundDocument, { input: { paymentId: payment.id, amount: 1_000_000 } }), 'INVALID_INPUT');
    await post(url(), '/dashboard/login', { email: admin.body.user.email, password: 'wrong password 123' });
    await grantLive(merchant.merchantId);
    expect((await post(url(), '/dashboard/session/mode', { mode: 'LIVE' }, { cookie: admin.cookie, 'x-csrf-token': admin.csrfToken })).status).toBe(200);
    await post(url(), '/dashboard/logout', {}, { cookie: admin.cookie, 'x-csrf-token': admin.csrfToken });
    const rows = dataOf(await owner.gql(AuditLogDocument, { first: 100 })).auditLog.edges.map(({ node }) => node);
    const adminRows = rows.filter((row) => row.userId === admin.body.user.id).reverse();
    expect(adminRows.map(({ action, subjectId, outcome, userEmail }) => ({ action, subjectId, outcome, userEmail }))).toEqual([
      { action: 'acceptInvitation', subjectId: expect.stringMatching(/^inv_/), outcome: 'ok', userEmail: admin.body.user.email },
      { action: 'createRefund', subjectId: payment.id, outcome: 'ok', userEmail: admin.body.user.email },
      { action: 'createRefund', subjectId: payment.id, outcome: 'INVALID_INPUT', userEmail: admin.body.user.email },
      { action: 'login', subjectId: null, outcome: 'UNAUTHENTICATED', userEmail: admin.body.user.email },
      { action: 'mode:LIVE', subjectId: expect.stringMatching(/^ses_/), outcome: 'ok', userEmail: admin.body.user.email },
      { action: 'logout', subjectId: expect.stringMatching(/^ses_/), outcome: 'ok', userEmail: admin.body.user.email },
    ]);
    expect(adminRows[1]!.requestId).toMatch(/\S/);
    expect(JSON.stringify(rows)).not.toContain('customer-secret-reason');
    // Another merchant's owner sees none of it.
    const stranger = await member(url(), (await createMerchant(stack.api)).secret, 'OWNER');
    expect(dataOf(await stranger.gql(AuditLogDocument, {})).auditLog.edges.map(({ node }) => node.action)).toEqual(['acceptInvitation']);
  });
});
