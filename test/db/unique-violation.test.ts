// A unique key taken is recognised however the write was made: Prisma's own create (P2002) and a raw
// statement (P2010 carrying SQLSTATE 23505) and a statement sent without Prisma (node-postgres's own error, as
// a payment's single-statement insert fails). Real errors from the real database.
import { afterAll, describe, expect, inject, it } from 'vitest';
import { createDatabase } from '../../src/platform/db/client.ts';
import { isUniqueViolation } from '../../src/platform/db/unique-violation.ts';
import { newId } from '../../src/kernel/ids.ts';
import { Prisma } from '../../src/generated/prisma/client.ts';

const db = createDatabase(inject('databaseUrl'), 1);
afterAll(() => db.$disconnect());

const failureOf = (promise: Promise<unknown>) =>
  promise.then(
    () => expect.fail('it should have failed'),
    (error: unknown) => error,
  );

describe('isUniqueViolation', () => {
  it('recognises a taken key through the ORM and through a raw statement, and nothing else', async () => {
    const id = newId('merchant');
    await db.merchantAccount.create({ data: { id, name: 'unique key test' } });
    const throughOrm = await failureOf(db.merchantAccount.create({ data: { id, name: 'again' } }));
    const throughRaw = await failureOf(db.$executeRaw`INSERT INTO merchant_accounts (id, name, updated_at) VALUES (${id}, 'again', now())`);
    const prepared = await failureOf(db.prepared.query(Prisma.sql`INSERT INTO merchant_accounts (id, name, updated_at) VALUES (${id}, 'again', now())`));
    for (const error of [throughOrm, throughRaw, prepared]) {
      expect(isUniqueViolation(error)).toBe(true);
      expect(isUniqueViolation(error, 'merchant_accounts_pkey')).toBe(true);
      expect(isUniqueViolation(error, 'payment_intents_subscription_period_key')).toBe(false);
    }
    expect(
      isUniqueViolation(await failureOf(db.$executeRaw`INSERT INTO merchant_accounts (id, name, updated_at) VALUES (${newId('merchant')}, NULL, now())`)),
    ).toBe(false);
    expect(isUniqueViolation(await failureOf(db.$queryRaw`SELECT 1/0`))).toBe(false);
    expect(isUniqueViolation(await failureOf(db.prepared.query(Prisma.sql`SELECT 1/0`)))).toBe(false);
    expect(isUniqueViolation(new Error('duplicate'))).toBe(false);
    expect(isUniqueViolation(null)).toBe(false);
  });
});
