// The benchmark's pgbench replay of createPayment (bench/sql/create-payment.pgbench) runs against the migrated
// schema, and the bench's drift check tells a renamed or added column apart, not only a changed verb or table.
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { scriptDrift, statementShape } from '../../bench/create-payment.ts';
import { hashApiKey } from '../../src/kernel/api-keys.ts';
import { createMerchant, startTestApiWithDatabase, type TestApiWithDatabase } from '../support/api.ts';

const SCRIPT = fileURLToPath(new URL('../../bench/sql/create-payment.pgbench', import.meta.url));

let api: TestApiWithDatabase;
beforeAll(async () => {
  api = await startTestApiWithDatabase();
});
afterAll(() => api.close());

describe('bench/sql/create-payment.pgbench', () => {
  it('runs its statements on the migrated database and writes a payment', async () => {
    const merchant = await createMerchant(api);
    const { rows } = await api.sql.query('SELECT id FROM api_keys WHERE key_hash = $1', [hashApiKey(merchant.secretKey)]);
    const variables = {
      key_hash: hashApiKey(merchant.secretKey),
      key_id: rows[0].id,
      merchant_id: merchant.merchantId,
      profile_id: merchant.profileId,
      request_hash: 'f'.repeat(64),
      response_body: 'v1.x',
    };
    const args = [
      '-n',
      '-M',
      'prepared',
      '-c',
      '1',
      '-t',
      '1',
      '-f',
      SCRIPT,
      ...Object.entries(variables).flatMap(([name, value]) => ['-D', `${name}=${value}`]),
    ];
    // pgbench exits non-zero, naming the statement, when one fails (a column the schema no longer has).
    await promisify(execFile)('pgbench', [...args, inject('databaseUrl')]);
    const { rows: payments } = await api.sql.query(`SELECT status FROM payment_intents WHERE merchant_id = $1 AND id LIKE 'pay_pgb%'`, [merchant.merchantId]);
    expect(payments).toEqual([{ status: 'REQUIRES_PAYMENT_METHOD' }]);
  });
});

describe('the bench’s drift check', () => {
  const profileRead = (column: string) =>
    `SELECT "public"."t"."id", "public"."t"."${column}" FROM "public"."t" WHERE ("public"."t"."id" = $1) LIMIT $2 OFFSET $3`;

  it('tells a statement that names another column from the service’s', () => {
    const drift = scriptDrift([statementShape(profileRead('test_routing'))], [statementShape(profileRead('routing').replace('$1', ':id'))]);
    expect(drift).toBe('statement 1 (SELECT t): columns the script lacks [test_routing], columns only the script names [routing]');
    const insert = (columns: string, values: string) => statementShape(`WITH x AS (INSERT INTO t (${columns}) VALUES (${values})) SELECT 1`);
    expect(scriptDrift([insert('id,amount,country', '$1,$2,$3')], [insert('id, amount', ':id, 1050')])).toContain('columns the script lacks [country]');
  });

  it('finds none when only the values differ', () => {
    expect(
      scriptDrift(
        [statementShape(profileRead('test_routing'))],
        [statementShape(profileRead('test_routing').replace('$1', ':id').replace('$2', '1').replace('$3', '0'))],
      ),
    ).toBeNull();
  });

  it('reads no column in a string literal (a JSON row sent as text)', () => {
    const rows = (json: string) => statementShape(`INSERT INTO t (id, subject) SELECT id, subject FROM jsonb_populate_recordset(NULL::t, ${json})`);
    expect(scriptDrift([rows('$1::jsonb')], [rows(`('[{"id": "' || :id || '", "subject": "intent"}]')::jsonb`)])).toBeNull();
  });
});
