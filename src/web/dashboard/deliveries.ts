// A list of events with their webhook deliveries, as the Payment and Events pages show them: the delivery's
// status, its attempts with the receiver's answers, and Retry now (retryWebhookDelivery, docs/webhooks.md).
import { element } from '../dom.ts';
import { DashboardRetryDeliveryDocument, type DashboardEventFragment } from '../gql/graphql.ts';
import type { DashboardContext, DashboardUser } from './page.ts';
import { dateTime, statusBadge } from './shared-view.ts';

/** The roles that may send a delivery again (docs/dashboard.md, the roles table). */
const RETRIES: readonly DashboardUser['role'][] = ['OWNER', 'ADMIN', 'DEVELOPER'];

export const DELIVERY_HEADINGS = ['Event', 'Object', 'Created', 'Delivery', 'Attempts', 'Last answer', ''];

/** An attempt's answer: the receiver's HTTP status, or why none came. */
const answerOf = (attempt: DashboardEventFragment['attempts'][number]) =>
  `#${attempt.attemptNumber} ${attempt.responseStatus ?? attempt.error ?? '—'} (${attempt.latencyMs} ms)`;

/** An event's row; Retry now sends it again at once and then calls `retried` (the page redraws). */
export function deliveryRow(context: DashboardContext, event: DashboardEventFragment, retried: () => void): HTMLTableRowElement {
  const retry = element(
    'button',
    { type: 'button', class: 'small', 'data-event-id': event.id, 'aria-label': `Retry now: ${event.eventType.toLowerCase()} ${event.id}` },
    'Retry now',
  );
  retry.addEventListener('click', async () => {
    retry.disabled = true;
    try {
      await context.api.request(DashboardRetryDeliveryDocument, { eventId: event.id });
      context.showNotice(`Event ${event.id} was sent again.`);
      retried();
    } catch (error) {
      context.showFailure(error);
      retry.disabled = false;
    }
  });
  const object = event.objectId.startsWith('pay_') ? element('a', { href: `#/payments/${event.objectId}`, class: 'mono' }, event.objectId) : event.objectId;
  const last = event.attempts.at(-1);
  const cells: (Node | string)[] = [
    event.eventType.toLowerCase(),
    object,
    dateTime(event.createdAt),
    statusBadge(event.deliveryStatus),
    String(event.attemptCount),
    element('span', { title: event.attempts.map(answerOf).join(', ') }, last ? answerOf(last) : 'none yet'),
    RETRIES.includes(context.user.role) ? retry : '',
  ];
  return element('tr', { 'data-event-id': event.id }, ...cells.map((cell) => element('td', {}, cell)));
}
