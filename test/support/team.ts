// Dashboard users for the team tests: invited with a merchant's secret key, signed in over the REST routes, and a
// GraphQL client that sends the session's cookie and CSRF token as the dashboard's page does.
import { expect } from 'vitest';
import { InviteTeamMemberDocument, type TeamRole } from '../gql/graphql.ts';
import { dataOf, graphqlClient, type Execute } from './graphql-client.ts';

export const PASSWORD = 'correct horse battery staple';

export interface Session {
  cookie: string;
  csrfToken: string;
  /** GraphQL as this session: cookie and CSRF token sent, no API key. */
  gql: Execute;
  setCookie: string;
  body: { user: { id: string; email: string; role: string; merchantId: string }; csrfToken: string; mode: string };
}

let counter = 0;

export const uniqueEmail = (role: string) => `${role}.${process.pid}.${Date.now()}.${++counter}@team.example`;

/** A REST answer of the dashboard routes: an error, or a session's body. */
type RestBody = { error: { code: string; message: string; field?: string } } & Session['body'];

export async function post(url: string, path: string, body: unknown, headers: Record<string, string> = {}) {
  const response = await fetch(`${url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  return { status: response.status, setCookie: response.headers.get('set-cookie'), body: (await response.json()) as RestBody };
}

export function sessionOf(url: string, setCookie: string, body: Session['body']): Session {
  const cookie = setCookie.split(';')[0]!;
  const client = graphqlClient(url);
  const gql: Execute = (document, variables, headers = {}) => client(document, variables, { cookie, 'x-csrf-token': body.csrfToken, ...headers });
  return { cookie, csrfToken: body.csrfToken, gql, setCookie, body };
}

/** Each merchant's owner, by its secret key's client: a key invites only the first owner (docs/dashboard.md, "Roles"). */
const owners = new WeakMap<Execute, string>();

/**
 * Invites `email` with `role` through the merchant's secret key and accepts it: the new member, signed in. An
 * OWNER asked for again of the same key is the first one, signed in anew.
 */
export async function member(url: string, secret: Execute, role: TeamRole, email = uniqueEmail(role.toLowerCase())): Promise<Session> {
  const owner = role === 'OWNER' ? owners.get(secret) : undefined;
  if (owner !== undefined) return signIn(url, owner);
  if (role === 'OWNER') owners.set(secret, email);
  const { acceptUrl } = dataOf(await secret(InviteTeamMemberDocument, { input: { email, role } })).inviteTeamMember;
  const token = new URL(acceptUrl).hash.replace('#invitation=', '');
  const accepted = await post(url, '/dashboard/invitations/accept', { token, password: PASSWORD });
  expect(accepted.status, JSON.stringify(accepted.body)).toBe(200);
  return sessionOf(url, accepted.setCookie!, accepted.body as Session['body']);
}

export async function signIn(url: string, email: string, password = PASSWORD): Promise<Session> {
  const answer = await post(url, '/dashboard/login', { email, password });
  expect(answer.status, JSON.stringify(answer.body)).toBe(200);
  return sessionOf(url, answer.setCookie!, answer.body as Session['body']);
}
