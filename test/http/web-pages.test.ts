// The web pages and scripts over plain HTTP: what a browser is told about them (types, CSP, caching, CORS).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApi, type TestApi } from '../support/api.ts';

let api: TestApi;
beforeAll(async () => {
  api = await startTestApi();
});
afterAll(() => api?.close());

describe('the web pages', () => {
  it.each(['/checkout', '/dashboard'])('%s is HTML that runs only this origin’s scripts, is never framed and never cached', async (path) => {
    const page = await fetch(`${api.url}${path}`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    const policy = page.headers.get('content-security-policy')!;
    for (const directive of ["script-src 'self'", "frame-ancestors 'none'", "connect-src 'self'", "default-src 'none'"]) expect(policy).toContain(directive);
    expect(page.headers.get('cache-control')).toBe('no-store');
    expect(page.headers.get('referrer-policy')).toBe('no-referrer');
    const html = await page.text();
    expect(html).toContain('<meta name="viewport" content="width=device-width, initial-scale=1">');
    expect(html).not.toMatch(/<script>/); // no inline script: the policy would refuse it
  });

  it('serves the SDK as one ES module any origin may load, and the pages’ scripts and styles', async () => {
    const sdk = await fetch(`${api.url}/sdk/payments.js`);
    expect(sdk.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(sdk.headers.get('access-control-allow-origin')).toBe('*');
    const source = await sdk.text();
    expect(source).toMatch(/export\{[^}]*createPaymentsClient/);
    expect(source).not.toMatch(/node:|process\.env/); // nothing of the server in the browser bundle
    for (const path of ['/assets/checkout.js', '/assets/dashboard.js', '/assets/payment-link.js']) {
      const script = await fetch(`${api.url}${path}`);
      expect(script.status).toBe(200);
      expect(script.headers.get('access-control-allow-origin')).toBeNull();
      expect((await script.text()).length).toBeGreaterThan(1000);
    }
    expect((await fetch(`${api.url}/assets/styles.css`)).headers.get('content-type')).toBe('text/css; charset=utf-8');
  });

  it('answers 405 to anything but GET and HEAD', async () => {
    const posted = await fetch(`${api.url}/checkout`, { method: 'POST', body: 'x' });
    expect(posted.status).toBe(405);
    expect((await posted.json()).error.code).toBe('METHOD_NOT_ALLOWED');
    expect((await fetch(`${api.url}/dashboard`, { method: 'HEAD' })).status).toBe(200);
  });
});
