// What the database says was delivered, set against what an independent receiver actually got: every event
// that must reach the merchant did (none missing), and how many arrived more than once (duplicates).
import pg from 'pg';
import { expect, vi } from 'vitest';
import type { Receiver } from './receiver.ts';

export interface EventRow {
  id: string;
  objectId: string;
  eventType: string;
  deliveryStatus: string;
  attemptCount: number;
}

export interface DeliveryAudit {
  events: EventRow[];
  /** How many times the receiver got each event (by event_id), whatever it answered. */
  arrivals: Map<string, number>;
  /** Events of the database that never reached the receiver. */
  missing: string[];
  /** Event ids the receiver got that the database does not have (must never happen). */
  unknown: string[];
  /** Arrivals beyond each event's first. */
  duplicates: number;
  /** The most times one event arrived. */
  mostArrivals: number;
}

async function query<Row>(databaseUrl: string, text: string, values: unknown[]): Promise<Row[]> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    return (await client.query(text, values)).rows as Row[];
  } finally {
    await client.end();
  }
}

/** The events of `profileIds`, straight from the database. */
export const eventRows = (databaseUrl: string, profileIds: string[]) =>
  query<EventRow>(
    databaseUrl,
    `SELECT id, object_id AS "objectId", event_type::text AS "eventType", delivery_status::text AS "deliveryStatus", attempt_count AS "attemptCount"
     FROM events WHERE profile_id = ANY($1) ORDER BY created_at`,
    [profileIds],
  );

/** Waits until no event of `profileIds` is PENDING any more (each DELIVERED, FAILED or NOT_SENT), and returns them. */
export async function settledEvents(databaseUrl: string, profileIds: string[], timeout = 60_000): Promise<EventRow[]> {
  return vi.waitFor(
    async () => {
      const rows = await eventRows(databaseUrl, profileIds);
      const pending = rows.filter((row) => row.deliveryStatus === 'PENDING');
      expect(pending.length, `${pending.length} of ${rows.length} events still pending`).toBe(0);
      return rows;
    },
    { timeout, interval: 200 },
  );
}

/** Audits the events of `profileIds` against what `receiver` got. */
export async function auditDeliveries(databaseUrl: string, profileIds: string[], receiver: Receiver): Promise<DeliveryAudit> {
  const events = await eventRows(databaseUrl, profileIds);
  const arrivals = new Map<string, number>();
  for (const body of receiver.bodies()) arrivals.set(body.event_id, (arrivals.get(body.event_id) ?? 0) + 1);
  const known = new Set(events.map((event) => event.id));
  const counts = [...arrivals.values()];
  return {
    events,
    arrivals,
    missing: events.filter((event) => !arrivals.has(event.id)).map((event) => event.id),
    unknown: [...arrivals.keys()].filter((id) => !known.has(id)),
    duplicates: counts.reduce((sum, count) => sum + count - 1, 0),
    mostArrivals: Math.max(0, ...counts),
  };
}
