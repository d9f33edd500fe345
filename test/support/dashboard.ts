// The dashboard in Chromium: signing in through its login page, and the checks every page passes at a
// phone's and a desktop's width (docs/dashboard.md): no sideways scrolling of the page, no axe-core
// WCAG 2 A/AA violation, and every control reached by the Tab key.
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import type { Page } from 'playwright-core';
import { expect } from 'vitest';
import { InviteTeamMemberDocument } from '../gql/graphql.ts';
import { eventually } from './browser.ts';
import { dataOf, type Execute } from './graphql-client.ts';

const AXE_SOURCE = readFile(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/** Signs in through GET /dashboard/login, and waits for the dashboard's first page to be drawn. */
export async function signIn(page: Page, baseUrl: string, email: string, password: string): Promise<void> {
  await page.goto(`${baseUrl}/dashboard/login`);
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL(/\/dashboard(#.*)?$/);
  await dashboardReady(page);
}

/** Waits until the shell has drawn the page of the fragment. */
export const dashboardReady = (page: Page) => eventually(() => page.evaluate(() => document.body.dataset['ready'])).toBe('true');

/** Goes to a page of the dashboard (`payments?status=…`) and waits until it is drawn. */
export async function openDashboardPage(page: Page, path: string): Promise<void> {
  await page.evaluate((hash) => (location.hash = hash), `#/${path}`);
  await eventually(() => page.evaluate(() => location.hash)).toBe(`#/${path}`);
  await dashboardReady(page);
}

/**
 * axe-core's WCAG 2 A and AA rules, none violated. Evaluated through the DevTools protocol: the page's
 * Content-Security-Policy refuses an injected script tag.
 */
export async function expectAccessible(page: Page): Promise<void> {
  if (!(await page.evaluate(() => 'axe' in window))) await page.evaluate(await AXE_SOURCE);
  const violations = await page.evaluate(async () => {
    const axe = (window as unknown as { axe: { run(options: unknown): Promise<{ violations: { id: string; nodes: { target: unknown }[] }[] }> } }).axe;
    const result = await axe.run({ runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa'] } });
    return result.violations.map((violation) => ({ id: violation.id, targets: violation.nodes.map((node) => JSON.stringify(node.target)) }));
  });
  expect(violations).toEqual([]);
}

/** The page never scrolls sideways: wide tables scroll inside their own container. */
export async function expectNoHorizontalOverflow(page: Page): Promise<void> {
  const { scrollWidth, innerWidth } = await page.evaluate(() => ({ scrollWidth: document.scrollingElement!.scrollWidth, innerWidth: window.innerWidth }));
  expect(scrollWidth).toBeLessThanOrEqual(innerWidth);
}

/** Every visible, enabled button, link, field and scrolling region of the page is reached by pressing Tab. */
export async function expectTabReachesEveryControl(page: Page): Promise<void> {
  const controls = await page.evaluate(() => {
    const found = [...document.querySelectorAll<HTMLElement>('button, a[href], input, select, textarea, [tabindex="0"]')].filter(
      (control) => control.checkVisibility() && !(control as HTMLButtonElement).disabled && !control.closest('dialog:not([open])'),
    );
    found.forEach((control, index) => (control.dataset['tabCheck'] = String(index)));
    return found.length;
  });
  expect(controls).toBeGreaterThan(0);
  const reached = new Set<string>();
  // Twice round: the walk starts wherever the focus is (a page's heading), and wraps past the browser's own stops.
  for (let press = 0; press < 2 * controls + 5; press++) {
    await page.keyboard.press('Tab');
    const mark = await page.evaluate(() => (document.activeElement as HTMLElement | null)?.dataset['tabCheck']);
    if (mark !== undefined) reached.add(mark);
  }
  const missed = await page.evaluate(
    (seen) =>
      [...document.querySelectorAll<HTMLElement>('[data-tab-check]')]
        .filter((control) => !seen.includes(control.dataset['tabCheck']!))
        .map((control) => control.outerHTML.slice(0, 120)),
    [...reached],
  );
  expect(missed).toEqual([]);
}

/** All three checks, at the page's current width. */
export async function expectUsable(page: Page): Promise<void> {
  await expectNoHorizontalOverflow(page);
  await expectAccessible(page);
  await expectTabReachesEveryControl(page);
}

export type TeamRole = 'OWNER' | 'ADMIN' | 'DEVELOPER' | 'VIEWER';

let users = 0;

/** Each shop's owner: a key invites only a merchant's first owner (docs/dashboard.md, "Roles"), so later asks get the same one. */
const owners = new WeakMap<object, Promise<{ email: string; password: string }>>();

/**
 * A dashboard user of `shop`'s merchant with `role`: invited with the secret key (inviteTeamMember), the
 * invitation accepted with a password (POST /dashboard/invitations/accept). Sign in with signIn.
 */
export function teamUser(baseUrl: string, shop: { secret: Execute }, role: TeamRole): Promise<{ email: string; password: string }> {
  if (role !== 'OWNER') return invitedUser(baseUrl, shop, role);
  const owner = owners.get(shop) ?? invitedUser(baseUrl, shop, role);
  owners.set(shop, owner);
  return owner;
}

async function invitedUser(baseUrl: string, shop: { secret: Execute }, role: TeamRole): Promise<{ email: string; password: string }> {
  const email = `${role.toLowerCase()}-${process.pid}-${++users}-${Date.now()}@team.example`;
  const password = 'correct horse battery staple';
  const { acceptUrl } = dataOf(await shop.secret(InviteTeamMemberDocument, { input: { email, role } })).inviteTeamMember;
  const token = new URLSearchParams(new URL(acceptUrl).hash.slice(1)).get('invitation');
  const accepted = await fetch(`${baseUrl}/dashboard/invitations/accept`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ token, password }),
  });
  expect(accepted.status).toBe(200);
  return { email, password };
}
