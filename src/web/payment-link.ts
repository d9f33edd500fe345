// A payment link's page (GET /payment-links/{id}): Pay runs one use of the link (this customer's payment) and
// opens the hosted checkout for it. The customer comes back here (?payment_id=…&status=…); the page ignores
// that status and reads the payment's own from the API, with the credentials this tab kept when it started
// the payment: nobody else's browser can read it, and a made-up id has no credentials here.
import { createPaymentsClient } from '@payments-orchestrator/js';
import { byId } from './dom.ts';

type Credentials = { clientSecret: string; publishableKey: string };

const storageKey = (paymentId: string) => `payment-link:${paymentId}`;

const form = byId<HTMLFormElement>('pay');
const status = byId('status');
const returned = byId('returned');

form.addEventListener('submit', async (event) => {
  event.preventDefault();
  const amount = new FormData(form).get('amount');
  status.textContent = 'Opening the checkout…';
  try {
    const answer = await fetch(`${location.pathname}/payments`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(amount ? { amount: Number(amount) } : {}),
    });
    const json = await answer.json();
    if (!answer.ok) throw new Error(json.error ? json.error.message : 'The payment could not be started.');
    const credentials: Credentials = { clientSecret: json.client_secret, publishableKey: json.publishable_key };
    sessionStorage.setItem(storageKey(json.payment_id), JSON.stringify(credentials));
    location.assign(`/checkout#${new URLSearchParams({ client_secret: credentials.clientSecret, publishable_key: credentials.publishableKey })}`);
  } catch (error) {
    status.textContent = (error as Error).message;
  }
});

/** Back from the checkout or 3D Secure: the payment's status as the service has it. */
async function showReturnedPayment(paymentId: string): Promise<void> {
  const kept = sessionStorage.getItem(storageKey(paymentId));
  if (!kept) {
    returned.classList.add('error');
    returned.textContent = 'This page can only show a payment started from it in this browser tab.';
    return;
  }
  const payments = createPaymentsClient(JSON.parse(kept) as Credentials);
  try {
    const payment = await payments.payment();
    returned.textContent = `Payment ${payment.id} is ${payment.status.toLowerCase().replace(/_/g, ' ')}.`;
  } catch (error) {
    returned.classList.add('error');
    returned.textContent = `The payment’s status could not be read: ${(error as Error).message}`;
  } finally {
    void payments.close();
  }
}

const paymentId = new URLSearchParams(location.search).get('payment_id');
if (paymentId) void showReturnedPayment(paymentId);
