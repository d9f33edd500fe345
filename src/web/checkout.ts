// The hosted checkout (GET /checkout#client_secret=…&publishable_key=…), built on the payments SDK: shows the
// amount and the eligible methods, checks a card before sending it, confirms, follows 3D Secure or a bank's
// redirect, shows the result and returns the customer to the payment's return_url with payment_id and status.
// The credentials travel in the URL's fragment, which browsers never send to servers or in Referer headers.
import { formatMinor } from '../kernel/money.ts';
import { returnLocation } from '../kernel/return-url.ts';
import { cardProblems } from '../kernel/cards.ts';
import { createPaymentsClient, type PaymentMethods, type PaymentsClient, type SdkPayment } from '@payments-orchestrator/js';
import { element, field, byId, showError } from './dom.ts';

const CREDENTIALS_KEY = 'checkout:credentials';
/** How long the final status stays on screen before the customer is sent back to the merchant. */
const RETURN_DELAY_MS = 1500;

type Credentials = { clientSecret: string; publishableKey: string };
type MethodType = PaymentMethods['methods'][number]['type'];

/** From the fragment on arrival (then removed from the address bar), or from this tab's storage on a reload. */
function credentials(): Credentials | null {
  const fragment = new URLSearchParams(location.hash.slice(1));
  const clientSecret = fragment.get('client_secret');
  const publishableKey = fragment.get('publishable_key');
  if (clientSecret && publishableKey) {
    sessionStorage.setItem(CREDENTIALS_KEY, JSON.stringify({ clientSecret, publishableKey }));
    history.replaceState(null, '', location.pathname);
    return { clientSecret, publishableKey };
  }
  const kept = sessionStorage.getItem(CREDENTIALS_KEY);
  return kept ? (JSON.parse(kept) as Credentials) : null;
}

const STATUS_TEXT: Record<string, string> = {
  SUCCEEDED: 'Payment succeeded.',
  REQUIRES_CAPTURE: 'Payment authorized.',
  PARTIALLY_AUTHORIZED: 'Payment partly authorized.',
  PROCESSING: 'Your payment is processing. This page updates when it is decided.',
  FAILED: 'The payment failed.',
  CANCELLED: 'The payment was cancelled.',
  EXPIRED: 'This payment expired.',
};
/** Where the customer has nothing more to do here. */
const DECIDED = new Set([
  'SUCCEEDED',
  'REQUIRES_CAPTURE',
  'PARTIALLY_AUTHORIZED',
  'FAILED',
  'CANCELLED',
  'EXPIRED',
  'PARTIALLY_CAPTURED',
  'CANCELLED_POST_CAPTURE',
]);

const status = byId('status');
const alert = byId('alert');
const form = byId<HTMLFormElement>('pay-form');
const payButton = byId<HTMLButtonElement>('pay');

function say(text: string): void {
  status.textContent = text;
}

/** Follows the payment live; a stream refused or ended by an error is said, not left as a page that never updates. */
function followLive(payments: PaymentsClient, listener: (payment: SdkPayment) => void): () => void {
  return payments.onUpdate(listener, (error) => showError(alert, null, `Live updates stopped: ${error.message} Reload this page to see the payment’s status.`));
}

function finish(payments: PaymentsClient, payment: SdkPayment): void {
  say(STATUS_TEXT[payment.status] ?? `Payment ${payment.status.toLowerCase()}.`);
  form.hidden = true;
  document.body.dataset['status'] = payment.status.toLowerCase();
  if (payment.status === 'PROCESSING') {
    // Methods that settle later: wait for the processor's answer, live.
    const stop = followLive(payments, (updated) => {
      if (updated.status === 'PROCESSING') return;
      stop();
      finish(payments, updated);
    });
    return;
  }
  if (payment.returnUrl) {
    const back = returnLocation(payment.returnUrl, payment.id, payment.status);
    const link = element('a', { href: back, id: 'return-link' }, 'Return to the merchant');
    byId('result').replaceChildren(link);
    setTimeout(() => location.assign(back), RETURN_DELAY_MS);
  }
}

/**
 * One radio per way to pay, each with the fields it needs; only the chosen one's fields are shown and sent,
 * and the Pay button says what the chosen one costs (the amount plus any surcharge for it).
 */
function renderMethods(methods: PaymentMethods): void {
  const options = byId('methods');
  const totals = new Map(methods.methods.map((method) => [method.type, formatMinor(method.totalAmount, methods.currency)]));
  const add = (value: string, type: MethodType, label: string, fields: HTMLElement[]) => {
    const id = `method-${value}`;
    const radio = element('input', { type: 'radio', name: 'method', value, id, 'data-total': totals.get(type) ?? '' });
    const panel = element('div', { class: 'method-fields', id: `${id}-fields`, hidden: '' }, ...fields);
    options.append(element('div', { class: 'method' }, radio, element('label', { for: id }, label), panel));
  };
  for (const saved of methods.savedPaymentMethods) {
    const expiry = saved.expiryMonth ? ` (expires ${String(saved.expiryMonth).padStart(2, '0')}/${saved.expiryYear})` : '';
    add(`saved:${saved.id}`, 'CARD', `${saved.brand ?? 'Card'} ending ${saved.last4 ?? '····'}${expiry}`, [
      field('CVC', 'saved-cvc', { autocomplete: 'cc-csc', inputmode: 'numeric', maxlength: '4' }),
    ]);
  }
  const types = new Set(methods.methods.map((method) => method.type));
  if (types.has('CARD')) {
    add('card', 'CARD', 'Card', [
      field('Card number', 'card-number', { autocomplete: 'cc-number', inputmode: 'numeric', maxlength: '23' }),
      element(
        'div',
        { class: 'row' },
        field('Expiry month (MM)', 'card-expiry-month', { autocomplete: 'cc-exp-month', inputmode: 'numeric', maxlength: '2' }),
        field('Expiry year (YYYY)', 'card-expiry-year', { autocomplete: 'cc-exp-year', inputmode: 'numeric', maxlength: '4' }),
        field('CVC', 'card-cvc', { autocomplete: 'cc-csc', inputmode: 'numeric', maxlength: '4' }),
      ),
      field('Name on card', 'card-holder', { autocomplete: 'cc-name' }),
    ]);
  }
  if (types.has('BANK_REDIRECT'))
    add('bank-redirect', 'BANK_REDIRECT', 'Pay from your bank (you are sent to your bank)', [field('Bank', 'bank', { value: 'sandbox_bank' })]);
  if (types.has('BANK_DEBIT')) {
    add('bank-debit', 'BANK_DEBIT', 'Direct debit (settles in a few days)', [
      field('IBAN', 'iban', { autocomplete: 'off' }),
      field('Account holder', 'account-holder', { autocomplete: 'name' }),
    ]);
  }
  if (types.has('BANK_TRANSFER')) add('bank-transfer', 'BANK_TRANSFER', 'Bank transfer (you get the details to pay to)', []);
  if (types.has('CRYPTO')) add('crypto', 'CRYPTO', 'Crypto', [field('Network', 'network', { value: 'sandbox_chain' })]);
  options.addEventListener('change', () => {
    for (const method of options.querySelectorAll<HTMLElement>('.method')) {
      const radio = method.querySelector<HTMLInputElement>('input[type=radio]')!;
      method.querySelector<HTMLElement>('.method-fields')!.hidden = !radio.checked;
      if (radio.checked) payButton.textContent = `Pay ${radio.dataset['total']}`;
    }
  });
  const first = options.querySelector<HTMLInputElement>('input[type=radio]');
  if (first) {
    first.checked = true;
    first.dispatchEvent(new Event('change', { bubbles: true }));
  }
}

const value = (id: string) => byId<HTMLInputElement>(id).value.trim();

/** An input at fault (its id) and the rule it breaks. */
type Problem = { field: string; message: string };
const CARD_FIELD_IDS: Record<string, string> = {
  'card.number': 'card-number',
  'card.expiryMonth': 'card-expiry-month',
  'card.expiryYear': 'card-expiry-year',
  'card.cvc': 'card-cvc',
  'card.holderName': 'card-holder',
};

/** The confirm input for the chosen method, or every field at fault with its rule (nothing is sent then). */
function confirmInputOf(method: string): { input: Parameters<PaymentsClient['confirm']>[0] } | { problems: Problem[] } {
  if (method.startsWith('saved:')) {
    const cardCvc = value('saved-cvc');
    if (!/^\d{3,4}$/.test(cardCvc)) return { problems: [{ field: 'saved-cvc', message: 'The CVC is 3 or 4 digits.' }] };
    return { input: { paymentMethodId: method.slice('saved:'.length), cardCvc } };
  }
  switch (method) {
    case 'card': {
      const card = {
        number: value('card-number'),
        expiryMonth: Number(value('card-expiry-month')),
        expiryYear: Number(value('card-expiry-year')),
        cvc: value('card-cvc'),
        holderName: value('card-holder') || null,
      };
      const problems = cardProblems(card, new Date()).map((problem) => {
        const id = CARD_FIELD_IDS[problem.field] ?? 'card-number';
        return { field: id, message: `${byId(`${id}-label`).textContent}: ${problem.message}.` };
      });
      return problems.length ? { problems } : { input: { paymentMethodData: { card } } };
    }
    case 'bank-redirect':
      return { input: { paymentMethodData: { bankRedirect: { bank: value('bank') } } } };
    case 'bank-debit': {
      const problems = [
        ...(value('iban') ? [] : [{ field: 'iban', message: 'IBAN: required.' }]),
        ...(value('account-holder') ? [] : [{ field: 'account-holder', message: 'Account holder: required.' }]),
      ];
      if (problems.length) return { problems };
      return { input: { paymentMethodData: { bankDebit: { iban: value('iban'), accountHolderName: value('account-holder') } } } };
    }
    case 'bank-transfer':
      return { input: { paymentMethodData: { bankTransfer: { type: 'sepa' } } } };
    default:
      return { input: { paymentMethodData: { crypto: { network: value('network') } } } };
  }
}

function showInstructions(payment: SdkPayment): void {
  const instructions = (payment.nextAction?.instructions ?? {}) as Record<string, unknown>;
  const list = element('dl', { id: 'instructions' });
  for (const [name, text] of Object.entries(instructions)) list.append(element('dt', {}, name.replace(/_/g, ' ')), element('dd', {}, String(text)));
  byId('result').replaceChildren(list);
  say('Pay with these details; this page updates when the payment arrives.');
  form.hidden = true;
}

async function pay(payments: PaymentsClient): Promise<void> {
  alert.textContent = '';
  const method = form.querySelector<HTMLInputElement>('input[name=method]:checked')?.value;
  if (!method) return showError(alert, null, 'Choose a way to pay.');
  const built = confirmInputOf(method);
  if ('problems' in built) {
    return showError(
      alert,
      built.problems.map((problem) => byId<HTMLInputElement>(problem.field)),
      built.problems.map((problem) => problem.message).join(' '),
    );
  }
  payButton.disabled = true;
  say('Processing…');
  try {
    const payment = await payments.confirm(built.input);
    if (payments.handleNextAction(payment)) return say('Redirecting you to authenticate the payment…');
    if (payment.nextAction?.type === 'DISPLAY_INSTRUCTIONS') {
      showInstructions(payment);
      followLive(payments, (updated) => DECIDED.has(updated.status) && finish(payments, updated));
      return;
    }
    finish(payments, payment);
  } catch (error) {
    // A decline leaves the payment open: the customer may try another card (the API's message says why).
    const message = (error as Error).message;
    say('');
    const cardNumber = document.getElementById('card-number') as HTMLInputElement | null;
    if (cardNumber && method === 'card') {
      cardNumber.value = '';
      byId<HTMLInputElement>('card-cvc').value = '';
    }
    showError(alert, method === 'card' ? cardNumber : null, message);
  } finally {
    payButton.disabled = false;
  }
}

async function start(): Promise<void> {
  const given = credentials();
  if (!given) {
    say('This checkout link is incomplete: open it from the merchant’s site again.');
    form.hidden = true;
    return;
  }
  const payments = createPaymentsClient(given);
  try {
    const [payment, methods] = await Promise.all([payments.payment(), payments.paymentMethods()]);
    byId('amount').textContent = formatMinor(payment.amount, payment.currency);
    if (payment.description) byId('description').textContent = payment.description;
    // A failed payment is not the end here: it may be confirmed again (a new attempt) with another card or
    // method, so a reload after a decline offers the methods again; the service refuses if it allows no more.
    const triedAgain = payment.status === 'FAILED';
    if (!triedAgain && (DECIDED.has(payment.status) || payment.status === 'PROCESSING')) return finish(payments, payment);
    renderMethods(methods);
    form.hidden = false;
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      void pay(payments);
    });
    if (triedAgain)
      showError(
        alert,
        null,
        `The last attempt failed${payment.errorMessage ? `: ${payment.errorMessage.replace(/\.$/, '')}` : ''}. You can pay with another card or method.`,
      );
  } catch (error) {
    say('');
    showError(alert, null, (error as Error).message);
  }
}

void start();
