// The worker's claim (src/modules/events/store.ts, CLAIM_DUE) reads its events by primary key alone, whatever
// PostgreSQL believes of the table. A backlog builds while an endpoint is down, after the table's last ANALYZE,
// so its statistics count next to no due events: a claim that let the planner weigh the (delivery_status,
// next_attempt_at) index would take it as cheap, and read the whole backlog for each claim (docs/architecture.md,
// "Database access"). The plans are read with EXPLAIN, never timed: generic and custom alike, since a prepared
// statement runs either.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLAIM_DUE } from '../../src/modules/events/store.ts';
import type { ScratchDatabase } from '../../src/platform/db/scratch-database.ts';
import { ownDatabase } from '../support/database.ts';
import { planNodes, type ExplainRow } from '../support/query-plans.ts';

let database: ScratchDatabase;
let sql: pg.Client;

/** `count` test-mode events of the profile, `status`, due now, ids `${prefix}<n>`. */
const insertEvents = (prefix: string, count: number, status: 'PENDING' | 'DELIVERED') =>
  sql.query(
    `INSERT INTO events (id, merchant_id, profile_id, mode, event_type, content_type, object_id, object_version, body, delivery_status,
                         attempt_count, automatic_attempts, next_attempt_at)
     SELECT $1 || n, 'mer_plan', 'pro_plan', 'TEST', 'payment_succeeded', 'payment_details', $1 || n, 1, '{}', $3::"EventDeliveryStatus", 0, 0,
            CASE WHEN $3 = 'PENDING' THEN now() - interval '1 second' END
     FROM generate_series(1, $2::int) AS n`,
    [prefix, count, status],
  );

beforeAll(async () => {
  database = await ownDatabase();
  sql = new pg.Client({ connectionString: database.url });
  await sql.connect();
  // The statistics stay as ANALYZE leaves them below: an autoanalyze between the inserts and the plans would
  // count the backlog, and the test would no longer tell the two statements apart.
  await sql.query('ALTER TABLE events SET (autovacuum_enabled = off)');
  await sql.query(`INSERT INTO merchant_accounts (id, name, updated_at) VALUES ('mer_plan', 'plan', now())`);
  await sql.query(
    `INSERT INTO business_profiles (id, merchant_id, name, test_payment_response_hash_key_encrypted, live_payment_response_hash_key_encrypted, updated_at)
     VALUES ('pro_plan', 'mer_plan', 'plan', 'sealed', 'sealed', now())`,
  );
  // The table as a quiet day leaves it: everything delivered, and analyzed so.
  await insertEvents('evt_done_', 20_000, 'DELIVERED');
  await sql.query('ANALYZE events');
  // Then an outage: a backlog the statistics have not seen.
  await insertEvents('evt_backlog_', 20_000, 'PENDING');
});

afterAll(async () => {
  await sql?.end();
  await database?.drop();
});

describe('the webhook claim’s plan under a backlog newer than the statistics', () => {
  it.each(['force_generic_plan', 'force_custom_plan'])('reads the events by primary key alone (%s)', async (planCacheMode) => {
    await sql.query(`SET plan_cache_mode = ${planCacheMode}`);
    await sql.query(`PREPARE claim AS ${CLAIM_DUE}`);
    try {
      const { rows } = await sql.query<ExplainRow>(
        `EXPLAIN (FORMAT JSON) EXECUTE claim(now() + interval '20 seconds', ARRAY['evt_backlog_7', 'evt_backlog_8', 'evt_backlog_9'], now())`,
      );
      const eventIndexes = planNodes(rows[0]!['QUERY PLAN'][0].Plan)
        .flatMap((node) => node['Index Name'] ?? [])
        .filter((name) => name.startsWith('events_'));
      expect(eventIndexes.length).toBeGreaterThan(0);
      expect(new Set(eventIndexes)).toEqual(new Set(['events_pkey']));
    } finally {
      await sql.query('DEALLOCATE claim');
    }
  });
});
