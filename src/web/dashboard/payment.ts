// The Payment page (`#/payments/pay_…`, docs/dashboard.md): a payment's amounts, routing decision, attempts,
// status history, refunds, webhook deliveries (Retry now) and ledger entries, and what may be done to it —
// refund, capture, cancel, sync — each confirmed first, the API's refusal shown in its own words, the page
// redrawn after success. Roles that may not move money do not see those buttons (the API refuses them anyway).
import { formatMinor, parseMajor } from '../../kernel/money.ts';
import { element } from '../dom.ts';
import {
  DashboardCancelDocument,
  DashboardCaptureDocument,
  DashboardLedgerDocument,
  DashboardObjectEventsDocument,
  DashboardPaymentDetailDocument,
  DashboardRefundDocument,
  DashboardSyncDocument,
  type DashboardPaymentDetailQuery,
} from '../gql/graphql.ts';
import { DELIVERY_HEADINGS, deliveryRow } from './deliveries.ts';
import { LEDGER_HEADINGS, ledgerRow } from './ledger-view.ts';
import type { DashboardContext, DashboardPage, DashboardUser } from './page.ts';
import { ALGORITHM_NAMES, pagedTable, scrollRegion, statusBadge, table, when } from './shared-view.ts';

type Payment = DashboardPaymentDetailQuery['payment'];

/** The roles that may move money: refund, capture, cancel, sync (docs/dashboard.md, the roles table). */
const MOVES_MONEY: readonly DashboardUser['role'][] = ['OWNER', 'ADMIN'];

const REFUNDABLE = new Set(['SUCCEEDED', 'PARTIALLY_CAPTURED']);
const CAPTURABLE = new Set(['REQUIRES_CAPTURE', 'PARTIALLY_AUTHORIZED']);
const CANCELLABLE = new Set(['REQUIRES_PAYMENT_METHOD', 'REQUIRES_CONFIRMATION', 'REQUIRES_CUSTOMER_ACTION', 'REQUIRES_CAPTURE', 'PARTIALLY_AUTHORIZED']);

const labelled = (label: string, control: HTMLInputElement) => element('div', { class: 'field' }, element('label', { for: control.id }, label), control);

/**
 * Runs a money move once confirmed: its button disabled meanwhile (no double submission), a notice and the
 * page redrawn after success, the API's own message (INVALID_STATE…) in the alert region when refused.
 */
async function move(
  context: DashboardContext,
  button: HTMLButtonElement,
  question: string,
  confirmLabel: string,
  done: string,
  run: () => Promise<unknown>,
  redraw: () => void,
) {
  if (!(await context.confirm(question, confirmLabel))) return;
  button.disabled = true;
  try {
    await run();
    context.showNotice(done);
    redraw();
  } catch (error) {
    context.showFailure(error);
    button.disabled = false;
  }
}

/** A minor amount from an optional major-units field; undefined (all of it) when empty, null when not an amount. */
function amountOf(input: HTMLInputElement, currency: string): number | undefined | null {
  const text = input.value.trim();
  if (!text) return undefined;
  const minor = parseMajor(text, currency);
  return minor === null || minor === 0 ? null : minor;
}

function refuse(context: DashboardContext, input: HTMLInputElement, message: string): void {
  input.setAttribute('aria-invalid', 'true');
  input.addEventListener('input', () => input.removeAttribute('aria-invalid'), { once: true });
  context.showFailure(new Error(message));
  input.focus();
}

function refundForm(context: DashboardContext, payment: Payment, redraw: () => void): HTMLFormElement {
  const refundable = payment.amountReceived - payment.amountRefunded;
  const amount = element('input', {
    id: 'refund-amount',
    name: 'amount',
    inputmode: 'decimal',
    autocomplete: 'off',
    placeholder: formatMinor(refundable, payment.currency),
  });
  const reason = element('input', { id: 'refund-reason', name: 'reason', maxlength: '255', autocomplete: 'off' });
  const submit = element('button', { type: 'submit' }, 'Refund');
  const form = element(
    'form',
    { class: 'action-form', 'aria-label': 'Refund', novalidate: '' },
    element(
      'div',
      { class: 'row' },
      labelled(`Amount to refund (empty: all ${formatMinor(refundable, payment.currency)})`, amount),
      labelled('Reason (optional)', reason),
    ),
    submit,
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const minor = amountOf(amount, payment.currency);
    if (minor === null) return refuse(context, amount, `Amount to refund: a positive amount in ${payment.currency}, such as 12.50.`);
    const shown = formatMinor(minor ?? refundable, payment.currency);
    void move(
      context,
      submit,
      `Refund ${shown} of payment ${payment.id} to the customer?`,
      `Refund ${shown}`,
      `A refund of ${shown} was requested.`,
      () => context.api.request(DashboardRefundDocument, { paymentId: payment.id, amount: minor ?? null, reason: reason.value.trim() || null }),
      redraw,
    );
  });
  return form;
}

function captureForm(context: DashboardContext, payment: Payment, redraw: () => void): HTMLFormElement {
  const amount = element('input', { id: 'capture-amount', name: 'amount', inputmode: 'decimal', autocomplete: 'off' });
  const submit = element('button', { type: 'submit' }, 'Capture');
  const form = element(
    'form',
    { class: 'action-form', 'aria-label': 'Capture', novalidate: '' },
    labelled(`Amount to capture (empty: all ${formatMinor(payment.amountCapturable, payment.currency)})`, amount),
    submit,
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const minor = amountOf(amount, payment.currency);
    if (minor === null) return refuse(context, amount, `Amount to capture: a positive amount in ${payment.currency}, such as 12.50.`);
    const shown = formatMinor(minor ?? payment.amountCapturable, payment.currency);
    void move(
      context,
      submit,
      `Capture ${shown} of payment ${payment.id}? What is not captured is released.`,
      `Capture ${shown}`,
      `${shown} was captured.`,
      () => context.api.request(DashboardCaptureDocument, { paymentId: payment.id, amountToCapture: minor ?? null }),
      redraw,
    );
  });
  return form;
}

function actionButton(label: string, onClick: (button: HTMLButtonElement) => void, className = ''): HTMLButtonElement {
  const button = element('button', { type: 'button', class: className }, label);
  button.addEventListener('click', () => onClick(button));
  return button;
}

/** What the reader's role may do to the payment in its status. */
function actions(context: DashboardContext, payment: Payment, redraw: () => void): HTMLElement[] {
  const role = context.user.role;
  if (!MOVES_MONEY.includes(role)) return [element('p', {}, `Your role (${role.toLowerCase()}) may not move money.`)];
  const shown: HTMLElement[] = [];
  if (REFUNDABLE.has(payment.status) && payment.amountReceived > payment.amountRefunded) shown.push(refundForm(context, payment, redraw));
  if (CAPTURABLE.has(payment.status)) shown.push(captureForm(context, payment, redraw));
  const sync = actionButton(
    'Sync with processor',
    (button) =>
      void move(
        context,
        button,
        `Ask the processor for the status of payment ${payment.id}?`,
        'Sync',
        `Payment ${payment.id} was synced with its processor.`,
        () => context.api.request(DashboardSyncDocument, { paymentId: payment.id }),
        redraw,
      ),
    'secondary',
  );
  const buttons = [sync];
  if (CANCELLABLE.has(payment.status))
    buttons.unshift(
      actionButton(
        'Cancel payment',
        (button) =>
          void move(
            context,
            button,
            `Cancel payment ${payment.id}? It cannot be paid afterwards.`,
            'Cancel payment',
            `Payment ${payment.id} was cancelled.`,
            () => context.api.request(DashboardCancelDocument, { paymentId: payment.id }),
            redraw,
          ),
        'danger',
      ),
    );
  shown.push(element('div', { class: 'row' }, ...buttons));
  return shown;
}

const titled = (heading: string, ...children: (Node | string)[]) => element('section', { class: 'card' }, element('h2', {}, heading), ...children);

export const page: DashboardPage = {
  route: /^payments\/(?<paymentId>pay_\w+)$/,
  title: 'Payment',
  async render(root, { paymentId }, context) {
    const id = paymentId!;
    const redraw = () => void page.render(root, { paymentId: id }, context);
    const [{ payment, events, refunds }, ledger] = await Promise.all([
      context.api.request(DashboardPaymentDetailDocument, { id }),
      pagedTable(
        'Ledger entries of this payment',
        'More entries of this payment',
        LEDGER_HEADINGS,
        async (after) => (await context.api.request(DashboardLedgerDocument, { after, paymentId: id })).merchant.ledgerEntries,
        (entry) => [ledgerRow(entry)],
        context.showFailure,
      ),
    ]);
    // A refund's events are its own object's (docs/webhooks.md): read beside the payment's, newest first.
    const refundEvents = await Promise.all(
      refunds.map(async (refund) => (await context.api.request(DashboardObjectEventsDocument, { objectId: refund.id })).events.edges),
    );
    const allEvents = [...events.edges, ...refundEvents.flat()].map((edge) => edge.node).sort((a, b) => b.createdAt.localeCompare(a.createdAt));
    const money = (amount: number) => formatMinor(amount, payment.currency);
    root.replaceChildren(
      element(
        'section',
        { id: 'detail', class: 'card', 'aria-labelledby': 'detail-heading' },
        element('h2', { id: 'detail-heading', class: 'mono' }, `Payment ${payment.id}`),
        element(
          'p',
          { id: 'summary' },
          `${money(payment.amount)} · `,
          statusBadge(payment.status),
          ` · received ${money(payment.amountReceived)}`,
          payment.amountRefunded ? ` · refunded ${money(payment.amountRefunded)}` : '',
          payment.applicationFeeAmount ? ` · platform fee ${money(payment.applicationFeeAmount)}` : '',
          payment.errorMessage ? ` · ${payment.errorMessage}` : '',
        ),
        element(
          'p',
          {},
          `Customer: ${[payment.email, payment.customerId].filter(Boolean).join(', ') || '—'} · connector: ${payment.connector ?? '—'} · created ${when(payment.createdAt)}`,
        ),
      ),
      element(
        'section',
        { id: 'actions', class: 'card', 'aria-labelledby': 'actions-heading' },
        element('h2', { id: 'actions-heading' }, 'Actions'),
        ...actions(context, payment, redraw),
      ),
      titled(
        'Refunds',
        refunds.length
          ? scrollRegion(
              'Refunds',
              table(
                ['Refund', 'Amount', 'Status', 'Reason', 'Created'],
                refunds.map((refund) => [
                  element('span', { class: 'mono' }, refund.id),
                  formatMinor(refund.amount, refund.currency),
                  statusBadge(refund.status),
                  refund.errorMessage ?? refund.reason ?? '—',
                  when(refund.createdAt),
                ]),
              ),
            )
          : element('p', {}, 'No refunds.'),
      ),
      element(
        'section',
        { id: 'deliveries', class: 'card' },
        element('h2', {}, 'Webhook deliveries'),
        events.edges.length ? scrollRegion('Webhook deliveries', table(DELIVERY_HEADINGS, [])) : element('p', {}, 'No events yet.'),
      ),
      ...(payment.splits
        ? [
            titled(
              'Splits',
              scrollRegion(
                'Splits',
                table(
                  ['Merchant', 'Share'],
                  payment.splits.map((split) => [split.merchantId, money(split.amount)]),
                ),
              ),
            ),
          ]
        : []),
      titled(
        'Routing',
        element(
          'p',
          { id: 'routing-reason' },
          payment.routing ? `${ALGORITHM_NAMES[payment.routing.algorithm]}: ${payment.routing.reason}` : 'Not routed yet: the payment was not confirmed.',
        ),
      ),
      titled(
        'Attempts',
        scrollRegion(
          'Attempts',
          table(
            ['#', 'Status', 'Connector', 'Method', 'Error'],
            payment.attempts.map((attempt) => [
              String(attempt.attemptNumber),
              statusBadge(attempt.status),
              attempt.connector ?? '—',
              attempt.paymentMethodType ?? '—',
              attempt.errorMessage ?? attempt.errorCode ?? '',
            ]),
          ),
        ),
      ),
      titled(
        'Status history',
        scrollRegion(
          'Status history',
          table(
            ['At', 'Of', 'From', 'To', 'Trigger', 'By'],
            payment.history.map((change) => [
              when(change.at),
              change.subject,
              change.fromStatus ? statusBadge(change.fromStatus) : '—',
              statusBadge(change.toStatus),
              change.trigger,
              change.actor ?? 'customer',
            ]),
          ),
        ),
      ),
      titled('Ledger', ledger),
    );
    root.querySelector('#deliveries tbody')?.append(...allEvents.map((event) => deliveryRow(context, event, redraw)));
  },
};
