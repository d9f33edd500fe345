// The dashboard in Chromium: signing in through its login page, and the checks every page passes at a
// phone's and a desktop's width (docs/dashboard.md): no sideways scrolling of the page, no axe-core
// WCAG 2 A/AA violation, and every control reached by the Tab key.
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, expect } from 'vitest';
import type { TeamRole } from '../gql/graphql.ts';
import { eventually, launchBrowser } from './browser.ts';
import type { Execute } from './graphql-client.ts';
import { startStack, type Stack } from './stack.ts';
import { member, PASSWORD } from './team.ts';
import { shopWithReceiver, type Shop } from './webhooks.ts';

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

/**
 * A dashboard user of `shop`'s merchant with `role`: invited with its secret key and the invitation accepted
 * (test/support/team.ts's member, which asks the key for one owner only). Sign in with signIn.
 */
export async function teamUser(baseUrl: string, shop: { secret: Execute }, role: TeamRole): Promise<{ email: string; password: string }> {
  const session = await member(baseUrl, shop.secret, role);
  return { email: session.body.user.email, password: PASSWORD };
}

export interface DashboardShop {
  stack: Stack;
  browser: Browser;
  shop: Shop;
}

/**
 * A browser test file's stack, Chromium and a shop whose webhooks reach a receiver, started before its tests and
 * closed after them. Its fields are set once the file's first beforeAll ran.
 */
export function dashboardShop(): DashboardShop {
  const fixture = {} as DashboardShop;
  beforeAll(async () => {
    [fixture.stack, fixture.browser] = await Promise.all([startStack(), launchBrowser()]);
    fixture.shop = await shopWithReceiver(fixture.stack);
  });
  afterAll(async () => {
    await fixture.browser?.close();
    await fixture.stack?.close();
    await fixture.shop?.receiver.close();
  });
  return fixture;
}
