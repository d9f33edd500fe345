// The HTML the customer's browser sees at the sandbox: the 3D Secure challenge, the bank's approval page and
// the instructions of a transfer or crypto payment. Every interpolated value goes through escapeHtml, because
// the holder name (and anything else a caller sent) is attacker-controlled. The pages have no scripts; their
// forms' relative actions resolve against /<page>/<id>, so they work behind any public URL prefix.
import type { CardBrand } from './cards.ts';
import type { Instructions, Payment } from './resources.ts';

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

type Row = readonly [term: string, value: string];

/** A definition list of `[term, value]` rows, both escaped. */
function details(rows: readonly Row[]): string {
  return `<dl>\n${rows.map(([term, value]) => `<dt>${escapeHtml(term)}</dt><dd>${escapeHtml(value)}</dd>`).join('\n')}\n</dl>`;
}

/** A button that posts to `<payment id>/<action>` (no body: the action is the whole request). */
function actionButton(payment: Payment, action: string, label: string): string {
  return `<form method="post" action="${escapeHtml(payment.id)}/${action}"><button type="submit">${escapeHtml(label)}</button></form>`;
}

const amountRow = (payment: Payment): Row => ['Amount', formatAmount(payment.amount, payment.currency)];

export function challengePage(payment: Payment): string {
  const { card } = payment;
  const rows = [amountRow(payment)];
  if (card !== null) rows.push(['Card', `${BRAND_NAMES[card.brand]} ending in ${card.last4}`]);
  if (card?.holderName) rows.push(['Cardholder', card.holderName]);
  return page(
    'Sandbox 3D Secure authentication',
    `<h1>Authenticate this payment</h1>
<p>This is the sandbox card issuer's 3D Secure page. Choose the result of the authentication.</p>
${details(rows)}
${actionButton(payment, 'complete', 'Complete authentication')}
${actionButton(payment, 'fail', 'Fail authentication')}`,
  );
}

export function bankPage(payment: Payment): string {
  return page(
    'Sandbox Bank: authorize a payment',
    `<h1>Sandbox Bank</h1>
<p>A merchant asks you to authorize this payment from your account. Choose the result of the authorization.</p>
${details([amountRow(payment)])}
${actionButton(payment, 'authorize', 'Authorize')}
${actionButton(payment, 'fail', 'Fail')}`,
  );
}

export function instructionsPage(payment: Payment, instructions: Instructions): string {
  const destination: Row = 'iban' in instructions ? ['IBAN', instructions.iban] : ['Address', instructions.address];
  const what = 'iban' in instructions ? 'a bank transfer' : 'a crypto payment on sandbox_chain';
  return page(
    'Sandbox payment instructions',
    `<h1>Complete your payment</h1>
<p>Send ${escapeHtml(what)} with these details. The payment completes when the funds arrive.</p>
${details([amountRow(payment), destination, ['Reference', instructions.reference]])}
${actionButton(payment, 'sent', 'I have sent it')}`,
  );
}

/** The answer of a customer page whose payment no longer waits for the customer; `awaiting` names what it waited for. */
export function notAwaitingPage(payment: Payment, awaiting: string): string {
  return page(
    `Payment not awaiting ${awaiting}`,
    `<h1>Nothing to do</h1>
<p>This payment is no longer awaiting ${escapeHtml(awaiting)} (its status is ${escapeHtml(payment.status)}). You can close this page.</p>`,
  );
}

export function notFoundPage(): string {
  return page('Payment not found', '<h1>Payment not found</h1>\n<p>There is no sandbox payment at this address.</p>');
}
