// Adyen's standard notifications: every NotificationRequestItem signed with the account's HMAC key (hex) in its
// additionalData.hmacSignature, checked in constant time; then the item read as the port's ConnectorCallback.
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { ConnectorCallback, IgnoredCallback } from '../port.ts';
import { EVENT_CODES } from './status-map.ts';
import { additionalText, notificationSchema, type NotificationItem } from './wire.ts';

/** What Adyen must get back for a notification it should not send again. */
export const ACCEPTED_BODY = '[accepted]';

/** The signed fields of an item, in Adyen's order, joined by colons (a missing one is empty). */
const signedData = (item: NotificationItem): string =>
  [
    item.pspReference,
    item.originalReference ?? '',
    item.merchantAccountCode,
    item.merchantReference,
    item.amount.value,
    item.amount.currency,
    item.eventCode,
    item.success,
  ].join(':');

export function verifyItem(item: NotificationItem, hmacKey: string): boolean {
  const signature = Buffer.from(additionalText(item, 'hmacSignature') ?? '', 'base64');
  if (!/^[0-9a-fA-F]+$/.test(hmacKey) || hmacKey.length % 2 !== 0) return false;
  const expected = createHmac('sha256', Buffer.from(hmacKey, 'hex')).update(signedData(item), 'utf8').digest();
  return signature.length === expected.length && timingSafeEqual(signature, expected);
}

/** The notification's items, each read and as sent (its own JSON, for its row of the callback log). */
function readNotification(rawBody: Buffer): { item: NotificationItem; sent: string }[] | null {
  let json: unknown;
  try {
    json = JSON.parse(rawBody.toString('utf8'));
  } catch {
    return null;
  }
  const notification = notificationSchema.safeParse(json);
  if (!notification.success) return null;
  const sent = (json as { notificationItems: unknown[] }).notificationItems;
  return notification.data.notificationItems.map((wrapper, index) => ({ item: wrapper.NotificationRequestItem, sent: JSON.stringify(sent[index]) }));
}

/** Whether every item of the notification carries a valid signature under `hmacKey`. */
export function verifyAdyenNotification(rawBody: Buffer, hmacKey: string): boolean {
  const items = readNotification(rawBody);
  return items !== null && items.every(({ item }) => verifyItem(item, hmacKey));
}

/**
 * Every item of the notification, in the order sent: Adyen batches several items per request. The eventId is
 * Adyen's identity of an event: pspReference, eventCode and success. An item for another merchant account than
 * `merchantAccount` is ignored, naming that account (a company-level webhook sends every merchant account's items to
 * one URL: docs/connectors/adyen.md), as is one whose eventCode the connector does not act on. Each event carries its
 * item's own JSON, which its row of the callback log keeps (a batch's body once per item would be kept N times).
 */
export function parseAdyenNotification(rawBody: Buffer, merchantAccount: string): (ConnectorCallback | IgnoredCallback)[] {
  return (readNotification(rawBody) ?? []).map(({ item, sent }) => {
    const eventId = `${item.pspReference}:${item.eventCode}:${item.success}`;
    const ignored = (reason: IgnoredCallback['reason']): IgnoredCallback => ({ kind: 'ignored', eventId, eventType: item.eventCode, reason, itemBody: sent });
    if (item.merchantAccountCode !== merchantAccount) return { ...ignored('other_merchant_account'), processorAccount: item.merchantAccountCode };
    const read = Object.hasOwn(EVENT_CODES, item.eventCode) ? EVENT_CODES[item.eventCode]! : undefined;
    const event = read?.(item, eventId);
    return event == null ? ignored('unrecognised_event') : { ...event, itemBody: sent };
  });
}
