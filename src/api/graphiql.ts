// GraphiQL, the page where a developer pastes a secret key, from the installed @graphql-yoga/render-graphiql
// instead of Yoga's default (scripts from a CDN, without integrity). That package inlines its whole bundle
// in the page (script, styles, favicon, and the editor's workers started from blob: URLs), so the page
// loads nothing from any other host, and its Content-Security-Policy allows exactly the inline script it
// carries, by hash: no other script can run on it, and it may talk only to this origin.
import { createHash } from 'node:crypto';
import type { GraphiQLOptions } from 'graphql-yoga';

export interface GraphiQLPage {
  html: string;
  policy: string;
}

const sha256 = (text: string) => `'sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}'`;

/** The hashes of the page's inline `<script>` elements (their text, as the browser hashes it). */
function inlineScriptHashes(html: string): string[] {
  return [...html.matchAll(/<script>([\s\S]*?)<\/script>/g)].map((match) => sha256(match[1]!));
}

export async function renderGraphiQLPage(options: GraphiQLOptions): Promise<GraphiQLPage> {
  // Imported on first use: the bundle is 9 MB, and most processes never serve the page.
  const { renderGraphiQL } = await import('@graphql-yoga/render-graphiql');
  const html = renderGraphiQL(options);
  const policy = [
    "default-src 'none'",
    `script-src ${inlineScriptHashes(html).join(' ')}`,
    'worker-src blob:',
    // The editor adds style elements and attributes as it runs: styles cannot be held to hashes.
    "style-src 'unsafe-inline'",
    "img-src 'self' data:",
    "font-src 'self' data:",
    // Queries over HTTP and subscriptions over graphql-ws, to this origin only.
    "connect-src 'self'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
  return { html, policy };
}
