// Idempotency records as a crash leaves them.
import type pg from 'pg';

/**
 * Makes the record of Idempotency-Key `key` look like a request whose process died `minutesAgo` minutes into it,
 * before storing its answer: claimed then, with no answer (what it wrote with its claim stays written).
 */
export async function diedBeforeAnswering(sql: pg.Client, key: string, minutesAgo: number): Promise<void> {
  await sql.query('UPDATE idempotency_records SET response_body = NULL, status_code = NULL, created_at = now() - make_interval(mins => $1) WHERE key = $2', [
    minutesAgo,
    key,
  ]);
}
