// Debian's Chromium driven by playwright-core (which downloads no browser): headless flags for a
// container without a GPU (docs/development.md: the browser tests). Screenshots go to
// artifacts/screenshots/ (not checked in; docs/screenshots/ come from a run).
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { chromium, type Browser, type Page } from 'playwright-core';
import { expect } from 'vitest';

export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const SCREENSHOTS = new URL('../../artifacts/screenshots/', import.meta.url);

export async function launchBrowser(): Promise<Browser> {
  if (!existsSync(CHROMIUM_PATH)) {
    throw new Error(
      `No Chromium at ${CHROMIUM_PATH}: install it with \`apt-get install -y chromium\` (npm test's pretest does, as root), or set CHROMIUM_PATH.`,
    );
  }
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

/** A phone-sized page (the checkout must read well at 390 px) or a desktop one; console errors fail the test. */
export async function openPage(browser: Browser, size: 'phone' | 'desktop'): Promise<{ page: Page; consoleErrors: string[] }> {
  const viewport = size === 'phone' ? { width: 390, height: 844 } : { width: 1280, height: 900 };
  const context = await browser.newContext({ viewport });
  const page = await context.newPage();
  const consoleErrors: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error') consoleErrors.push(message.text());
  });
  page.on('pageerror', (error) => consoleErrors.push(error.message));
  return { page, consoleErrors };
}

export async function screenshot(page: Page, name: string): Promise<void> {
  await mkdir(SCREENSHOTS, { recursive: true });
  await page.screenshot({ path: new URL(`${name}.png`, SCREENSHOTS).pathname, fullPage: true });
}

/** The merchant's site the customer returns to: a page that shows what it got. */
export async function startShopSite(): Promise<{ url: string; close: () => Promise<void> }> {
  const server: Server = createServer((request, reply) => {
    const query = new URL(request.url ?? '/', 'http://shop.invalid').searchParams;
    reply.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    reply.end(
      `<!doctype html><title>Shop</title><h1>Back at the shop</h1><p id="result">${query.get('status') === 'succeeded' ? 'Thank you for your order.' : 'The payment did not go through.'}</p>`,
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/return`, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

/** expect.poll with a page's patience: pages load scripts, open sockets and wait for the processor. */
export const eventually = <T>(read: () => T | Promise<T>, timeout = 15_000) => expect.poll(read, { timeout, interval: 50 });
