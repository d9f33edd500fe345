// The HTML the customer's browser sees during a sandbox 3D Secure challenge. Every interpolated value goes
// through escapeHtml, because the holder name (and anything else a caller sent) is attacker-controlled.
import type { CardBrand } from './cards.ts';
import type { Payment } from './store.ts';

const BRAND_NAMES: Record<CardBrand, string> = { visa: 'Visa', mastercard: 'Mastercard', amex: 'American Express', unknown: 'Card' };

const HTML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (character) => HTML_ESCAPES[character] ?? character);
}

/** `amount` in minor units shown in its currency ("$12.34", "¥1,234"), using the currency's own decimals. */
export function formatAmount(amount: number, currency: string): string {
  const format = new Intl.NumberFormat('en-US', { style: 'currency', currency: currency.toUpperCase() });
  const decimals = format.resolvedOptions().maximumFractionDigits ?? 2;
  return format.format(amount / 10 ** decimals);
}

function page(title: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<style>
body { font-family: system-ui, sans-serif; max-width: 28rem; margin: 3rem auto; padding: 0 1rem; color: #1a1a1a; }
dl { display: grid; grid-template-columns: auto 1fr; gap: 0.25rem 1rem; }
dt { font-weight: 600; }
dd { margin: 0; }
form { display: inline-block; margin: 1rem 1rem 0 0; }
button { font: inherit; padding: 0.5rem 1rem; cursor: pointer; }
</style>
</head>
<body>
<main>
${body}
</main>
</body>
</html>
`;
}

export function challengePage(payment: Payment): string {
  // Relative form actions resolve against /challenge/<id>, so the page works behind any public URL prefix.
  const id = escapeHtml(payment.id);
  const holder = payment.card.holderName === null ? '' : `\n<dt>Cardholder</dt><dd>${escapeHtml(payment.card.holderName)}</dd>`;
  return page(
    'Sandbox 3D Secure authentication',
    `<h1>Authenticate this payment</h1>
<p>This is the sandbox card issuer's 3D Secure page. Choose the result of the authentication.</p>
<dl>
<dt>Amount</dt><dd>${escapeHtml(formatAmount(payment.amount, payment.currency))}</dd>
<dt>Card</dt><dd>${escapeHtml(BRAND_NAMES[payment.card.brand])} ending in ${escapeHtml(payment.card.last4)}</dd>${holder}
</dl>
<form method="post" action="${id}/complete"><button type="submit">Complete authentication</button></form>
<form method="post" action="${id}/fail"><button type="submit">Fail authentication</button></form>`,
  );
}

export function notAwaitingAuthenticationPage(payment: Payment): string {
  return page(
    'Payment not awaiting authentication',
    `<h1>Nothing to authenticate</h1>
<p>This payment is no longer awaiting authentication (its status is ${escapeHtml(payment.status)}). You can close this page.</p>`,
  );
}

export function notFoundPage(): string {
  return page('Payment not found', '<h1>Payment not found</h1>\n<p>There is no sandbox payment at this address.</p>');
}
