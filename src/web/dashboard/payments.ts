// The Payments page (`#/payments?status=…`, docs/dashboard.md): the last hour in two charts, then the
// merchant's payments found by the filters in the fragment's query (so a link reproduces them), a page at a
// time, whose rows change as the payments do (the paymentChanges subscription of each business profile).
import { formatMinor } from '../../kernel/money.ts';
import { element } from '../dom.ts';
import {
  DashboardActivityDocument,
  DashboardPaymentChangesDocument,
  DashboardPaymentsDocument,
  DashboardProfilesDocument,
  type DashboardPaymentFragment,
  type DashboardPaymentsQueryVariables,
  type PaymentStatus,
} from '../gql/graphql.ts';
import type { DashboardContext, DashboardPage } from './page.ts';
import { pagedTable, statusBadge, when } from './shared-view.ts';

/** The charts are re-read at most this often while changes stream in. */
const ACTIVITY_REFRESH_MS = 2000;

/** The filters, as the fragment's query names them. */
const FILTERS = ['q', 'status', 'from', 'to', 'connector', 'method', 'currency'] as const;
type Filters = Partial<Record<(typeof FILTERS)[number], string>>;

const STATUSES: readonly PaymentStatus[] = [
  'REQUIRES_PAYMENT_METHOD',
  'REQUIRES_CONFIRMATION',
  'REQUIRES_CUSTOMER_ACTION',
  'PROCESSING',
  'REQUIRES_CAPTURE',
  'PARTIALLY_AUTHORIZED',
  'PARTIALLY_CAPTURED',
  'SUCCEEDED',
  'FAILED',
  'CANCELLED',
  'CANCELLED_POST_CAPTURE',
  'EXPIRED',
];

function bar(label: string, count: number, max: number, className: string): HTMLElement {
  const filled = element('span', { class: `bar ${className}` });
  // Through the CSSOM: the page's Content-Security-Policy refuses inline style attributes.
  filled.style.width = `${max === 0 ? 0 : Math.round((count / max) * 100)}%`;
  return element(
    'div',
    { class: 'bar-row' },
    element('span', { class: 'bar-label' }, label),
    element('span', { class: 'bar-track', 'aria-hidden': 'true' }, filled),
    element('span', { class: 'bar-value' }, String(count)),
  );
}

async function drawActivity(context: DashboardContext, statuses: HTMLElement, webhooks: HTMLElement): Promise<void> {
  const { activity } = await context.api.request(DashboardActivityDocument, { since: null });
  const shown = activity.paymentsByStatus.filter((entry) => entry.count > 0);
  const max = Math.max(0, ...shown.map((entry) => entry.count));
  statuses.replaceChildren(
    ...(shown.length
      ? shown.map((entry) => bar(entry.status.toLowerCase().replace(/_/g, ' '), entry.count, max, `status-${entry.status.toLowerCase()}`))
      : [element('p', {}, 'No payments in the last hour.')]),
  );
  const { total, succeeded } = activity.deliveryAttempts;
  const rate = total === 0 ? null : Math.round((succeeded / total) * 1000) / 10;
  webhooks.replaceChildren(
    element('p', { id: 'webhook-rate' }, rate === null ? 'No delivery attempts in the last hour.' : `${rate} % of ${total} delivery attempts got a 2xx.`),
    bar('succeeded', succeeded, total, 'status-succeeded'),
    bar('failed', total - succeeded, total, 'status-failed'),
  );
}

/** A date field's day as the API's instant: from the start of `from`, to the end of `to`, in the reader's time zone. */
const dayStart = (day: string, plusDays = 0) => {
  const [year, month, date] = day.split('-').map(Number);
  return new Date(year!, month! - 1, date! + plusDays).toISOString();
};

/** The payment method types the payments query filters by (docs/api.md). */
const METHODS = ['card', 'bank_debit', 'wallet', 'pay_later', 'bank_redirect', 'bank_transfer', 'crypto'];

function variablesOf(filters: Filters): DashboardPaymentsQueryVariables {
  return {
    search: filters.q ?? null,
    connector: filters.connector ?? null,
    paymentMethod: filters.method ?? null,
    currency: filters.currency?.toUpperCase() ?? null,
    status: filters.status ? (filters.status as PaymentStatus) : null,
    createdAfter: filters.from ? dayStart(filters.from) : null,
    createdBefore: filters.to ? dayStart(filters.to, 1) : null,
  };
}

function filterForm(filters: Filters, context: DashboardContext): HTMLFormElement {
  const search = element('input', {
    id: 'filter-q',
    name: 'q',
    type: 'search',
    maxlength: '200',
    autocomplete: 'off',
    spellcheck: 'false',
    'aria-describedby': 'filter-q-hint',
    value: filters.q ?? '',
  });
  const method = element(
    'select',
    { id: 'filter-method', name: 'method' },
    element('option', { value: '' }, 'Any'),
    ...METHODS.map((value) => element('option', { value }, value.replace(/_/g, ' '))),
  );
  method.value = filters.method ?? '';
  const connector = element('input', { id: 'filter-connector', name: 'connector', autocomplete: 'off', spellcheck: 'false', value: filters.connector ?? '' });
  const currency = element('input', {
    id: 'filter-currency',
    name: 'currency',
    maxlength: '3',
    autocomplete: 'off',
    spellcheck: 'false',
    value: filters.currency ?? '',
  });
  const status = element(
    'select',
    { id: 'filter-status', name: 'status' },
    element('option', { value: '' }, 'Any'),
    ...STATUSES.map((value) => element('option', { value }, value.toLowerCase().replace(/_/g, ' '))),
  );
  status.value = filters.status ?? '';
  const from = element('input', { id: 'filter-from', name: 'from', type: 'date', value: filters.from ?? '' });
  const to = element('input', { id: 'filter-to', name: 'to', type: 'date', value: filters.to ?? '' });
  const labelled = (label: string, control: HTMLElement) => element('div', { class: 'field' }, element('label', { for: control.id }, label), control);
  const form = element(
    'form',
    { class: 'filters', role: 'search', 'aria-label': 'Find payments' },
    labelled('Search', search),
    element('p', { id: 'filter-q-hint', class: 'hint' }, 'A payment id, a customer’s email, a card’s last four digits, or an amount such as 12.50.'),
    element('div', { class: 'row' }, labelled('Status', status), labelled('Created from', from), labelled('Created to', to)),
    element('div', { class: 'row' }, labelled('Connector', connector), labelled('Payment method', method), labelled('Currency', currency)),
    element('div', { class: 'row' }, element('button', { type: 'submit' }, 'Find'), element('a', { href: '#/payments', class: 'button secondary' }, 'Clear')),
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const query = new URLSearchParams();
    for (const [name, value] of new FormData(form)) if (typeof value === 'string' && value.trim()) query.set(name, value.trim());
    context.navigate(query.size ? `payments?${query}` : 'payments');
  });
  return form;
}

export const page: DashboardPage = {
  route: /^payments$/,
  title: 'Payments',
  navLabel: 'Payments',
  async render(root, params, context) {
    const filters: Filters = Object.fromEntries(FILTERS.filter((name) => params[name]).map((name) => [name, params[name]]));
    const filtered = Object.keys(filters).length > 0;
    const rows = new Map<string, { payment: DashboardPaymentFragment; row: HTMLTableRowElement }>();
    const open = (payment: DashboardPaymentFragment) => {
      const link = element('a', { href: `#/payments/${payment.id}`, class: 'mono' }, payment.id);
      return [
        element('td', {}, link),
        element('td', { class: 'amount' }, formatMinor(payment.amount, payment.currency)),
        element('td', { 'data-column': 'status' }, statusBadge(payment.status)),
        element('td', {}, payment.connector ?? '—'),
        element('td', {}, payment.email ?? payment.customerId ?? '—'),
        element('td', {}, when(payment.createdAt)),
        element('td', {}, when(payment.updated)),
      ];
    };
    /** Adds or updates a payment's row; an older version than the one shown (a late delivery) is ignored. */
    const rowOf = (payment: DashboardPaymentFragment): HTMLTableRowElement => {
      const shown = rows.get(payment.id);
      if (shown && shown.payment.version >= payment.version) return shown.row;
      const row = shown?.row ?? element('tr', { 'data-payment-id': payment.id });
      row.replaceChildren(...open(payment));
      rows.set(payment.id, { payment, row });
      return row;
    };
    const statuses = element('div', { id: 'chart-statuses' });
    const webhooks = element('div', { id: 'chart-webhooks' });
    const [{ businessProfiles }, list] = await Promise.all([
      context.api.request(DashboardProfilesDocument, {}),
      pagedTable(
        'Payments found',
        'Load more payments',
        ['Payment', 'Amount', 'Status', 'Connector', 'Customer', 'Created', 'Updated'],
        async (after) => (await context.api.request(DashboardPaymentsDocument, { ...variablesOf(filters), after, first: 20 })).payments,
        (payment) => [rowOf(payment)],
        context.showFailure,
      ),
      drawActivity(context, statuses, webhooks),
    ]);
    const body = list.querySelector('tbody')!;
    body.id = 'payments-body';
    root.replaceChildren(
      element(
        'section',
        { class: 'charts', 'aria-label': 'The last hour' },
        element('div', { class: 'card' }, element('h2', {}, 'Payments by status (last hour)'), statuses),
        element('div', { class: 'card' }, element('h2', {}, 'Webhook success rate (last hour)'), webhooks),
      ),
      element(
        'section',
        { class: 'card', 'aria-labelledby': 'find-heading' },
        element('h2', { id: 'find-heading' }, 'Find payments'),
        filterForm(filters, context),
      ),
      element(
        'section',
        { class: 'card', 'aria-labelledby': 'list-heading' },
        element('h2', { id: 'list-heading' }, filtered ? 'Payments found' : 'Recent payments ', filtered ? '' : element('small', {}, '(live)')),
        list,
      ),
    );

    const live = document.getElementById('live');
    let refresh: ReturnType<typeof setTimeout> | null = null;
    const refreshSoon = () =>
      (refresh ??= setTimeout(() => {
        refresh = null;
        drawActivity(context, statuses, webhooks).catch(context.showFailure);
      }, ACTIVITY_REFRESH_MS));
    const stops = businessProfiles.map((profile) =>
      context.api.subscribe(
        DashboardPaymentChangesDocument,
        { profileId: profile.id },
        {
          next: ({ paymentChanges }) => {
            // A filtered list only updates the rows it shows; the unfiltered one also gains new payments on top.
            if (!rows.has(paymentChanges.id) && filtered) return;
            const isNew = !rows.has(paymentChanges.id);
            const row = rowOf(paymentChanges);
            if (isNew) body.prepend(row);
            row.classList.remove('flash');
            void row.offsetWidth; // restart the highlight
            row.classList.add('flash');
            if (live) live.textContent = `Payment ${paymentChanges.id} is ${paymentChanges.status.toLowerCase().replace(/_/g, ' ')}.`;
            refreshSoon();
          },
          error: (error) => context.showFailure(new Error(`Live updates stopped: ${error.message} Reload the page to resume.`)),
        },
      ),
    );
    return () => {
      for (const stop of stops) stop();
      if (refresh) clearTimeout(refresh);
    };
  },
};
