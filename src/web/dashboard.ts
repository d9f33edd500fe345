// The live dashboard (GET /dashboard, the secret key entered or given in the fragment `#secret_key=…`):
// recent payments whose rows update as their changes commit (the paymentChanges subscription), a payment's
// attempts, status history, routing decision and webhook deliveries (with a retry button), the last hour in two
// charts, each business profile's active routing algorithm (docs/routing.md), and the money (docs/checkout.md):
// the merchant's balance, its ledger entries, a payment's fee, splits and entries, and a platform's connected
// merchants with their balances.
import { formatMinor } from '../kernel/money.ts';
import { createTransport, type Transport } from '@payments-orchestrator/client-core';
import {
  DashboardActivityDocument,
  DashboardBalanceDocument,
  DashboardConnectedMerchantsDocument,
  DashboardLedgerDocument,
  DashboardPaymentChangesDocument,
  DashboardPaymentDetailDocument,
  DashboardPaymentsDocument,
  DashboardProfilesDocument,
  DashboardRetryDeliveryDocument,
  type DashboardBalanceFragment,
  type DashboardEventFragment,
  type DashboardLedgerPageFragment,
  type DashboardPaymentFragment,
  type DashboardProfilesQuery,
} from './gql/graphql.ts';
import { byId, element, showError } from './dom.ts';
import { ALGORITHM_NAMES, table, tableRows } from './dashboard/shared-view.ts';

const KEY_STORAGE = 'dashboard:secret-key';
const RECENT_PAYMENTS = 50;
/** The charts and the balance are re-read at most this often while changes stream in. */
const ACTIVITY_REFRESH_MS = 2000;

const rows = new Map<string, { payment: DashboardPaymentFragment; row: HTMLTableRowElement }>();
const alert = byId('alert');
const live = byId('live');

const when = (iso: string) => new Date(iso).toLocaleTimeString();
const date = (iso: string) => new Date(iso).toLocaleString();
const statusBadge = (status: string) => element('span', { class: `badge status-${status.toLowerCase()}` }, status.toLowerCase().replace(/_/g, ' '));

/** Each profile's active routing algorithm of the key's mode, or the default order when it has none. */
function drawRouting(profiles: DashboardProfilesQuery['businessProfiles']): void {
  byId('routing-algorithms').replaceChildren(
    ...profiles.map((profile) =>
      element(
        'li',
        { 'data-profile-id': profile.id },
        `${profile.name}: `,
        profile.routingAlgorithm
          ? `${ALGORITHM_NAMES[profile.routingAlgorithm.type]} (since ${when(profile.routingAlgorithm.createdAt)})`
          : 'no algorithm, the default connector order',
      ),
    ),
  );
}

function secretKey(): string | null {
  const fragment = new URLSearchParams(location.hash.slice(1)).get('secret_key');
  if (fragment) {
    sessionStorage.setItem(KEY_STORAGE, fragment);
    history.replaceState(null, '', location.pathname);
  }
  return sessionStorage.getItem(KEY_STORAGE);
}

function cells(payment: DashboardPaymentFragment, open: (id: string) => void): HTMLTableCellElement[] {
  const openButton = element('button', { type: 'button', class: 'link' }, payment.id);
  openButton.addEventListener('click', () => open(payment.id));
  return [
    element('td', {}, openButton),
    element('td', { class: 'amount' }, formatMinor(payment.amount, payment.currency)),
    element('td', { 'data-column': 'status' }, statusBadge(payment.status)),
    element('td', {}, payment.connector ?? '—'),
    element('td', {}, when(payment.createdAt)),
    element('td', {}, when(payment.updated)),
  ];
}

/** Adds or updates a payment's row; an older version than the one shown (a late delivery) is ignored. */
function upsert(payment: DashboardPaymentFragment, open: (id: string) => void, atTop: boolean): void {
  const shown = rows.get(payment.id);
  if (shown && shown.payment.version >= payment.version) return;
  const row = shown?.row ?? element('tr', { 'data-payment-id': payment.id });
  row.replaceChildren(...cells(payment, open));
  if (!shown) byId('payments-body')[atTop ? 'prepend' : 'append'](row);
  if (atTop) {
    row.classList.remove('flash');
    void row.offsetWidth; // restart the highlight
    row.classList.add('flash');
  }
  rows.set(payment.id, { payment, row });
}

interface Page<Item> {
  edges: { node: Item }[];
  pageInfo: { hasNextPage: boolean; endCursor: string | null };
}

/** A list as a table a page at a time: the first page now, each next one (after the last cursor) when `more` is pressed. */
async function pagedTable<Item>(
  more: string,
  headings: string[],
  load: (after: string | null) => Promise<Page<Item>>,
  rowsOf: (item: Item) => (Node | string)[][],
): Promise<HTMLElement> {
  const shown = table(headings, []);
  const button = element('button', { type: 'button' }, more);
  let after: string | null = null;
  const next = async () => {
    button.disabled = true; // one page at a time: a second click would append the same page twice
    try {
      const page = await load(after);
      shown.tBodies[0]!.append(...tableRows(page.edges.flatMap((edge) => rowsOf(edge.node))));
      after = page.pageInfo.endCursor;
      button.hidden = !page.pageInfo.hasNextPage;
    } finally {
      button.disabled = false;
    }
  };
  button.addEventListener('click', () => void next().catch((error: Error) => showError(alert, null, error.message)));
  await next();
  return element('div', {}, element('div', { class: 'table-scroll' }, shown), button);
}

type LedgerEntry = DashboardLedgerPageFragment['edges'][number]['node'];

const LEDGER_HEADINGS = ['Date', 'Type', 'Role', 'Amount', 'Source', 'Payment'];
/** A credit (+) or a debit (-) of the merchant's balance. */
const ledgerRow = (entry: LedgerEntry) => [
  date(entry.createdAt),
  entry.type,
  entry.role.replace(/_/g, ' '),
  `${entry.amount > 0 ? '+' : ''}${formatMinor(entry.amount, entry.currency)}`,
  entry.sourceId,
  entry.paymentId ?? '—',
];

const BALANCE_HEADINGS = ['Currency', 'Available', 'Pending'];
const balanceRow = (balance: DashboardBalanceFragment) => [
  balance.currency,
  formatMinor(balance.available, balance.currency),
  formatMinor(balance.pending, balance.currency),
];

/** Draws the key's merchant's balance in each currency; answers whether the merchant is a platform. */
async function drawBalance(api: Transport): Promise<boolean> {
  const { merchant } = await api.request(DashboardBalanceDocument, {});
  byId('balance').replaceChildren(
    merchant.balance.length ? table(BALANCE_HEADINGS, merchant.balance.map(balanceRow)) : element('p', {}, 'No money has moved yet.'),
  );
  return merchant.isPlatform;
}

/** The key's merchant's ledger entries, of one payment when `paymentId` is given. */
const ledgerTable = (api: Transport, more: string, paymentId: string | null) =>
  pagedTable(
    more,
    LEDGER_HEADINGS,
    async (after) => (await api.request(DashboardLedgerDocument, { after, paymentId })).merchant.ledgerEntries,
    (entry) => [ledgerRow(entry)],
  );

/** The merchant's ledger entries, and for a platform its connected merchants' balances. */
async function drawLedger(api: Transport, isPlatform: boolean): Promise<void> {
  byId('ledger').replaceChildren(await ledgerTable(api, 'More ledger entries', null));
  if (!isPlatform) return;
  byId('connected-merchants').replaceChildren(
    await pagedTable(
      'More connected merchants',
      ['Merchant', 'Id', ...BALANCE_HEADINGS],
      async (after) => (await api.request(DashboardConnectedMerchantsDocument, { after })).connectedMerchants,
      (merchant) => (merchant.balance.length ? merchant.balance.map(balanceRow) : [['—', '—', '—']]).map((row) => [merchant.name, merchant.id, ...row]),
    ),
  );
  byId('connected').hidden = false;
}

function deliveryRows(api: Transport, paymentId: string, events: DashboardEventFragment[], open: (id: string) => void): (Node | string)[][] {
  return events.map((event) => {
    const retry = element('button', { type: 'button', 'data-event-id': event.id }, 'Retry now');
    retry.addEventListener('click', async () => {
      retry.disabled = true;
      try {
        await api.request(DashboardRetryDeliveryDocument, { eventId: event.id });
        open(paymentId);
      } catch (error) {
        showError(alert, null, (error as Error).message);
        retry.disabled = false;
      }
    });
    const attempts = event.attempts
      .map((attempt) => `#${attempt.attemptNumber} ${attempt.responseStatus ?? attempt.error ?? '—'} (${attempt.latencyMs} ms)`)
      .join(', ');
    return [event.eventType.toLowerCase(), statusBadge(event.deliveryStatus), String(event.attemptCount), attempts || 'none yet', retry];
  });
}

async function openDetail(api: Transport, paymentId: string, open: (id: string) => void): Promise<void> {
  const detail = byId('detail');
  const [{ payment, events }, ledger] = await Promise.all([
    api.request(DashboardPaymentDetailDocument, { id: paymentId }),
    ledgerTable(api, 'More entries of this payment', paymentId),
  ]);
  const heading = element('h2', { id: 'detail-heading', tabindex: '-1' }, `Payment ${payment.id}`);
  detail.replaceChildren(
    heading,
    element(
      'p',
      {},
      `${formatMinor(payment.amount, payment.currency)} · `,
      statusBadge(payment.status),
      ` · received ${formatMinor(payment.amountReceived, payment.currency)}`,
      payment.applicationFeeAmount ? ` · platform fee ${formatMinor(payment.applicationFeeAmount, payment.currency)}` : '',
      payment.errorMessage ? ` · ${payment.errorMessage}` : '',
    ),
    ...(payment.splits
      ? [
          element('h3', {}, 'Splits'),
          table(
            ['Merchant', 'Share'],
            payment.splits.map((split) => [split.merchantId, formatMinor(split.amount, payment.currency)]),
          ),
        ]
      : []),
    element('h3', {}, 'Routing'),
    element(
      'p',
      { id: 'routing-reason' },
      payment.routing ? `${ALGORITHM_NAMES[payment.routing.algorithm]}: ${payment.routing.reason}` : 'Not routed yet: the payment was not confirmed.',
    ),
    element('h3', {}, 'Attempts'),
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
    element('h3', {}, 'Status history'),
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
    element('h3', {}, 'Webhook deliveries'),
    events.edges.length
      ? table(
          ['Event', 'Delivery', 'Attempts', 'Answers', ''],
          deliveryRows(
            api,
            paymentId,
            events.edges.map((edge) => edge.node),
            open,
          ),
        )
      : element('p', {}, 'No events yet.'),
    element('h3', {}, 'Ledger'),
    ledger,
  );
  detail.hidden = false;
  heading.focus();
}

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

async function drawActivity(api: Transport): Promise<void> {
  const { activity } = await api.request(DashboardActivityDocument, { since: null });
  const shown = activity.paymentsByStatus.filter((entry) => entry.count > 0);
  const max = Math.max(0, ...shown.map((entry) => entry.count));
  byId('chart-statuses').replaceChildren(
    ...(shown.length
      ? shown.map((entry) => bar(entry.status.toLowerCase().replace(/_/g, ' '), entry.count, max, `status-${entry.status.toLowerCase()}`))
      : [element('p', {}, 'No payments in the last hour.')]),
  );
  const { total, succeeded } = activity.deliveryAttempts;
  const rate = total === 0 ? null : Math.round((succeeded / total) * 1000) / 10;
  byId('chart-webhooks').replaceChildren(
    element('p', { id: 'webhook-rate' }, rate === null ? 'No delivery attempts in the last hour.' : `${rate} % of ${total} delivery attempts got a 2xx.`),
    bar('succeeded', succeeded, total, 'status-succeeded'),
    bar('failed', total - succeeded, total, 'status-failed'),
  );
}

async function startDashboard(key: string): Promise<void> {
  const api = createTransport({ apiKey: key });
  const open = (id: string) => void openDetail(api, id, open).catch((error: Error) => showError(alert, null, error.message));
  const { businessProfiles } = await api.request(DashboardProfilesDocument, {});
  const { payments } = await api.request(DashboardPaymentsDocument, { first: RECENT_PAYMENTS });
  for (const edge of payments.edges) upsert(edge.node, open, false);
  drawRouting(businessProfiles);
  await drawLedger(api, await drawBalance(api));
  byId('board').hidden = false;
  byId('key-form').hidden = true;
  let refresh: ReturnType<typeof setTimeout> | null = null;
  const redraw = () => void Promise.all([drawActivity(api), drawBalance(api)]).catch((error: Error) => showError(alert, null, error.message));
  const refreshSoon = () => (refresh ??= setTimeout(() => ((refresh = null), redraw()), ACTIVITY_REFRESH_MS));
  for (const profile of businessProfiles) {
    api.subscribe(
      DashboardPaymentChangesDocument,
      { profileId: profile.id },
      {
        next: ({ paymentChanges }) => {
          upsert(paymentChanges, open, true);
          live.textContent = `Payment ${paymentChanges.id} is ${paymentChanges.status.toLowerCase().replace(/_/g, ' ')}.`;
          refreshSoon();
        },
        error: (error) => showError(alert, null, `Live updates stopped: ${error.message} Reload the page to resume.`),
      },
    );
  }
  await drawActivity(api);
  document.body.dataset['ready'] = 'true';
}

function start(): void {
  const form = byId<HTMLFormElement>('key-form');
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const key = byId<HTMLInputElement>('secret-key').value.trim();
    if (!/^sk_(test|live)_/.test(key)) return showError(alert, byId<HTMLInputElement>('secret-key'), 'Secret key: must start with sk_test_ or sk_live_.');
    sessionStorage.setItem(KEY_STORAGE, key);
    void startDashboard(key).catch((error: Error) => showError(alert, null, error.message));
  });
  const key = secretKey();
  if (key) void startDashboard(key).catch((error: Error) => showError(alert, null, error.message));
}

start();
