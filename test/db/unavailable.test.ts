// Which database errors mean "PostgreSQL cannot be reached" (the API answers SERVICE_UNAVAILABLE, retry
// later) and which are ordinary failures (INTERNAL): real errors from the real client, against a port
// where nothing listens. The outage itself is exercised in test/faults/postgres-restart.test.ts.
import { afterAll, describe, expect, inject, it } from 'vitest';
import { createDatabase } from '../../src/platform/db/client.ts';
import { isDatabaseUnavailable } from '../../src/platform/db/unavailable.ts';
import { closedPort } from '../support/stack.ts';

const nowhere = createDatabase(`postgresql://postgres@127.0.0.1:${await closedPort()}/nowhere`, 1);
afterAll(() => nowhere.$disconnect());

const failureOf = (promise: Promise<unknown>) =>
  promise.then(
    () => expect.fail('it should have failed'),
    (error: unknown) => error,
  );

describe('isDatabaseUnavailable', () => {
  it('recognises an unreachable server through the ORM, raw queries and transactions', async () => {
    expect(isDatabaseUnavailable(await failureOf(nowhere.apiKey.findUnique({ where: { id: 'key_x' } })))).toBe(true);
    expect(isDatabaseUnavailable(await failureOf(nowhere.$queryRaw`SELECT 1`))).toBe(true);
    expect(isDatabaseUnavailable(await failureOf(nowhere.$transaction(async (tx) => tx.apiKey.count())))).toBe(true);
  });

  it("recognises a saturated pool: no connection free within the transaction's maxWait", async () => {
    const busy = createDatabase(inject('databaseUrl'), 1);
    try {
      // The pool's one connection is held by a transaction that has started (its callback runs only once it
      // has the connection), and for as long as the test needs it, however slow the machine is.
      let release!: () => void;
      let holding!: Promise<void>;
      await new Promise<void>((started, failed) => {
        holding = busy.$transaction(() => new Promise<void>((resolve) => ((release = resolve), started())), { maxWait: 60_000, timeout: 60_000 });
        holding.catch(failed);
      });
      const refused = await failureOf(busy.$transaction(async (tx) => tx.apiKey.count(), { maxWait: 50 }));
      release();
      await holding;
      expect(refused).toMatchObject({ code: 'P2028' });
      expect(isDatabaseUnavailable(refused)).toBe(true);
      // The same code for a transaction used after it closed is a bug, and stays one.
      expect(isDatabaseUnavailable(Object.assign(new Error('Transaction already closed: the transaction was committed.'), { code: 'P2028' }))).toBe(false);
    } finally {
      await busy.$disconnect();
    }
  });

  it('waits for a pooled connection as long as DATABASE_TRANSACTION_MAX_WAIT_MS says, past Prisma’s own 2 s', async () => {
    const patient = createDatabase(inject('databaseUrl'), 1, 60_000);
    try {
      let release!: () => void;
      let holding!: Promise<void>;
      await new Promise<void>((started, failed) => {
        holding = patient.$transaction(() => new Promise<void>((resolve) => ((release = resolve), started())), { timeout: 60_000 });
        holding.catch(failed);
      });
      let settled = false;
      const waiting = patient.$transaction(async (tx) => tx.apiKey.count());
      void waiting.then(
        () => (settled = true),
        () => (settled = true),
      );
      // Longer than Prisma's default maxWait: with it, the second transaction would have failed by now (P2028).
      await new Promise((resolve) => setTimeout(resolve, 2_500));
      expect(settled).toBe(false);
      release();
      await holding;
      expect(await waiting).toEqual(expect.any(Number));
    } finally {
      await patient.$disconnect();
    }
  });

  it('recognises it wrapped (a GraphQL error’s originalError, a cause), and the server refusing while it starts or stops', () => {
    const wrapped = Object.assign(new Error('wrapped'), { originalError: new Error('Connection terminated unexpectedly') });
    expect(isDatabaseUnavailable(wrapped)).toBe(true);
    expect(isDatabaseUnavailable(new Error('outer', { cause: Object.assign(new Error('starting'), { code: '57P03' }) }))).toBe(true);
    expect(isDatabaseUnavailable({ code: 'P2010', meta: { driverAdapterError: { cause: { kind: 'postgres', originalCode: '57P01' } } } })).toBe(true);
  });

  it('leaves other failures alone: they stay internal errors', () => {
    expect(isDatabaseUnavailable(new Error('Cannot read properties of undefined'))).toBe(false);
    expect(isDatabaseUnavailable(Object.assign(new Error('injected fault'), { code: 'P0001' }))).toBe(false);
    expect(isDatabaseUnavailable({ code: 'P2002', meta: { driverAdapterError: { cause: { kind: 'UniqueConstraintViolation' } } } })).toBe(false);
    expect(isDatabaseUnavailable(null)).toBe(false);
  });
});
