// The delivery hot path's SQL: claiming attempts (with the endpoint each goes to) and recording their outcomes
// are one statement each, for any number of events at once (the worker groups its concurrent jobs' claims and
// records: src/platform/batcher.ts), sent as prepared statements straight on the pool: the ORM's query path
// and a round trip per event cost most of a delivery's time (docs/benchmarks.md, "Reading it";
// docs/adr/0001-one-statement-raw-sql-commits.md; bench/webhooks.ts, bench/sql/webhook-delivery.pgbench).
//
// The lock order: a statement that changes several events locks them in id order before it changes any, and the
// 410's transaction locks the business profile, then its events in id order. Two writers holding events of one
// profile (a batch and a 410, say) would otherwise each lock one and wait for the other's: PostgreSQL breaks such
// a deadlock by rolling one back, an attempt record lost and its POST repeated after the lease
// (docs/architecture.md, "Database access").
import type { DeliveryKind } from '../../generated/prisma/client.ts';
import type { Mode } from '../../kernel/api-keys.ts';
import { newId } from '../../kernel/ids.ts';
import type { PreparedStatements, SqlExecutor } from '../../platform/db/client.ts';

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

/** The endpoint, keys and allowlist of each claimed event, from the rows the claim changed (`claimed`). */
const CLAIMED_WITH_ENDPOINT = `
  SELECT c.id, c.profile_id, c.mode::text AS mode, c.body, c.trace_parent, c.attempt_count, c.automatic_attempts, c.is_test,
         p.test_webhook_url, p.live_webhook_url, p.test_webhook_disabled_at, p.live_webhook_disabled_at,
         p.test_payment_response_hash_key_encrypted, p.live_payment_response_hash_key_encrypted, m.live_webhook_hosts,
         CASE WHEN c.mode = 'LIVE' THEN p.live_previous_payment_response_hash_key_encrypted
              ELSE p.test_previous_payment_response_hash_key_encrypted END AS previous_key_encrypted,
         CASE WHEN c.mode = 'LIVE' THEN p.live_previous_payment_response_hash_key_expires_at
              ELSE p.test_previous_payment_response_hash_key_expires_at END AS previous_key_expires_at
  FROM claimed c JOIN business_profiles p ON p.id = c.profile_id JOIN merchant_accounts m ON m.id = c.merchant_id`;

const CLAIMED_COLUMNS = 'id, merchant_id, profile_id, mode, body, trace_parent, attempt_count, automatic_attempts, is_test';

/**
 * The due automatic attempts of the events $2, each held until $1 (the lease); $3 is now. `due` locks the events
 * by primary key alone, in the lock order (at the top of this file), and only then keeps the due ones, as they
 * are once locked. Given their status and time with the keys, PostgreSQL may read the (delivery_status,
 * next_attempt_at) index instead of the key or beside it, and its range is every due event: under a backlog newer than the table's last
 * ANALYZE it does, and reads the whole backlog for each claim (docs/architecture.md, "Database access").
 * `OFFSET 0` keeps the planner from pushing the outer conditions down into the locking scan.
 */
export const CLAIM_DUE = `WITH due AS MATERIALIZED (
    SELECT id FROM (SELECT id, delivery_status, next_attempt_at FROM events WHERE id = ANY($2::text[]) ORDER BY id OFFSET 0 FOR NO KEY UPDATE) AS locked
    WHERE delivery_status = 'PENDING' AND next_attempt_at <= $3
  ), claimed AS (
    UPDATE events SET attempt_count = attempt_count + 1, automatic_attempts = automatic_attempts + 1, next_attempt_at = $1
    WHERE id IN (SELECT id FROM due)
    RETURNING ${CLAIMED_COLUMNS}
  )${CLAIMED_WITH_ENDPOINT}`;

/**
 * When event $1's next automatic attempt is due, if it is PENDING. Not for a test event: the request that records it
 * sends it, and its automatic attempt is only the reconciler's, for a process that died before recording its send
 * (outbox.ts, testEventFallback).
 */
const PENDING_ATTEMPT_AT = `SELECT next_attempt_at AS at FROM events WHERE id = $1 AND delivery_status = 'PENDING' AND NOT is_test`;

/** An attempt of event $1 outside the schedule, whatever its status. */
const CLAIM_NOW = `WITH claimed AS (
    UPDATE events SET attempt_count = attempt_count + 1 WHERE id = $1
    RETURNING ${CLAIMED_COLUMNS}
  )${CLAIMED_WITH_ENDPOINT}`;

/**
 * Stores attempts and applies each one's change to its event, for many events at once: one array parameter
 * per column, an element per attempt, at most one per event (recordingRounds). An event changes only where
 * its guards hold: still PENDING (`guard_pending`), still held by this claim (`guard_lease`: its
 * next_attempt_at is the lease's end). `locked` locks the events it may change in the lock order (at the top of
 * this file), and the update reaches only rows it has returned; an attempt alone (no change) takes only the key-share
 * lock of its foreign key, which no writer waits for.
 */
const RECORD = `WITH input AS (
    SELECT * FROM unnest($1::text[], $2::text[], $3::int[], $4::text[], $5::text[], $6::text[], $7::int[], $8::text[], $9::bool[], $10::int[],
                         $11::text[], $12::timestamptz[], $13::bool[], $14::text[], $15::timestamptz[], $16::timestamptz[], $17::bool[], $18::timestamptz[])
      AS i(attempt_id, event_id, attempt_number, kind, url, request_headers, response_status, response_body, response_body_truncated, latency_ms,
           error, started_at, apply, new_status, delivered_at, next_attempt_at, guard_pending, guard_lease)
  ), locked AS MATERIALIZED (
    SELECT id FROM events WHERE id IN (SELECT event_id FROM input WHERE apply) ORDER BY id FOR NO KEY UPDATE
  ), attempt AS (
    INSERT INTO webhook_delivery_attempts
      (id, event_id, attempt_number, kind, url, request_headers, response_status, response_body, response_body_truncated, latency_ms, error, started_at, created_at)
    SELECT attempt_id, event_id, attempt_number, kind::"DeliveryKind", url, request_headers::jsonb, response_status, response_body,
           response_body_truncated, latency_ms, error, started_at, $19
    FROM input
  )
  UPDATE events e SET delivery_status = COALESCE(i.new_status::"EventDeliveryStatus", e.delivery_status),
                      delivered_at = COALESCE(i.delivered_at, e.delivered_at), next_attempt_at = i.next_attempt_at
  FROM input i
  WHERE e.id = i.event_id AND e.id IN (SELECT id FROM locked) AND i.apply AND (NOT i.guard_pending OR e.delivery_status = 'PENDING') AND (i.guard_lease IS NULL OR e.next_attempt_at = i.guard_lease)
  RETURNING e.id`;

/** One attempt to record: the claim it was sent under, what it got, and what it does to the event. */
export interface Recording {
  claim: ClaimedDelivery;
  attempt: AttemptRecord;
  change: EventChange;
}

export class DeliveryStore {
  constructor(private readonly statements: PreparedStatements) {}

  /**
   * Claims the due automatic attempts of `eventIds`, each held until `leaseUntil`; an event with no attempt
   * due (delivered, exhausted, claimed by another worker) is missing from the answer.
   */
  async claimDue(eventIds: string[], now: Date, leaseUntil: Date): Promise<Map<string, ClaimedDelivery>> {
    const { rows } = await this.statements.run<ClaimRow>(CLAIM_DUE, [leaseUntil, eventIds, now]);
    return new Map(rows.map((row) => [row.id, claimedDelivery(row, now)]));
  }

  /** When the next automatic attempt of `eventId` is due (its time, or the end of the lease of the run that holds it); null unless it is PENDING (PENDING_ATTEMPT_AT). */
  async pendingAttemptAt(eventId: string): Promise<Date | null> {
    const { rows } = await this.statements.run<{ at: Date | null }>(PENDING_ATTEMPT_AT, [eventId]);
    return rows[0]?.at ?? null;
  }

  /** Claims an attempt outside the schedule (manual retry, test event), whatever the event's status. */
  async claimNow(eventId: string): Promise<ClaimedDelivery | null> {
    const claimedAt = new Date();
    const { rows } = await this.statements.run<ClaimRow>(CLAIM_NOW, [eventId]);
    return rows[0] === undefined ? null : claimedDelivery(rows[0], claimedAt);
  }

  /**
   * Stores the attempts and applies their changes to their events, in one statement (one per round of
   * recordingRounds, in one transaction, when an event comes twice); for each, whether its change applied (its
   * guards held; an `unchanged` one always counts as applied).
   */
  async record(recordings: Recording[], executor?: SqlExecutor): Promise<boolean[]> {
    const rounds = recordingRounds(recordings);
    if (rounds.length <= 1) return this.recordOnce(recordings, executor);
    const recordInTurn = async (connection: SqlExecutor) => {
      const applied: boolean[] = [];
      for (const round of rounds) {
        const answers = await this.recordOnce(
          round.map((index) => recordings[index]!),
          connection,
        );
        round.forEach((index, position) => (applied[index] = answers[position]!));
      }
      return applied;
    };
    return executor === undefined ? this.statements.transaction(recordInTurn) : recordInTurn(executor);
  }

  /** RECORD, for recordings of distinct events. */
  private async recordOnce(recordings: Recording[], executor?: SqlExecutor): Promise<boolean[]> {
    const now = new Date();
    const columns: unknown[][] = Array.from({ length: 18 }, () => []);
    for (const recording of recordings) recordRow(recording, now).forEach((value, index) => columns[index]!.push(value));
    const { rows } = await this.statements.run<{ id: string }>(RECORD, [...columns, now], executor);
    const changed = new Set(rows.map((row) => row.id));
    return recordings.map(({ claim, change }) => change.kind === 'unchanged' || changed.has(claim.eventId));
  }

  /**
   * 410 Gone: records the attempt, disables the endpoint of the event's mode, and makes the mode's pending
   * events NOT_SENT, in one transaction; answers the profile's merchant (whose cached profiles then go). In the
   * lock order (at the top of this file): the profile's row (two 410s for one endpoint queue there), then the
   * event and the mode's pending events in id order, before it changes any of them. An event that became pending
   * since is locked out of order by the last update: PreparedStatements.transaction runs it again on a deadlock.
   * Two cases write less. Another 410 disabled the endpoint first (deliveries in flight together): it keeps that
   * one's time and only records the attempt (the first's sweep made the event NOT_SENT). The URL was set anew
   * since the claim, so the 410 came from the endpoint the merchant left: it writes nothing, and the caller
   * records the attempt as any failed one, whose retry goes to the new URL.
   */
  async recordGone(claim: ClaimedDelivery, attempt: AttemptRecord): Promise<GoneRecorded> {
    const live = claim.mode === 'LIVE';
    const disabledAt = live ? 'live_webhook_disabled_at' : 'test_webhook_disabled_at';
    const url = live ? 'live_webhook_url' : 'test_webhook_url';
    return this.statements.transaction(async (connection) => {
      const { rows } = await connection.query<{ merchant_id: string; disabled: boolean; same_url: boolean }>(
        `SELECT merchant_id, ${disabledAt} IS NOT NULL AS disabled, ${url} IS NOT DISTINCT FROM $2 AS same_url
         FROM business_profiles WHERE id = $1 FOR NO KEY UPDATE`,
        [claim.profileId, claim.url],
      );
      const profile = rows[0]!;
      if (!profile.same_url) return { kind: 'url_changed' };
      if (profile.disabled) {
        await this.record([{ claim, attempt, change: { kind: 'not_sent' } }], connection);
        return { kind: 'already_disabled' };
      }
      await connection.query(`UPDATE business_profiles SET ${disabledAt} = now(), updated_at = now() WHERE id = $1`, [claim.profileId]);
      await connection.query(
        `SELECT id FROM events WHERE id = $1 OR (profile_id = $2 AND mode = $3::"Mode" AND delivery_status = 'PENDING') ORDER BY id FOR NO KEY UPDATE`,
        [claim.eventId, claim.profileId, claim.mode],
      );
      await this.record([{ claim, attempt, change: { kind: 'not_sent' } }], connection);
      await connection.query(
        `UPDATE events SET delivery_status = 'NOT_SENT', next_attempt_at = NULL WHERE profile_id = $1 AND mode = $2::"Mode" AND delivery_status = 'PENDING'`,
        [claim.profileId, claim.mode],
      );
      return { kind: 'disabled', merchantId: profile.merchant_id };
    });
  }
}

/** What recordGone did with a 410 (see there). */
export type GoneRecorded = { kind: 'disabled'; merchantId: string } | { kind: 'already_disabled' } | { kind: 'url_changed' };

function claimedDelivery(row: ClaimRow, claimedAt: Date): ClaimedDelivery {
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

/**
 * The recordings' indexes in rounds that each hold an event once: the first recording of each event, then the
 * second of those that have two, and so on. One statement cannot apply two changes to one row in turn (its
 * update would apply one, by the plan's choice, and both would read as applied), and a job run again while its
 * first run's record waits in the batcher puts two recordings of one event in a batch: in rounds, in the order
 * submitted, they apply as one after the other would.
 */
function recordingRounds(recordings: Recording[]): number[][] {
  const rounds: number[][] = [];
  const seen = new Map<string, number>();
  recordings.forEach(({ claim }, index) => {
    const round = seen.get(claim.eventId) ?? 0;
    seen.set(claim.eventId, round + 1);
    (rounds[round] ??= []).push(index);
  });
  return rounds;
}

/** What a change does to its event: whether it applies, the new status and times (null: left as they are), its guards. */
function eventChange(change: EventChange, now: Date) {
  const to = (newStatus: 'DELIVERED' | 'FAILED' | 'NOT_SENT' | null, nextAttemptAt: Date | null, guardPending: boolean, guardLease: Date | null) => ({
    apply: true,
    newStatus,
    deliveredAt: newStatus === 'DELIVERED' ? now : null,
    nextAttemptAt,
    guardPending,
    guardLease,
  });
  switch (change.kind) {
    case 'delivered':
      return to('DELIVERED', null, false, null);
    case 'retry_at':
      return to(null, change.nextAttemptAt, true, change.leaseUntil);
    case 'exhausted':
      return to('FAILED', null, true, change.leaseUntil);
    case 'failed':
      return to('FAILED', null, true, null);
    case 'not_sent':
      return to('NOT_SENT', null, true, null);
    case 'unchanged':
      return { ...to(null, null, false, null), apply: false };
  }
}

/** One recording's values of RECORD's array parameters $1 to $18, in order. */
function recordRow({ claim, attempt, change }: Recording, now: Date): unknown[] {
  const event = eventChange(change, now);
  return [
    newId('deliveryAttempt'),
    claim.eventId,
    claim.attemptNumber,
    attempt.kind,
    attempt.url,
    JSON.stringify(attempt.requestHeaders),
    attempt.responseStatus,
    storable(attempt.responseBody),
    attempt.responseBodyTruncated,
    Math.round(attempt.latencyMs),
    storable(attempt.error),
    claim.claimedAt,
    event.apply,
    event.newStatus,
    event.deliveredAt,
    event.nextAttemptAt,
    event.guardPending,
    event.guardLease,
  ];
}
