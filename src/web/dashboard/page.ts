// What every page of the dashboard is (docs/dashboard.md): a route under the `#/` fragment and what it draws.
// The shell (dashboard/main.ts) owns the session, the navigation, the alert region and the confirmation dialog;
// a page draws into the element it is given and returns what stops its work (subscriptions, timers) when the
// reader leaves it.
import type { Transport } from '@payments-orchestrator/client-core';

/** The signed-in user, as GET /dashboard/session answers. */
export interface DashboardUser {
  id: string;
  email: string;
  role: 'OWNER' | 'ADMIN' | 'DEVELOPER' | 'VIEWER';
  merchantId: string;
}

export interface DashboardContext {
  /** GraphQL over the session (its cookie and CSRF token). */
  api: Transport;
  user: DashboardUser;
  mode: 'TEST' | 'LIVE';
  /** Goes to another page, e.g. `payments/pay_123`. */
  navigate(path: string): void;
  /** Asks before an action that moves money or changes settings; resolves true when confirmed. */
  confirm(question: string, confirmLabel: string): Promise<boolean>;
  /** Shows an API error's own message (or any failure) in the announced alert region. */
  showFailure(error: unknown): void;
  /** Shows a success note in the same region. */
  showNotice(message: string): void;
}

export interface DashboardPage {
  /** The fragment path it answers, e.g. /^payments\/(?<paymentId>pay_\w+)$/; named groups become `params`. */
  route: RegExp;
  /** Its heading and document title. */
  title: string;
  /** In the navigation under this label; pages reached from another page (a payment's) have none. */
  navLabel?: string;
  /** Draws the page; the returned function, if any, stops what it started. */
  render(root: HTMLElement, params: Record<string, string>, context: DashboardContext): void | (() => void) | Promise<void | (() => void)>;
}
