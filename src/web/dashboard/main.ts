// The dashboard's shell (GET /dashboard, docs/dashboard.md): the signed-in session (GET /dashboard/session;
// none sends the reader to the login page), the navigation between its pages by the `#/` fragment, the
// TEST/LIVE switch, signing out, the announced alert region and the confirmation dialog the pages ask through.
import { ApiError, createTransport } from '@payments-orchestrator/client-core';
import { byId, element } from '../dom.ts';
import { page as balancePage } from './balance.ts';
import { page as eventsPage } from './events.ts';
import type { DashboardContext, DashboardPage, DashboardUser } from './page.ts';
import { page as paymentPage } from './payment.ts';
import { page as paymentsPage } from './payments.ts';
import { settingsPages } from './settings/index.ts';

interface Session {
  user: DashboardUser;
  csrfToken: string;
  mode: DashboardContext['mode'];
}

const LOGIN = '/dashboard/login';
const PAGES: DashboardPage[] = [paymentsPage, paymentPage, eventsPage, balancePage, ...settingsPages];
const HOME = 'payments';

const alertRegion = byId('alert');
const noticeRegion = byId('notice');

/** The session's user, token and mode, or null when there is none (401). */
async function readSession(): Promise<Session | null> {
  const response = await fetch('/dashboard/session', { credentials: 'same-origin' });
  if (response.status === 401) return null;
  if (!response.ok) throw new Error(`The session could not be read (HTTP ${response.status}).`);
  const session = (await response.json()) as Session;
  // The session answers roles in lower case (docs/dashboard.md); the pages compare them as GraphQL's TeamRole spells them.
  return { ...session, user: { ...session.user, role: session.user.role.toUpperCase() as DashboardUser['role'] } };
}

/** A session change (sign out, mode): POST with the CSRF token; the API's own message when refused. */
async function post(path: string, csrfToken: string, body: unknown): Promise<void> {
  const response = await fetch(path, {
    method: 'POST',
    credentials: 'same-origin',
    headers: { 'content-type': 'application/json', 'x-csrf-token': csrfToken },
    body: JSON.stringify(body),
  });
  if (response.ok) return;
  const answer = (await response.json().catch(() => null)) as { error?: { message?: string } } | null;
  throw new Error(answer?.error?.message ?? `The request was refused (HTTP ${response.status}).`);
}

/** An error as the reader sees it: the API's own message, with its code (INVALID_STATE) when it has one. */
const failureText = (error: unknown) =>
  error instanceof ApiError ? `${error.message} (${error.code})` : error instanceof Error ? error.message : String(error);

function announce(region: HTMLElement, text: string): void {
  // Emptied first: the same message twice in a row is announced again.
  region.textContent = '';
  requestAnimationFrame(() => (region.textContent = text));
}

/**
 * The confirmation dialog: modal (the rest of the page is inert), the confirm button focused, and the focus
 * back where it was when it closes; Escape cancels.
 */
function confirmWith(question: string, confirmLabel: string): Promise<boolean> {
  const dialog = byId<HTMLDialogElement>('confirm');
  const opener = document.activeElement instanceof HTMLElement ? document.activeElement : null;
  byId('confirm-question').textContent = question;
  const accept = byId<HTMLButtonElement>('confirm-accept');
  accept.textContent = confirmLabel;
  dialog.returnValue = '';
  dialog.showModal();
  accept.focus();
  return new Promise((resolve) => {
    dialog.addEventListener(
      'close',
      () => {
        opener?.focus();
        resolve(dialog.returnValue === 'confirm');
      },
      { once: true },
    );
  });
}

function drawNavigation(current: DashboardPage | undefined): void {
  byId('nav-links').replaceChildren(
    ...PAGES.filter((page) => page.navLabel).map((page) => {
      const path = page.route.source.replace(/^\^|\$$/g, '').replace(/\\\//g, '/');
      const link = element('a', { href: `#/${path}` }, page.navLabel!);
      if (page === current) link.setAttribute('aria-current', 'page');
      return element('li', {}, link);
    }),
  );
}

async function start(): Promise<void> {
  const session = await readSession();
  if (!session) return location.assign(LOGIN);
  const api = createTransport({ csrfToken: session.csrfToken });
  const title = byId('page-title');
  const root = byId('page');
  let stop: (() => void) | void;
  let shownPath: string | null = null;

  const context: DashboardContext = {
    api,
    user: session.user,
    mode: session.mode,
    navigate: (path) => void (location.hash = `#/${path}`),
    confirm: confirmWith,
    showFailure: (error) => {
      noticeRegion.textContent = '';
      announce(alertRegion, failureText(error));
    },
    showNotice: (message) => {
      alertRegion.textContent = '';
      announce(noticeRegion, message);
    },
  };

  /** Draws the page of the fragment (`#/payments/pay_1?…`); a change of its query only redraws the same page. */
  const route = async () => {
    const [path = '', query = ''] = location.hash.replace(/^#\/?/, '').split('?', 2);
    const match = PAGES.map((page) => ({ page, found: page.route.exec(path) })).find(({ found }) => found);
    if (!match) return void location.replace(`#/${HOME}`);
    stop?.();
    stop = undefined;
    alertRegion.textContent = '';
    const samePage = shownPath === path;
    shownPath = path;
    drawNavigation(match.page);
    title.textContent = match.page.title;
    document.title = `${match.page.title} · Dashboard`;
    const params = { ...Object.fromEntries(new URLSearchParams(query)), ...match.found!.groups };
    document.body.dataset['ready'] = 'false';
    try {
      stop = await match.page.render(root, params, context);
    } catch (error) {
      root.replaceChildren();
      context.showFailure(error);
    }
    document.body.dataset['ready'] = 'true';
    // A new page moves the keyboard to its heading (read first by a screen reader); a new filter keeps it in the form.
    if (!samePage) title.focus();
  };

  byId('user-email').textContent = `${session.user.email} (${session.user.role.toLowerCase()})`;
  const modeSwitch = byId<HTMLSelectElement>('mode');
  modeSwitch.value = session.mode;
  byId('shell').dataset['mode'] = session.mode;
  modeSwitch.addEventListener('change', () => {
    // The whole page follows the mode (its subscriptions, its lists): reloaded once the session has it.
    void post('/dashboard/session/mode', session.csrfToken, { mode: modeSwitch.value }).then(
      () => location.reload(),
      (error: unknown) => {
        modeSwitch.value = session.mode;
        context.showFailure(error);
      },
    );
  });
  byId('sign-out').addEventListener('click', () => {
    void post('/dashboard/logout', session.csrfToken, {}).then(() => location.assign(LOGIN), context.showFailure);
  });
  byId('shell').hidden = false;
  window.addEventListener('hashchange', () => void route());
  await route();
}

void start().catch((error: unknown) => (alertRegion.textContent = failureText(error)));
