// The delivery hot path's SQL: claiming an attempt (with the endpoint it goes to) and recording its outcome
// are one statement each, one round trip through Prisma's raw path, instead of a read, a transaction and
// several ORM calls: the ORM's query path costs most of the time (docs/benchmarks.md, "Reading it";
// docs/adr/0001-one-statement-raw-sql-commits.md; bench/webhooks.ts).
import { Prisma } from '../../generated/prisma/client.ts';
import type { DeliveryKind } from '../../generated/prisma/client.ts';
import type { Mode } from '../../kernel/api-keys.ts';
import { newId } from '../../kernel/ids.ts';

/** A client or a transaction: both run raw statements. */
type Executor = { $queryRaw<T>(query: TemplateStringsArray | Prisma.Sql, ...values: unknown[]): Prisma.PrismaPromise<T> };

/** An attempt slot a worker (or a manual retry) holds: the event's bytes and where they go. */
export interface ClaimedDelivery {
  eventId: string;
  /** When the slot was claimed: the attempt's start, from which the next delay counts. */
  claimedAt: Date;
  profileId: string;
  mode: Mode;
  body: string;
  /** The trace of the change that recorded the event (docs/operations.md, "Tracing"); null when it was not traced. */
  traceParent: string | null;
  attemptNumber: number;
  /** Automatic attempts so far, this one included (manual retries do not use up the schedule). */
  automaticAttempts: number;
  isTest: boolean;
  url: string | null;
  endpointDisabled: boolean;
  /** The merchant's live webhook allowlist, checked again at send time (the operator may have narrowed it). */
  liveWebhookHosts: string[];
  /** The signing keys of the event's mode, sealed: the current one and, with its expiry, the one a rotation replaced. */
  signingKeys: {
    paymentResponseHashKeyEncrypted: string;
    previousPaymentResponseHashKeyEncrypted: string | null;
    previousPaymentResponseHashKeyExpiresAt: Date | null;
  };
}

interface ClaimRow {
  id: string;
  profile_id: string;
  mode: Mode;
  body: string;
  trace_parent: string | null;
  attempt_count: number;
  automatic_attempts: number;
  is_test: boolean;
  live_webhook_hosts: string[];
  test_webhook_url: string | null;
  live_webhook_url: string | null;
  test_webhook_disabled_at: Date | null;
  live_webhook_disabled_at: Date | null;
  test_payment_response_hash_key_encrypted: string;
  live_payment_response_hash_key_encrypted: string;
  previous_key_encrypted: string | null;
  previous_key_expires_at: Date | null;
}

/** What an attempt got, as stored. */
export interface AttemptRecord {
  kind: DeliveryKind;
  url: string | null;
  requestHeaders: Record<string, string>;
  responseStatus: number | null;
  responseBody: string | null;
  responseBodyTruncated: boolean;
  latencyMs: number;
  error: string | null;
}

/** What recording the attempt does to the event, each guarded so that only the claim's holder decides. */
export type EventChange =
  | { kind: 'delivered' }
  | { kind: 'retry_at'; nextAttemptAt: Date; leaseUntil: Date }
  | { kind: 'exhausted'; leaseUntil: Date }
  /** A one-shot send (a test event) that failed. */
  | { kind: 'failed' }
  /** Nowhere to send it: no URL for the mode, or the endpoint is disabled. */
  | { kind: 'not_sent' }
  | { kind: 'unchanged' };

/** PostgreSQL text cannot hold NUL: a receiver's binary answer is stored with U+FFFD in its place. */
const storable = (text: string | null) => (text === null ? null : text.replaceAll('\u0000', '\uFFFD'));

export class DeliveryStore {
  constructor(private readonly db: Executor) {}

  /** Claims the due automatic attempt of `eventId`, holding it until `leaseUntil`; null when none is due. */
  claimDue(eventId: string, now: Date, leaseUntil: Date): Promise<ClaimedDelivery | null> {
    return this.claim(
      now,
      Prisma.sql`automatic_attempts = automatic_attempts + 1, next_attempt_at = ${leaseUntil}`,
      Prisma.sql`id = ${eventId} AND delivery_status = 'PENDING' AND next_attempt_at <= ${now}`,
    );
  }

  /** Claims an attempt outside the schedule (manual retry, test event), whatever the event's status. */
  claimNow(eventId: string): Promise<ClaimedDelivery | null> {
    return this.claim(new Date(), Prisma.empty, Prisma.sql`id = ${eventId}`);
  }

  private async claim(claimedAt: Date, alsoSet: Prisma.Sql, where: Prisma.Sql): Promise<ClaimedDelivery | null> {
    const set = alsoSet === Prisma.empty ? Prisma.sql`attempt_count = attempt_count + 1` : Prisma.sql`attempt_count = attempt_count + 1, ${alsoSet}`;
    const rows = await this.db.$queryRaw<ClaimRow[]>`
      WITH claimed AS (
        UPDATE events SET ${set} WHERE ${where}
        RETURNING id, merchant_id, profile_id, mode, body, trace_parent, attempt_count, automatic_attempts, is_test
      )
      SELECT c.id, c.profile_id, c.mode::text AS mode, c.body, c.trace_parent, c.attempt_count, c.automatic_attempts, c.is_test,
             p.test_webhook_url, p.live_webhook_url, p.test_webhook_disabled_at, p.live_webhook_disabled_at,
             p.test_payment_response_hash_key_encrypted, p.live_payment_response_hash_key_encrypted, m.live_webhook_hosts,
             CASE WHEN c.mode = 'LIVE' THEN p.live_previous_payment_response_hash_key_encrypted
                  ELSE p.test_previous_payment_response_hash_key_encrypted END AS previous_key_encrypted,
             CASE WHEN c.mode = 'LIVE' THEN p.live_previous_payment_response_hash_key_expires_at
                  ELSE p.test_previous_payment_response_hash_key_expires_at END AS previous_key_expires_at
      FROM claimed c JOIN business_profiles p ON p.id = c.profile_id JOIN merchant_accounts m ON m.id = c.merchant_id`;
    const row = rows[0];
    if (row === undefined) return null;
    const live = row.mode === 'LIVE';
    return {
      eventId: row.id,
      claimedAt,
      profileId: row.profile_id,
      mode: row.mode,
      body: row.body,
      traceParent: row.trace_parent,
      attemptNumber: row.attempt_count,
      automaticAttempts: row.automatic_attempts,
      isTest: row.is_test,
      liveWebhookHosts: row.live_webhook_hosts,
      url: live ? row.live_webhook_url : row.test_webhook_url,
      endpointDisabled: (live ? row.live_webhook_disabled_at : row.test_webhook_disabled_at) !== null,
      signingKeys: {
        paymentResponseHashKeyEncrypted: live ? row.live_payment_response_hash_key_encrypted : row.test_payment_response_hash_key_encrypted,
        previousPaymentResponseHashKeyEncrypted: row.previous_key_encrypted,
        previousPaymentResponseHashKeyExpiresAt: row.previous_key_expires_at,
      },
    };
  }

  /** Stores the attempt and applies `change` to the event, in one statement; false when the guard did not hold. */
  async record(claim: ClaimedDelivery, attempt: AttemptRecord, change: EventChange, executor: Executor = this.db): Promise<boolean> {
    const now = new Date();
    const id = claim.eventId;
    const update = eventUpdate(id, now, change);
    const rows = await executor.$queryRaw<{ changed: number }[]>`
      WITH attempt AS (
        INSERT INTO webhook_delivery_attempts
          (id, event_id, attempt_number, kind, url, request_headers, response_status, response_body, response_body_truncated, latency_ms, error, started_at, created_at)
        VALUES (${newId('deliveryAttempt')}, ${id}, ${claim.attemptNumber}, ${attempt.kind}::"DeliveryKind", ${attempt.url},
                ${JSON.stringify(attempt.requestHeaders)}::jsonb, ${attempt.responseStatus}, ${storable(attempt.responseBody)},
                ${attempt.responseBodyTruncated}, ${Math.round(attempt.latencyMs)}, ${storable(attempt.error)}, ${claim.claimedAt}, ${now})
        RETURNING id
      ), changed AS (${update})
      SELECT (SELECT count(*)::int FROM changed) AS changed, (SELECT count(*)::int FROM attempt) AS recorded`;
    return change.kind === 'unchanged' || rows[0]!.changed === 1;
  }
}

function eventUpdate(id: string, now: Date, change: EventChange): Prisma.Sql {
  switch (change.kind) {
    case 'delivered':
      return Prisma.sql`UPDATE events SET delivery_status = 'DELIVERED', delivered_at = ${now}, next_attempt_at = NULL WHERE id = ${id} RETURNING id`;
    case 'retry_at':
      return Prisma.sql`UPDATE events SET next_attempt_at = ${change.nextAttemptAt}
        WHERE id = ${id} AND delivery_status = 'PENDING' AND next_attempt_at = ${change.leaseUntil} RETURNING id`;
    case 'exhausted':
      return Prisma.sql`UPDATE events SET delivery_status = 'FAILED', next_attempt_at = NULL
        WHERE id = ${id} AND delivery_status = 'PENDING' AND next_attempt_at = ${change.leaseUntil} RETURNING id`;
    case 'failed':
      return Prisma.sql`UPDATE events SET delivery_status = 'FAILED', next_attempt_at = NULL WHERE id = ${id} AND delivery_status = 'PENDING' RETURNING id`;
    case 'not_sent':
      return Prisma.sql`UPDATE events SET delivery_status = 'NOT_SENT', next_attempt_at = NULL WHERE id = ${id} AND delivery_status = 'PENDING' RETURNING id`;
    case 'unchanged':
      return Prisma.sql`SELECT id FROM events WHERE false`;
  }
}
