// The migration that keeps profile settings per mode: a profile written before it keeps every setting, in
// both modes, so existing merchants' test and live traffic behave as they did.
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, expect, inject, it } from 'vitest';
import { migrate, readMigrations } from '../../src/platform/db/migrate.ts';
import { ensureDatabase } from '../../src/platform/db/reachability.ts';

const PER_MODE = '20261125130000_profile_settings_per_mode';

const url = new URL(inject('databaseUrl'));
url.pathname = `${url.pathname}_modes${randomBytes(3).toString('hex')}`;
const sql = new pg.Client({ connectionString: url.toString() });

afterAll(async () => {
  await sql.end();
  const maintenance = new URL(url);
  maintenance.pathname = '/postgres';
  const client = new pg.Client({ connectionString: maintenance.toString() });
  await client.connect();
  await client.query(`DROP DATABASE IF EXISTS ${client.escapeIdentifier(url.pathname.slice(1))} WITH (FORCE)`);
  await client.end();
});

/** A directory with the project's migrations that come before `name`. */
async function migrationsBefore(name: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'migrations-'));
  for (const migration of await readMigrations()) {
    if (migration.name >= name) continue;
    await mkdir(join(dir, migration.name));
    await writeFile(join(dir, migration.name, 'migration.sql'), migration.sql);
  }
  return dir;
}

it('copies every setting of an existing profile to both modes', async () => {
  await ensureDatabase(url.toString());
  await migrate(url.toString(), await migrationsBefore(PER_MODE));
  await sql.connect();
  await sql.query(`INSERT INTO merchant_accounts (id, name, updated_at) VALUES ('mer_1', 'Shop', now())`);
  await sql.query(
    `INSERT INTO business_profiles (id, merchant_id, name, payment_response_hash_key_encrypted, routing, max_retries, retryable_decline_codes,
       session_expiry_seconds, allow_partial_authorization, surcharges, payout_limit, updated_at)
     VALUES ('pro_1', 'mer_1', 'default', 'v1.key', '{fauxpay,sandbox}', 4, '{card_declined}', 3600, true,
       '[{"paymentMethodType":"card","fixedAmount":30,"percentBps":250}]', 1000, now())`,
  );
  // The per-mode migration runs next; the ones after it (none of which touch profiles' settings) follow.
  expect((await migrate(url.toString()))[0]).toBe(PER_MODE);
  const { rows } = await sql.query('SELECT * FROM business_profiles');
  const settings = {
    payment_response_hash_key_encrypted: 'v1.key',
    routing: ['fauxpay', 'sandbox'],
    max_retries: 4,
    retryable_decline_codes: ['card_declined'],
    session_expiry_seconds: 3600,
    allow_partial_authorization: true,
    surcharges: [{ paymentMethodType: 'card', fixedAmount: 30, percentBps: 250 }],
    payout_limit: 1000,
  };
  for (const mode of ['test', 'live']) {
    expect(Object.fromEntries(Object.keys(settings).map((column) => [column, rows[0][`${mode}_${column}`]])), mode).toEqual(settings);
  }
});
