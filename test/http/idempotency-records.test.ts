// IdempotencyService's stored answers on the run's database: requests finishing together store theirs with one
// statement (group commit), each under its own key; a record gone before its answer fails that request alone;
// and a claim carried by the operation's first write keeps any answer once written, and after a statement that
// failed unseen keeps its answer in its own row, never in another request's. A first write held for its answer
// carries it, or leaves the key free when nothing was written.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { newId } from '../../src/kernel/ids.ts';
import { createServiceContext } from '../../src/main/service-context.ts';
import { runIdempotently } from '../../src/api/idempotent-graphql.ts';
import { loadConfig } from '../../src/platform/config.ts';
import {
  CLAIMS_INSERT,
  claimColumns,
  IDEMPOTENCY_LEASE_MS,
  IdempotencyService,
  type ClaimRow,
  type IdempotencyClaim,
} from '../../src/platform/http/idempotency.ts';
import { createLogger } from '../../src/platform/logger.ts';
import { WriteWitness, witnessing } from '../../src/platform/db/write-witness.ts';
import { testEnv } from '../support/api.ts';

const context = createServiceContext(loadConfig(testEnv()), createLogger('silent'));
let idempotency: IdempotencyService;
beforeAll(() => {
  idempotency = new IdempotencyService(context);
});
afterAll(async () => {
  await context.db.$disconnect();
  await context.cache.close();
});

/** `count` keys of one new scope, each claimed by a request of its own, and what each request answers. */
async function claimed(count: number) {
  const scope = newId('apiKey');
  const claimedAt = new Date();
  const requests = Array.from({ length: count }, (_, index) => ({
    key: `key-${index}`,
    hash: idempotency.requestHash(`request ${index}`),
    body: `{"n":${index}}`,
  }));
  for (const request of requests) expect(await idempotency.begin(scope, request.key, request.hash, claimedAt)).toEqual({ kind: 'new' });
  return { scope, claimedAt, requests };
}

describe('stored answers', () => {
  it('of requests finishing together go in one statement, each under its own key', async () => {
    const { scope, claimedAt, requests } = await claimed(20);
    const statements = vi.spyOn(context.db.prepared, 'run');
    try {
      await Promise.all(requests.map((request, index) => idempotency.complete(scope, request.key, claimedAt, 200 + index, request.body)));
      expect(statements).toHaveBeenCalledTimes(1);
    } finally {
      statements.mockRestore();
    }
    for (const [index, request] of requests.entries()) {
      expect(await idempotency.begin(scope, request.key, request.hash)).toEqual({ kind: 'replay', statusCode: 200 + index, body: request.body });
    }
  });

  it('fail only the request whose record is gone; the others in its batch are stored', async () => {
    const { scope, claimedAt, requests } = await claimed(3);
    await context.db.idempotencyRecord.delete({ where: { scope_key: { scope, key: requests[1]!.key } } });
    const outcomes = await Promise.allSettled(requests.map((request) => idempotency.complete(scope, request.key, claimedAt, 200, request.body)));
    expect(outcomes.map((outcome) => outcome.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect((outcomes[1] as PromiseRejectedResult).reason).toEqual(
      new Error(`idempotency record ${scope}/key-1 is gone or claimed again before its response was stored`),
    );
    expect(await idempotency.begin(scope, requests[0]!.key, requests[0]!.hash)).toMatchObject({ kind: 'replay', body: requests[0]!.body });
    expect(await idempotency.begin(scope, requests[2]!.key, requests[2]!.hash)).toMatchObject({ kind: 'replay', body: requests[2]!.body });
  });
});

describe('a request that stopped without answering', () => {
  it('holds its key for the lease, then is answered for once: that answer is kept, and the request’s own late one is not (nor refused)', async () => {
    const { scope, claimedAt, requests } = await claimed(1);
    const [request] = requests;
    const within = new Date(claimedAt.getTime() + IDEMPOTENCY_LEASE_MS - 1);
    const later = new Date(claimedAt.getTime() + IDEMPOTENCY_LEASE_MS + 1);
    expect(await idempotency.begin(scope, request!.key, request!.hash, within)).toEqual({ kind: 'in_progress' });
    // Never claimed again: the record is left as written, for one answer under the time it was claimed.
    expect(await idempotency.begin(scope, request!.key, request!.hash, later)).toEqual({ kind: 'unfinished', claimedAt });
    expect(await idempotency.keep(scope, request!.key, claimedAt, 500, '{"unknown":true}')).toBe(true);
    expect(await idempotency.keep(scope, request!.key, claimedAt, 500, '{"second":true}')).toBe(false);
    await expect(idempotency.complete(scope, request!.key, claimedAt, 200, '{"late":true}')).resolves.toBeUndefined();
    expect(await idempotency.begin(scope, request!.key, request!.hash, later)).toEqual({ kind: 'replay', statusCode: 500, body: '{"unknown":true}' });
  });

  it('keeps one answer of those for one claim in one batch, and says so only to the first', async () => {
    const { scope, claimedAt, requests } = await claimed(1);
    const [request] = requests;
    const kept = await Promise.all([
      idempotency.keep(scope, request!.key, claimedAt, 500, '{"first":true}'),
      idempotency.keep(scope, request!.key, claimedAt, 500, '{"second":true}'),
      idempotency.complete(scope, request!.key, claimedAt, 200, '{"late":true}').then(
        () => 'answered',
        (error: Error) => error.message,
      ),
    ]);
    expect(kept).toEqual([true, false, 'answered']);
    expect(await idempotency.begin(scope, request!.key, request!.hash)).toEqual({ kind: 'replay', statusCode: 500, body: '{"first":true}' });
  });

  it('is answered with what another retry kept first when that retry keeps its answer in between', async () => {
    const scope = newId('apiKey');
    const mutation = { kind: 'mutation' as const, canonical: 'a keyed mutation', rootFields: 1, claimOnFirstWrite: false };
    const hash = idempotency.requestHash(mutation.canonical);
    const claimedAt = new Date(Date.now() - IDEMPOTENCY_LEASE_MS - 1000);
    expect(await idempotency.begin(scope, 'key', hash, claimedAt)).toEqual({ kind: 'new' });
    // The other retry read the same record and keeps its answer just before this one does.
    const keep = idempotency.keep.bind(idempotency);
    const spy = vi.spyOn(idempotency, 'keep').mockImplementationOnce(async (...args) => {
      expect(await keep(scope, 'key', claimedAt, 500, '{"other":true}')).toBe(true);
      return keep(...args);
    });
    const execute = vi.fn();
    try {
      const answer = await runIdempotently(idempotency, scope, 'key', mutation, execute);
      expect(answer).toMatchObject({ status: 500, body: '{"other":true}', headers: { 'idempotent-replayed': 'true' } });
    } finally {
      spy.mockRestore();
    }
    expect(execute).not.toHaveBeenCalled();
  });
});

describe('a claim carried by the operation’s first write', () => {
  /** A claim of a new scope, and a statement carrying it as the first write would. */
  const claimOf = () => {
    const scope = newId('apiKey');
    const hash = idempotency.requestHash('request');
    const claim = idempotency.claim(scope, 'key', hash);
    return { scope, hash, claim, carrying: { text: CLAIMS_INSERT, values: claimColumns([claim.insertion()!]) } };
  };
  const lostOnTheWayBack = () => new Error('Connection terminated unexpectedly');

  it('keeps any answer once the write is done, a refusal or an outage included: the key is never freed after it', async () => {
    const { scope, hash, claim, carrying } = claimOf();
    // As runIdempotently settles: the answer says nothing was done, but the database saw the write.
    const witness = new WriteWitness();
    await witnessing(witness, () => claim.carriedBy(context.db.prepared.run(carrying.text, carrying.values), (answer) => answer.rows.length === 1));
    await claim.settle(503, '{"errors":[{"extensions":{"code":"SERVICE_UNAVAILABLE"}}]}', witness.wrote);
    expect(await idempotency.begin(scope, 'key', hash)).toMatchObject({ kind: 'replay', statusCode: 503 });
  });

  describe('whose statement failed without saying whether it committed', () => {
    it('keeps the answer in the row that statement wrote, if it committed: a retry replays it, not a second run', async () => {
      const { scope, hash, claim, carrying } = claimOf();
      const committed = context.db.prepared.run(carrying.text, carrying.values).then(() => Promise.reject(lostOnTheWayBack()));
      await expect(claim.carriedBy(committed, () => true)).rejects.toThrow('Connection terminated unexpectedly');
      expect(claim.mayHold).toBe(true);
      await claim.settle(500, '{"errors":[{"message":"Internal error"}]}', true);
      expect(await idempotency.begin(scope, 'key', hash)).toEqual({ kind: 'replay', statusCode: 500, body: '{"errors":[{"message":"Internal error"}]}' });
    });

    it('keeps it in a row of its own if not, so that statement arriving late takes nothing', async () => {
      const { scope, hash, claim, carrying } = claimOf();
      await expect(claim.carriedBy(Promise.reject(lostOnTheWayBack()), () => true)).rejects.toThrow('Connection terminated unexpectedly');
      await claim.settle(500, '{"errors":[]}', true);
      expect((await context.db.prepared.run(carrying.text, carrying.values)).rows).toEqual([]);
      expect(await idempotency.begin(scope, 'key', hash)).toEqual({ kind: 'replay', statusCode: 500, body: '{"errors":[]}' });
    });

    it.each([
      ['an error the server answered (a constraint)', Object.assign(new Error('violates foreign key constraint'), { code: '23503' })],
      ['no connection in time', new Error('timeout exceeded when trying to connect')],
      ['a refused connection', Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' })],
    ])('is not uncertain after %s: nothing was written, and the key is still to take', async (_case, error) => {
      const { claim } = claimOf();
      await expect(claim.carriedBy(Promise.reject(error), () => true)).rejects.toBe(error);
      expect(claim.mayHold).toBe(false);
      expect(claim.insertion()).not.toBeNull();
    });

    it('leaves alone a row another request has taken since', async () => {
      const { scope, hash, claim } = claimOf();
      await expect(claim.carriedBy(Promise.reject(lostOnTheWayBack()), () => true)).rejects.toThrow('Connection terminated unexpectedly');
      await new Promise((resolve) => setTimeout(resolve, 5)); // another millisecond: another claim
      expect(await idempotency.begin(scope, 'key', hash)).toEqual({ kind: 'new' });
      await claim.settle(500, '{"errors":[]}', true);
      expect(await context.db.idempotencyRecord.findUniqueOrThrow({ where: { scope_key: { scope, key: 'key' } } })).toMatchObject({ responseBody: null });
    });
  });
});

describe('a first write held for its answer (holdFirstWrite)', () => {
  const mutation = { kind: 'mutation' as const, canonical: 'a keyed createPayment', rootFields: 1, claimOnFirstWrite: true };
  const created = { status: 200, headers: {}, body: '{"data":{"createPayment":{"id":"pay_1"}}}' };
  /** A keyed run whose operation holds its first write, made by `write` with the claim's row (CLAIMS_INSERT's by default). */
  const runHolding = (scope: string, write?: (row: ClaimRow) => Promise<boolean>) => {
    const execute = vi.fn(async (claim?: IdempotencyClaim) => {
      expect(claim!.holdFirstWrite(write ?? insertClaim)).toBe(true);
      return created;
    });
    return { execute, answer: runIdempotently(idempotency, scope, 'key', mutation, execute) };
  };
  const insertClaim = async (row: ClaimRow) => (await context.db.prepared.run(CLAIMS_INSERT, claimColumns([row]))).rows.length === 1;

  it('takes the key and keeps the answer in one statement: a retry replays it, and no answer is stored after', async () => {
    const scope = newId('apiKey');
    const keep = vi.spyOn(idempotency, 'keep');
    try {
      expect(await runHolding(scope).answer).toEqual(created);
      expect(keep).not.toHaveBeenCalled();
    } finally {
      keep.mockRestore();
    }
    expect(await idempotency.begin(scope, 'key', idempotency.requestHash(mutation.canonical))).toEqual({ kind: 'replay', statusCode: 200, body: created.body });
  });

  it('that finds the key taken answers from its record, having written nothing', async () => {
    const scope = newId('apiKey');
    const claimedAt = new Date();
    expect(await idempotency.begin(scope, 'key', idempotency.requestHash(mutation.canonical), claimedAt)).toEqual({ kind: 'new' });
    expect(await idempotency.keep(scope, 'key', claimedAt, 200, '{"first":true}')).toBe(true);
    const { execute, answer } = runHolding(scope);
    expect(await answer).toMatchObject({ status: 200, body: '{"first":true}', headers: { 'idempotent-replayed': 'true' } });
    expect(execute).toHaveBeenCalledOnce();
  });

  it('lost on its way back after it committed: the failure is thrown, and the key keeps the answer the write carried', async () => {
    const scope = newId('apiKey');
    const { answer } = runHolding(scope, async (row) => {
      await insertClaim(row);
      throw new Error('Connection terminated unexpectedly');
    });
    await expect(answer).rejects.toThrow('Connection terminated unexpectedly');
    expect(await idempotency.begin(scope, 'key', idempotency.requestHash(mutation.canonical))).toEqual({ kind: 'replay', statusCode: 200, body: created.body });
  });

  it('lost on its way out, before it committed: nothing is kept, and the key is free for the retry', async () => {
    const scope = newId('apiKey');
    const { answer } = runHolding(scope, () => Promise.reject(new Error('Connection terminated unexpectedly')));
    await expect(answer).rejects.toThrow('Connection terminated unexpectedly');
    expect(await idempotency.begin(scope, 'key', idempotency.requestHash(mutation.canonical))).toEqual({ kind: 'new' });
  });

  it('refused by the server: nothing is written, the failure is thrown, and the key is free for the retry', async () => {
    const scope = newId('apiKey');
    const refused = Object.assign(new Error('sorry, too many clients already'), { code: '53300' });
    await expect(runHolding(scope, () => Promise.reject(refused)).answer).rejects.toBe(refused);
    expect(await idempotency.begin(scope, 'key', idempotency.requestHash(mutation.canonical))).toEqual({ kind: 'new' });
  });

  it('refuses any other write of the operation until it is made: that write would come first, without the claim', async () => {
    const claim = idempotency.claim(newId('apiKey'), 'key', idempotency.requestHash(mutation.canonical));
    expect(claim.holdFirstWrite(insertClaim)).toBe(true);
    expect(() => claim.insertion()).toThrow('the operation wrote after holding its first write');
    await expect(claim.takeBeforeWriting()).rejects.toThrow('the operation wrote after holding its first write');
    await claim.writeHeld(200, created.body);
    expect(claim.mayHold).toBe(true);
  });

  it('is not held by a claim already taken: its write carries nothing then', async () => {
    const claim = idempotency.claim(newId('apiKey'), 'key', idempotency.requestHash(mutation.canonical));
    expect(await claim.take()).toEqual({ kind: 'new' });
    expect(claim.holdFirstWrite(insertClaim)).toBe(false);
    expect(claim.holdsWrite).toBe(false);
  });
});
