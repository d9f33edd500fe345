// The service's own web pages and the scripts they run:
//   GET /checkout            the hosted checkout (credentials in the fragment: #client_secret=…&publishable_key=…)
//   GET /dashboard           the dashboard, signed in by its session (docs/dashboard.md)
//   GET /dashboard/login     the dashboard's sign-in (and invitation acceptance: #invitation=…) page
//   GET /sdk/payments.js     the payments SDK as one ES module, for merchants' own pages
//   GET /assets/{checkout,dashboard,payment-link,login}.js, /assets/styles.css
// The scripts are TypeScript under src/web and the browser SDK's package (packages/js, from its source),
// bundled by esbuild in memory on first request and kept for the process's life (esbuild because tsx, which
// runs the service, is built on it already).
import { readFile } from 'node:fs/promises';
import type { ServerResponse } from 'node:http';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { errorBody } from '../kernel/errors.ts';
import { sendJson } from '../platform/http/node-bridge.ts';

const source = (path: string) => fileURLToPath(new URL(path, import.meta.url));

// The workspace packages' export condition for their TypeScript source (docs/sdk.md, "Building the packages"):
// the service bundles the SDK as it is in this checkout, not a build of it.
const PACKAGE_SOURCE_CONDITION = '@payments-orchestrator/source';

/** Each script's entry: a file, or a package resolved from this directory. */
const SCRIPTS: Record<string, string> = {
  '/sdk/payments.js': '@payments-orchestrator/js',
  '/assets/checkout.js': source('../web/checkout.ts'),
  '/assets/dashboard.js': source('../web/dashboard/main.ts'),
  '/assets/payment-link.js': source('../web/payment-link.ts'),
  '/assets/login.js': source('../web/login.ts'),
};
const STYLES_PATH = '/assets/styles.css';

// Scripts and styles from this origin only; no inline script or style attribute; API calls and graphql-ws
// to this origin; never framed (the checkout takes card numbers).
const PAGE_POLICY =
  "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

export const LOGIN_PAGE_ROUTE = '/dashboard/login';

export const WEB_ROUTES = new Set(['/checkout', '/dashboard', LOGIN_PAGE_ROUTE, STYLES_PATH, ...Object.keys(SCRIPTS)]);

export const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);

const bundles = new Map<string, Promise<string>>();

function bundle(path: string): Promise<string> {
  let built = bundles.get(path);
  if (!built) {
    built = build({
      entryPoints: [SCRIPTS[path]!],
      absWorkingDir: source('.'),
      conditions: [PACKAGE_SOURCE_CONDITION],
      bundle: true,
      format: 'esm',
      platform: 'browser',
      target: 'es2022',
      minify: true,
      write: false,
      logLevel: 'silent',
      legalComments: 'none',
    }).then((result) => result.outputFiles[0]!.text);
    // A failed build is retried on the next request rather than kept.
    built.catch(() => bundles.delete(path));
    bundles.set(path, built);
  }
  return built;
}

/** A page of the service (title and body are HTML): its main element's class, and its one script if any (none inline). */
export const page = (title: string, bodyClass: string, body: string, script?: string) => `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${title}</title><link rel="icon" href="data:,"><link rel="stylesheet" href="${STYLES_PATH}"></head>
<body><main class="${bodyClass}">
${body}
</main>${script ? `<script type="module" src="${script}"></script>` : ''}</body>
</html>`;

const CHECKOUT_PAGE = page(
  'Checkout',
  'checkout',
  `<h1>Pay <span id="amount">…</span></h1>
<p id="description"></p>
<form id="pay-form" class="card" hidden novalidate>
  <fieldset><legend>How would you like to pay?</legend><div id="methods"></div></fieldset>
  <button id="pay" type="submit">Pay</button>
</form>
<p id="alert" class="error" role="alert"></p>
<p id="status" role="status" aria-live="polite"></p>
<div id="result"></div>`,
  '/assets/checkout.js',
);

// The dashboard's shell (src/web/dashboard/main.ts draws the pages into #page); signed in by its session's
// cookie, never a key in the page or its address (docs/dashboard.md).
const DASHBOARD_PAGE = page(
  'Dashboard',
  'dashboard',
  `<header id="shell" class="shell-header" hidden>
  <nav aria-label="Dashboard"><ul id="nav-links" class="nav-links"></ul></nav>
  <div class="session row">
    <div class="field mode-field"><label for="mode">Mode</label><select id="mode" name="mode"><option value="TEST">Test</option><option value="LIVE">Live</option></select></div>
    <span id="user-email" class="user"></span>
    <button id="sign-out" type="button" class="secondary">Sign out</button>
  </div>
</header>
<p id="alert" class="error" role="alert" aria-live="assertive"></p>
<p id="notice" class="notice" role="status" aria-live="polite"></p>
<h1 id="page-title" tabindex="-1">Dashboard</h1>
<div id="page"></div>
<p id="live" class="visually-hidden" role="status" aria-live="polite"></p>
<dialog id="confirm" aria-labelledby="confirm-question">
  <form method="dialog">
    <p id="confirm-question"></p>
    <div class="row"><button type="submit" value="cancel" class="secondary">Cancel</button><button id="confirm-accept" type="submit" value="confirm">Confirm</button></div>
  </form>
</dialog>`,
  '/assets/dashboard.js',
);

// The sign-in form posts to /dashboard/login (src/api/routes/dashboard-sessions.ts); an invitation's link opens it
// with #invitation=…, and the form then sets the new member's password instead.
const LOGIN_PAGE = page(
  'Sign in: Payments dashboard',
  'dashboard',
  `<h1 id="login-heading">Sign in to the dashboard</h1>
<form id="login-form" class="card" novalidate>
  <div class="field" id="email-field"><label for="email">Email</label><input id="email" type="email" autocomplete="username" spellcheck="false" required></div>
  <div class="field"><label for="password">Password</label><input id="password" type="password" autocomplete="current-password" required minlength="12"></div>
  <button type="submit" id="login-submit">Sign in</button>
</form>
<p id="alert" class="error" role="alert"></p>`,
  '/assets/login.js',
);

function send(reply: ServerResponse, status: number, contentType: string, body: string, headers: Record<string, string> = {}): void {
  reply.writeHead(status, { 'content-type': contentType, 'content-length': Buffer.byteLength(body), 'x-content-type-options': 'nosniff', ...headers });
  reply.end(body);
}

/** Sends one of the service's HTML pages (these, the payment links', the redirect route's) under PAGE_POLICY, never cached. */
export function sendPage(reply: ServerResponse, status: number, html: string): void {
  send(reply, status, 'text/html; charset=utf-8', html, {
    'content-security-policy': PAGE_POLICY,
    'referrer-policy': 'no-referrer',
    'cache-control': 'no-store',
  });
}

export async function handleWebRoute(path: string, method: string, reply: ServerResponse): Promise<void> {
  if (method !== 'GET' && method !== 'HEAD') return sendJson(reply, 405, errorBody('METHOD_NOT_ALLOWED', 'Use GET here.'));
  if (path === '/checkout') return sendPage(reply, 200, CHECKOUT_PAGE);
  if (path === '/dashboard') return sendPage(reply, 200, DASHBOARD_PAGE);
  if (path === LOGIN_PAGE_ROUTE) return sendPage(reply, 200, LOGIN_PAGE);
  if (path === STYLES_PATH)
    return send(reply, 200, 'text/css; charset=utf-8', await readFile(source('../web/styles.css'), 'utf8'), { 'cache-control': 'no-cache' });
  // The SDK may be loaded by merchants' pages on other origins.
  const crossOrigin: Record<string, string> = path === '/sdk/payments.js' ? { 'access-control-allow-origin': '*' } : {};
  return send(reply, 200, 'text/javascript; charset=utf-8', await bundle(path), { 'cache-control': 'no-cache', ...crossOrigin });
}
