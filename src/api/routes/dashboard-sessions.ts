// Dashboard sign-in and sessions (docs/dashboard.md):
//   POST /dashboard/login                {email, password}  sets the session cookie; answers the user, mode and CSRF token
//   GET  /dashboard/session                                 the signed-in user, mode and CSRF token (401 without a session)
//   POST /dashboard/session/mode         {mode}             switches the session to TEST or LIVE (CSRF)
//   POST /dashboard/logout                                  ends the session and clears the cookie (CSRF)
//   POST /dashboard/invitations/accept   {token, password}  creates the invited user and signs them in
// Failed sign-ins are limited per client IP and per email address, with one answer for an unknown address and a wrong
// password. GraphQL reads the same cookie (src/api/authenticate.ts).
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Config } from '../../platform/config.ts';
import { AppError, ERROR_CODES, errorBody, headersOf } from '../../kernel/errors.ts';
import { sessionOf, type SessionPrincipal } from '../../kernel/principal.ts';
import type { Services } from '../../modules/services.ts';
import type { SignedIn } from '../../modules/team/index.ts';
import type { RateLimits } from '../../platform/rate-limits.ts';
import { BodyTooLargeError, readBody, sendJson } from '../../platform/http/node-bridge.ts';
import { authenticateRequest, CSRF_HEADER, SESSION_COOKIE, sessionTokenOf } from '../authenticate.ts';

export const DASHBOARD_SESSION_ROUTES = new Set([
  '/dashboard/login',
  '/dashboard/session',
  '/dashboard/session/mode',
  '/dashboard/logout',
  '/dashboard/invitations/accept',
]);

const MAX_BODY_BYTES = 4096;

interface RouteDeps {
  config: Config;
  services: Services;
  limits: RateLimits;
  clientIp: string;
  requestId: string;
}

/**
 * Whether the cookie is sent over HTTPS only: always, but when the service is reached over plain HTTP on this machine
 * alone (the demo: a loopback public URL, or none and a loopback listening address), where a Secure cookie would never
 * come back. Listening on every address without a public URL is not loopback: a TLS proxy may sit in front.
 */
function secureCookie(config: Config): boolean {
  const url = new URL(config.PUBLIC_URL ?? `http://${config.HOST.includes(':') ? `[${config.HOST}]` : config.HOST}`);
  return !(url.protocol === 'http:' && ['localhost', '127.0.0.1', '[::1]'].includes(url.hostname));
}

function cookie(config: Config, value: string, maxAgeSeconds: number): string {
  return `${SESSION_COOKIE}=${value}; HttpOnly; SameSite=Strict; Path=/; Max-Age=${maxAgeSeconds}${secureCookie(config) ? '; Secure' : ''}`;
}

async function readJson(request: IncomingMessage): Promise<unknown> {
  // A cross-site page can post a form (text/plain, urlencoded) without asking first, but not JSON: requiring it
  // keeps another site from signing a reader in to its own account (login CSRF).
  if (!/^application\/json\s*(;|$)/i.test(request.headers['content-type'] ?? ''))
    throw new AppError('INVALID_INPUT', 'Content-Type: must be application/json.', { field: 'Content-Type' });
  const body = (await readBody(request, MAX_BODY_BYTES)).toString('utf8');
  try {
    return body.trim() === '' ? {} : JSON.parse(body);
  } catch {
    throw new AppError('INVALID_INPUT', 'The body must be JSON.', { field: '(body)' });
  }
}

const sessionBody = (session: Pick<SignedIn, 'user' | 'csrfToken' | 'mode'>) => ({ user: session.user, csrfToken: session.csrfToken, mode: session.mode });

function signIn(config: Config, reply: ServerResponse, signedIn: SignedIn): void {
  const maxAge = Math.max(0, Math.floor((signedIn.expiresAt.getTime() - Date.now()) / 1000));
  sendJson(reply, 200, { ...sessionBody(signedIn), expiresAt: signedIn.expiresAt.toISOString() }, { 'set-cookie': cookie(config, signedIn.token, maxAge) });
}

/** The request's session: its cookie, and for a change its CSRF header too; UNAUTHENTICATED without one. */
async function sessionOfRequest(
  { services, limits, clientIp }: RouteDeps,
  request: IncomingMessage,
  withCsrf: boolean,
): Promise<{ principal: SessionPrincipal; token: string }> {
  const token = sessionTokenOf(request.headers.cookie);
  if (token === null) throw new AppError('UNAUTHENTICATED', 'Not signed in to the dashboard.');
  const csrf = request.headers[CSRF_HEADER.toLowerCase()];
  const csrfToken = withCsrf ? (typeof csrf === 'string' ? csrf : null) : services.team.csrfTokenOf(token);
  const principal = sessionOf(await authenticateRequest(services, limits, { key: null, connectedMerchantId: null, sessionToken: token, csrfToken }, clientIp));
  if (principal === null) throw new AppError('UNAUTHENTICATED', 'Not signed in to the dashboard.');
  return { principal, token };
}

async function login(deps: RouteDeps, request: IncomingMessage, reply: ServerResponse): Promise<void> {
  const { services, limits, clientIp, requestId, config } = deps;
  const input = await readJson(request);
  const email = typeof (input as { email?: unknown }).email === 'string' ? (input as { email: string }).email.trim().toLowerCase() : '';
  // Every attempt is counted as a failure before its password is checked, and forgiven once it is not one: counted
  // after the check, a burst of parallel guesses would all pass a limit none of them had reached yet.
  await limits.consume('failedLoginsPerIp', clientIp);
  try {
    await limits.consume('failedLoginsPerEmail', email);
  } catch (refusal) {
    await limits.forgive('failedLoginsPerIp', clientIp); // refused unchecked: no guess was made
    throw refusal;
  }
  let signedIn: Awaited<ReturnType<typeof services.team.login>>;
  try {
    signedIn = await services.team.login(input, requestId);
  } catch (error) {
    if (!(error instanceof AppError && error.code === 'UNAUTHENTICATED')) await forgiveLogin(limits, clientIp, email);
    throw error;
  }
  await forgiveLogin(limits, clientIp, email);
  signIn(config, reply, signedIn);
}

async function forgiveLogin(limits: RouteDeps['limits'], clientIp: string, email: string): Promise<void> {
  await Promise.all([limits.forgive('failedLoginsPerIp', clientIp), limits.forgive('failedLoginsPerEmail', email)]);
}

async function route(deps: RouteDeps, path: string, request: IncomingMessage, reply: ServerResponse): Promise<void> {
  const { services, config, requestId } = deps;
  const method = request.method ?? '';
  if (path === '/dashboard/session' && method === 'GET') {
    const { principal, token } = await sessionOfRequest(deps, request, false);
    const { user } = principal;
    return sendJson(
      reply,
      200,
      sessionBody({
        user: { id: user.id, email: user.email, role: user.role, merchantId: principal.merchantId },
        csrfToken: services.team.csrfTokenOf(token),
        mode: principal.mode,
      }),
    );
  }
  if (method !== 'POST') return sendJson(reply, 405, errorBody('METHOD_NOT_ALLOWED', 'Use POST here.'));
  switch (path) {
    case '/dashboard/login':
      return login(deps, request, reply);
    case '/dashboard/invitations/accept':
      return signIn(config, reply, await services.team.acceptInvitation(await readJson(request), requestId));
    case '/dashboard/session/mode': {
      const { principal } = await sessionOfRequest(deps, request, true);
      return sendJson(reply, 200, { mode: await services.team.switchMode(principal, await readJson(request), requestId) });
    }
    case '/dashboard/logout': {
      const { principal } = await sessionOfRequest(deps, request, true);
      await services.team.logout(principal, requestId);
      return sendJson(reply, 200, { signedOut: true }, { 'set-cookie': cookie(config, '', 0) });
    }
    default:
      return sendJson(reply, 405, errorBody('METHOD_NOT_ALLOWED', 'Use GET here.'));
  }
}

export async function handleDashboardSession(deps: RouteDeps, path: string, request: IncomingMessage, reply: ServerResponse): Promise<void> {
  try {
    await route(deps, path, request, reply);
  } catch (error) {
    if (error instanceof BodyTooLargeError) return sendJson(reply, 413, errorBody('PAYLOAD_TOO_LARGE', `The body must be at most ${MAX_BODY_BYTES} bytes.`));
    if (!(error instanceof AppError)) throw error;
    sendJson(reply, ERROR_CODES[error.code].httpStatus, errorBody(error.code, error.message, error.details['field']), headersOf(error));
  }
}
