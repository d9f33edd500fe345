// The Events page (`#/events?delivered=no&type=…`, docs/dashboard.md): every event of the session's mode,
// newest first, with its webhook delivery (status, attempts, the receiver's last answer) and Retry now; the
// filters live in the fragment's query, so a link reproduces them.
import { element } from '../dom.ts';
import { DashboardEventsDocument, type EventType } from '../gql/graphql.ts';
import { DELIVERY_HEADINGS, deliveryRow } from './deliveries.ts';
import type { DashboardPage } from './page.ts';
import { pagedTable } from './shared-view.ts';

/** Every event type (a Record: the compiler names one the schema gains), as its webhooks spell it. */
const EVENT_TYPES: Record<EventType, true> = {
  ACTION_REQUIRED: true,
  DISPUTE_ACCEPTED: true,
  DISPUTE_CANCELLED: true,
  DISPUTE_CHALLENGED: true,
  DISPUTE_EXPIRED: true,
  DISPUTE_LOST: true,
  DISPUTE_OPENED: true,
  DISPUTE_WON: true,
  INVOICE_PAID: true,
  MANDATE_ACTIVE: true,
  MANDATE_REVOKED: true,
  PAYMENT_AUTHORIZED: true,
  PAYMENT_CANCELLED: true,
  PAYMENT_CANCELLED_POST_CAPTURE: true,
  PAYMENT_CAPTURED: true,
  PAYMENT_EXPIRED: true,
  PAYMENT_FAILED: true,
  PAYMENT_PARTIALLY_AUTHORIZED: true,
  PAYMENT_PROCESSING: true,
  PAYMENT_SUCCEEDED: true,
  PAYOUT_CANCELLED: true,
  PAYOUT_EXPIRED: true,
  PAYOUT_FAILED: true,
  PAYOUT_INITIATED: true,
  PAYOUT_NOT_PERMITTED: true,
  PAYOUT_PROCESSING: true,
  PAYOUT_REVERSED: true,
  PAYOUT_SUCCESS: true,
  REFUND_FAILED: true,
  REFUND_REVIEW: true,
  REFUND_SUCCEEDED: true,
  SURCHARGE_PAYMENT_SUCCEEDED: true,
  SURCHARGE_REFUND_SUCCEEDED: true,
};

const DELIVERED: Record<string, boolean> = { yes: true, no: false };

function choice(id: string, label: string, options: [string, string][], chosen: string | undefined): HTMLElement {
  const control = element('select', { id, name: id.replace(/^filter-/, '') }, ...options.map(([value, text]) => element('option', { value }, text)));
  control.value = chosen ?? '';
  return element('div', { class: 'field' }, element('label', { for: id }, label), control);
}

export const page: DashboardPage = {
  route: /^events$/,
  title: 'Events',
  navLabel: 'Events',
  async render(root, params, context) {
    const type = params['type'] && params['type'] in EVENT_TYPES ? (params['type'] as EventType) : undefined;
    const delivered = params['delivered'] ? DELIVERED[params['delivered']] : undefined;
    const form = element(
      'form',
      { class: 'filters', role: 'search', 'aria-label': 'Filter events' },
      element(
        'div',
        { class: 'row' },
        choice(
          'filter-delivered',
          'Delivered',
          [
            ['', 'Any'],
            ['yes', 'Delivered'],
            ['no', 'Not delivered'],
          ],
          params['delivered'],
        ),
        choice('filter-type', 'Type', [['', 'Any'], ...Object.keys(EVENT_TYPES).map((name): [string, string] => [name, name.toLowerCase()])], type),
      ),
      element('div', { class: 'row' }, element('button', { type: 'submit' }, 'Filter'), element('a', { href: '#/events', class: 'button secondary' }, 'Clear')),
    );
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      const query = new URLSearchParams();
      for (const [name, value] of new FormData(form)) if (typeof value === 'string' && value) query.set(name, value);
      context.navigate(query.size ? `events?${query}` : 'events');
    });
    const redraw = () => void page.render(root, params, context);
    const list = await pagedTable(
      'Events',
      'Load more events',
      DELIVERY_HEADINGS,
      async (after) => (await context.api.request(DashboardEventsDocument, { after, delivered: delivered ?? null, eventTypes: type ? [type] : null })).events,
      (event) => [deliveryRow(context, event, redraw)],
      context.showFailure,
    );
    list.id = 'events';
    root.replaceChildren(
      element('section', { class: 'card', 'aria-label': 'Filter events' }, form),
      element('section', { class: 'card', 'aria-labelledby': 'events-heading' }, element('h2', { id: 'events-heading' }, 'Events, newest first'), list),
    );
  },
};
