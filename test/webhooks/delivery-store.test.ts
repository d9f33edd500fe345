// The worker's delivery writes (src/modules/events/store.ts) on a real database, with the interleavings a busy
// worker meets: a record batch and a 410's transaction that hold events of one profile lock them in one order
// (docs/architecture.md, "Database access"), and a batch that holds one event twice applies its recordings as
// if one came after the other.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import { newId } from '../../src/kernel/ids.ts';
import { WebhookDeliveryService, type DeliveryOutcome } from '../../src/modules/events/delivery.ts';
import type { WebhookResponse, WebhookSender } from '../../src/modules/events/sender.ts';
import { DeliveryStore, type AttemptRecord, type ClaimedDelivery, type EventChange } from '../../src/modules/events/store.ts';
import { createServiceContext } from '../../src/main/service-context.ts';
import { loadConfig } from '../../src/platform/config.ts';
import { PreparedStatements } from '../../src/platform/db/client.ts';
import { createLogger } from '../../src/platform/logger.ts';
import { createMerchant, startTestApi, testEnv, type TestApi } from '../support/api.ts';

let api: TestApi;
let pool: pg.Pool;
let sql: pg.Client;
let store: DeliveryStore;
/** Connections the store took from its pool: a transaction run again takes one more. */
let checkouts = 0;
beforeAll(async () => {
  api = await startTestApi();
  // Index scans only: the old, unordered statements then lock in a plan's order that meets the other writer in a
  // deadlock whatever the tables' sizes, so these tests fail on them on any machine.
  pool = new pg.Pool({ connectionString: inject('databaseUrl'), max: 4, options: '-c enable_seqscan=off -c enable_bitmapscan=off' });
  pool.on('acquire', () => (checkouts += 1));
  store = new DeliveryStore(new PreparedStatements(pool));
  sql = new pg.Client({ connectionString: inject('databaseUrl') });
  await sql.connect();
});
afterAll(async () => {
  await sql.end();
  await pool.end();
  await api.close();
});

/** Where the test merchants' test-mode events go. */
const ENDPOINT = 'https://receiver.example/hooks';

/** A merchant whose test-mode endpoint is ENDPOINT. */
async function merchantWithEndpoint() {
  const profile = await createMerchant(api);
  await setEndpoint(profile.profileId, ENDPOINT);
  return profile;
}

const setEndpoint = (profileId: string, url: string) => sql.query('UPDATE business_profiles SET test_webhook_url = $2 WHERE id = $1', [profileId, url]);

/** When the profile's test-mode endpoint was disabled; null while it is not. */
const disabledAt = async (profileId: string) =>
  (await sql.query<{ at: Date | null }>('SELECT test_webhook_disabled_at AS at FROM business_profiles WHERE id = $1', [profileId])).rows[0]!.at;

/** What an endpoint gone for good answers. */
const GONE: WebhookResponse = { kind: 'response', status: 410, body: 'gone', truncated: false, latencyMs: 1, retryAfterMs: null };

const answered = (status: number): AttemptRecord => ({
  kind: 'AUTOMATIC_RETRY',
  url: ENDPOINT,
  requestHeaders: {},
  responseStatus: status,
  responseBody: '',
  responseBodyTruncated: false,
  latencyMs: 3,
  error: null,
});

/** A test-mode event of `profile`, PENDING and held by a claim whose lease ends `leaseMs` from now (no worker's reconciler takes it). */
async function heldEvent(profile: { merchantId: string; profileId: string }, id: string, leaseMs: number, attemptNumber = 1) {
  const leaseUntil = new Date(Date.now() + leaseMs);
  await sql.query(
    `INSERT INTO events (id, merchant_id, profile_id, mode, event_type, content_type, object_id, object_version, body, delivery_status,
                         attempt_count, automatic_attempts, next_attempt_at)
     VALUES ($1, $2, $3, 'TEST', 'payment_succeeded', 'payment_details', $1, 1, '{}', 'PENDING', $4, $4, $5)`,
    [id, profile.merchantId, profile.profileId, attemptNumber, leaseUntil],
  );
  return { leaseUntil, claim: claimOf(profile.profileId, id, attemptNumber) };
}

const claimOf = (profileId: string, eventId: string, attemptNumber: number): ClaimedDelivery => ({
  eventId,
  claimedAt: new Date(),
  profileId,
  mode: 'TEST',
  body: '{}',
  traceParent: null,
  attemptNumber,
  automaticAttempts: attemptNumber,
  isTest: false,
  url: ENDPOINT,
  endpointDisabled: false,
  liveWebhookHosts: [],
  signingKeys: { paymentResponseHashKeyEncrypted: '', previousPaymentResponseHashKeyEncrypted: null, previousPaymentResponseHashKeyExpiresAt: null },
});

const retryAt = (leaseUntil: Date): EventChange => ({ kind: 'retry_at', nextAttemptAt: new Date(Date.now() + 600_000), leaseUntil });

/** Generous: on a busy 2-CPU machine a backend can take seconds to reach its lock. */
const POLL = { timeout: 15_000, interval: 20 };

/** The one backend that waits for a lock `pid` holds (or waits for ahead of it). */
const waitingFor = (pid: number) =>
  vi.waitFor(async () => {
    const { rows } = await sql.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid))', [pid]);
    expect(rows).toHaveLength(1);
    return rows[0]!.pid;
  }, POLL);

const eventsNamed = async (ids: string[]) =>
  (
    await sql.query<{ id: string; delivery_status: string; attempts: number[] }>(
      `SELECT e.id, e.delivery_status, array(SELECT attempt_number FROM webhook_delivery_attempts a WHERE a.event_id = e.id ORDER BY attempt_number) AS attempts
       FROM events e WHERE e.id = ANY($1) ORDER BY e.id`,
      [ids],
    )
  ).rows;

/**
 * A batch (`batch`, given the events h, a1, a2 in that order) and a 410 of another event of the profile, interleaved
 * so that each goes as far as it can before the other: another transaction holds h, so the batch stops there,
 * mid-statement, with what it locked before; the 410 goes on until it waits for the batch; then h is let go.
 * By id a1 < h < a2; on disk h comes first; by lease (the order of the index a scan of pending events takes) a2,
 * h, a1: a writer that locks them in any order but the ids' (the batch or the 410 in the order of a scan, or of
 * the batch) meets the other in a deadlock here. Answers how each ended, how many connections both took, and the
 * events (by id).
 */
async function batchBeside410(batch: (events: Array<Awaited<ReturnType<typeof heldEvent>>>) => Promise<unknown>) {
  const profile = await merchantWithEndpoint();
  const base = newId('event');
  const h = await heldEvent(profile, `${base}_3`, 70_000);
  const a2 = await heldEvent(profile, `${base}_4`, 60_000);
  const a1 = await heldEvent(profile, `${base}_2`, 80_000);
  const gone = await heldEvent(profile, `${base}_1`, 90_000);
  const holder = new pg.Client({ connectionString: inject('databaseUrl') });
  await holder.connect();
  try {
    const holderPid = (await holder.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
    await holder.query('BEGIN');
    await holder.query('SELECT 1 FROM events WHERE id = $1 FOR NO KEY UPDATE', [h.claim.eventId]);
    const before = checkouts;
    const batched = batch([h, a1, a2]);
    const batchPid = await waitingFor(holderPid);
    const disabling = store.recordGone(gone.claim, answered(410));
    await waitingFor(batchPid);
    await holder.query('COMMIT');
    const results = await Promise.allSettled([batched, disabling]);
    return {
      ended: results.map((result) => (result.status === 'fulfilled' ? 'done' : (result.reason as { code?: string }).code)),
      connections: checkouts - before,
      events: await eventsNamed([gone, a1, h, a2].map(({ claim }) => claim.eventId)),
    };
  } finally {
    await holder.end();
  }
}

describe('the delivery store', () => {
  // Each ran once: no deadlock was broken by rolling one of them back and running it again.
  const bothOnce = { ended: ['done', 'done'], connections: 2 };

  it('records a 410 beside a record batch of the same profile’s events without a deadlock: both lock the events in id order', async () => {
    const { events, ...outcome } = await batchBeside410((events) =>
      store.record(events.map(({ claim, leaseUntil }) => ({ claim, attempt: answered(500), change: retryAt(leaseUntil) }))),
    );
    expect(outcome).toEqual(bothOnce);
    // The batch's retries went first, then the 410 made every pending event of the profile NOT_SENT.
    expect(events.map((event) => [event.delivery_status, event.attempts])).toEqual(Array(4).fill(['NOT_SENT', [1]]));
  });

  it('records a 410 beside a claim batch of the same profile’s events without a deadlock: both lock the events in id order', async () => {
    // Claimed as if their attempts were due (`now` past their leases), which no worker's reconciler sees yet.
    const { events, ...outcome } = await batchBeside410((events) =>
      store.claimDue(
        events.map(({ claim }) => claim.eventId),
        new Date(Date.now() + 100_000),
        new Date(Date.now() + 200_000),
      ),
    );
    expect(outcome).toEqual(bothOnce);
    expect(events.map((event) => [event.delivery_status, event.attempts])).toEqual([['NOT_SENT', [1]], ...Array(3).fill(['NOT_SENT', []])]);
  });

  it('records a second 410 of an endpoint already disabled by a first: the attempt only, the first’s disabling time kept', async () => {
    const profile = await merchantWithEndpoint();
    const base = newId('event');
    const first = await heldEvent(profile, `${base}_1`, 90_000);
    const second = await heldEvent(profile, `${base}_2`, 90_000);
    expect(await store.recordGone(first.claim, answered(410))).toEqual({ kind: 'disabled', merchantId: profile.merchantId });
    const firstDisabledAt = await disabledAt(profile.profileId);
    expect(firstDisabledAt).not.toBeNull();
    // The worker invalidates cached profiles and logs the disabling only for the 410 that disabled.
    expect(await store.recordGone(second.claim, answered(410))).toEqual({ kind: 'already_disabled' });
    expect(await disabledAt(profile.profileId)).toEqual(firstDisabledAt);
    expect((await eventsNamed([first.claim.eventId, second.claim.eventId])).map((event) => [event.delivery_status, event.attempts])).toEqual([
      ['NOT_SENT', [1]],
      ['NOT_SENT', [1]],
    ]);
  });

  it('writes nothing for a 410 from an endpoint the merchant has left: the URL was set anew since the claim', async () => {
    const profile = await merchantWithEndpoint();
    const event = await heldEvent(profile, newId('event'), 90_000);
    await setEndpoint(profile.profileId, 'https://new-receiver.example/hooks');
    expect(await store.recordGone(event.claim, answered(410))).toEqual({ kind: 'url_changed' });
    expect(await disabledAt(profile.profileId)).toBeNull();
    // Still pending, with no attempt recorded: the caller records it as a failure, retried at the new URL.
    expect((await eventsNamed([event.claim.eventId])).map((row) => [row.delivery_status, row.attempts])).toEqual([['PENDING', []]]);
  });

  // A job run again after its lease ran out while its first run's record still waited in the batcher: the two
  // runs' records of the event may go in one batch, the first run's first.
  describe('applies a batch that holds one event twice as one recording after the other', () => {
    type Held = Awaited<ReturnType<typeof heldEvent>>;
    it.each<{ name: string; first: [number, (event: Held) => EventChange]; then: [number, (event: Held) => EventChange]; applied: boolean[] }>([
      {
        name: 'a delivery, then a later claim’s failure: the event stays delivered, and the failure is told it did not apply',
        first: [200, () => ({ kind: 'delivered' })],
        then: [500, (event) => retryAt(event.leaseUntil)],
        applied: [true, false],
      },
      {
        name: 'a failure under a lease that ran out, then the later claim’s delivery: only the delivery applies',
        first: [500, (event) => retryAt(new Date(event.leaseUntil.getTime() - 60_000))],
        then: [200, () => ({ kind: 'delivered' })],
        applied: [false, true],
      },
      {
        name: 'the endpoint gone from the first claim (not sent), then the later claim’s delivery: delivered',
        first: [0, () => ({ kind: 'not_sent' })],
        then: [200, () => ({ kind: 'delivered' })],
        applied: [true, true],
      },
    ])('$name', async ({ first, then, applied }) => {
      const profile = await merchantWithEndpoint();
      const event = await heldEvent(profile, newId('event'), 120_000, 2);
      const firstClaim = claimOf(profile.profileId, event.claim.eventId, 1);
      expect(
        await store.record([
          { claim: firstClaim, attempt: answered(first[0]), change: first[1](event) },
          { claim: event.claim, attempt: answered(then[0]), change: then[1](event) },
        ]),
      ).toEqual(applied);
      expect(await eventsNamed([event.claim.eventId])).toEqual([{ id: event.claim.eventId, delivery_status: 'DELIVERED', attempts: [1, 2] }]);
    });
  });
});

describe('the delivery service', () => {
  /** A service on its own context with `sender`; closed after `use`. */
  async function withDelivery(sender: WebhookSender, use: (delivery: WebhookDeliveryService) => Promise<void>) {
    const context = createServiceContext(loadConfig(testEnv()), createLogger('silent'));
    try {
      await use(new WebhookDeliveryService(context, sender));
    } finally {
      await context.db.$disconnect();
      await context.cache.close();
    }
  }

  it('records a 410 answered while the merchant set a new URL as a failed attempt, and leaves the new endpoint enabled', async () => {
    const profile = await merchantWithEndpoint();
    const event = await heldEvent(profile, newId('event'), 90_000);
    const sender: WebhookSender = {
      send: async () => {
        await setEndpoint(profile.profileId, 'https://new-receiver.example/hooks');
        return GONE;
      },
    };
    await withDelivery(sender, async (delivery) => expect(await delivery.sendNow(event.claim.eventId, 'MANUAL_RETRY')).toBe(false));
    expect(await disabledAt(profile.profileId)).toBeNull();
    expect((await eventsNamed([event.claim.eventId])).map((row) => [row.delivery_status, row.attempts])).toEqual([['PENDING', [2]]]);
  });

  it('records the 410s of one endpoint’s deliveries in flight together one at a time, so they do not each hold a connection queued on the profile', async () => {
    const profile = await merchantWithEndpoint();
    const base = newId('event');
    const events = await Promise.all([1, 2, 3, 4, 5, 6].map((n) => heldEvent(profile, `${base}_${n}`, 90_000)));
    // Every send waits until all are in flight, then all are answered 410 together.
    const answers: Array<() => void> = [];
    const sender: WebhookSender = {
      send: () =>
        new Promise((resolve) => {
          answers.push(() => resolve(GONE));
          if (answers.length === events.length) for (const answer of answers) answer();
        }),
    };
    let running = 0;
    let mostAtOnce = 0;
    const recordGone = DeliveryStore.prototype.recordGone;
    const spy = vi.spyOn(DeliveryStore.prototype, 'recordGone').mockImplementation(async function (this: DeliveryStore, ...args) {
      mostAtOnce = Math.max(mostAtOnce, (running += 1));
      try {
        return await recordGone.apply(this, args);
      } finally {
        running -= 1;
      }
    });
    try {
      await withDelivery(sender, async (delivery) =>
        expect(await Promise.all(events.map(({ claim }) => delivery.sendNow(claim.eventId, 'MANUAL_RETRY')))).toEqual(Array(6).fill(false)),
      );
      expect(spy).toHaveBeenCalledTimes(6);
      expect(mostAtOnce).toBe(1);
      expect((await eventsNamed(events.map(({ claim }) => claim.eventId))).map((event) => [event.delivery_status, event.attempts])).toEqual(
        Array(6).fill(['NOT_SENT', [2]]),
      );
    } finally {
      spy.mockRestore();
    }
  });

  it('sets a job again for its event’s next attempt when it is ahead (another run’s lease, or a time written by a clock ahead of this one), and ends it once the event is settled', async () => {
    const profile = await merchantWithEndpoint();
    const [lease, skew, settled, test] = await Promise.all([
      heldEvent(profile, newId('event'), 60_000),
      // A fresh event as an API whose clock runs 50 ms ahead of this worker's commits it.
      heldEvent(profile, newId('event'), 50),
      heldEvent(profile, newId('event'), 60_000),
      heldEvent(profile, newId('event'), 60_000),
    ]);
    await sql.query(`UPDATE events SET delivery_status = 'FAILED' WHERE id = $1`, [settled.claim.eventId]);
    await sql.query(`UPDATE events SET is_test = true WHERE id = $1`, [test.claim.eventId]);
    const sends: string[] = [];
    // A 500, not a 410: a send (of the skewed event, on a slow machine) must not disable the profile's endpoint.
    const sender: WebhookSender = { send: async (request) => (sends.push(request.url), { ...GONE, status: 500 }) };
    const delayOf = (outcome: DeliveryOutcome) => {
      expect(outcome.kind).toBe('retry');
      return (outcome as { delayMs: number }).delayMs;
    };
    await withDelivery(sender, async (delivery) => {
      // Due at the event's own time: not at once, and not left to the reconciler (up to 30 s late by default).
      const leaseDelay = delayOf(await delivery.deliverDue(lease.claim.eventId));
      expect(leaseDelay).toBeLessThanOrEqual(60_000);
      expect(leaseDelay).toBeGreaterThan(60_000 - POLL.timeout);
      const skewOutcome = await delivery.deliverDue(skew.claim.eventId);
      // Unless the 50 ms had passed by the claim (a slow machine), when it was sent there and then.
      if (sends.length === 0) expect(delayOf(skewOutcome)).toBeLessThanOrEqual(50);
      // A settled event ends its job whatever its next_attempt_at says; a test event's is its own request's to send.
      expect(await delivery.deliverDue(settled.claim.eventId)).toEqual({ kind: 'done' });
      expect(await delivery.deliverDue(test.claim.eventId)).toEqual({ kind: 'done' });
    });
    const untouched = (await eventsNamed([lease, settled, test].map(({ claim }) => claim.eventId))).map((event) => [event.delivery_status, event.attempts]);
    expect(untouched.sort()).toEqual([
      ['FAILED', []],
      ['PENDING', []],
      ['PENDING', []],
    ]);
  });
});
