// A payment's row held by another transaction, as a refund or a dispute being opened holds it: what makes a
// request wait, and then meet whatever that transaction committed meanwhile.
import pg from 'pg';
import { expect, inject, vi } from 'vitest';

/**
 * Sends `request` while another transaction holds the payment's row; once the request waits for the row (`sql`
 * sees it waiting), `meanwhile` runs in that transaction, which then commits.
 */
export async function whileRowHeld<T>(
  sql: pg.Client,
  paymentId: string,
  request: () => Promise<T>,
  meanwhile: (holder: pg.Client) => Promise<void>,
): Promise<T> {
  const holder = new pg.Client({ connectionString: inject('databaseUrl') });
  await holder.connect();
  try {
    const holderPid = (await holder.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
    await holder.query('BEGIN');
    await holder.query('SELECT 1 FROM payment_intents WHERE id = $1 FOR UPDATE', [paymentId]);
    const answer = request();
    await vi.waitFor(
      async () => {
        const waiting = await sql.query("SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND $1 = ANY(pg_blocking_pids(pid))", [holderPid]);
        expect(waiting.rowCount).toBe(1);
      },
      { timeout: 10_000, interval: 20 },
    );
    await meanwhile(holder);
    await holder.query('COMMIT');
    return await answer;
  } finally {
    await holder.end();
  }
}
