// Idempotency records in PostgreSQL: the first request with a key runs and its response is kept for 24
// hours; the same request again gets that response; a different request with the key is refused; and a
// repeat while the first still runs is told to retry.
//
// What is stored says nothing to a reader of the database: the request is an HMAC keyed from
// ENCRYPTION_KEY (a plain hash of a body with a card number in it could be brute-forced), and the response
// is sealed (it may carry a one-time API key or a hash key).
import { createHmac } from 'node:crypto';
import type { ServiceContext } from '../context.ts';
import { Prisma } from '../../generated/prisma/client.ts';
import { AppError } from '../../kernel/errors.ts';
import { Batcher } from '../batcher.ts';
import { mayHaveCommitted } from '../db/write-witness.ts';

export const IDEMPOTENCY_WINDOW_MS = 24 * 60 * 60 * 1000;
export const MAX_IDEMPOTENCY_KEY_LENGTH = 255;
/**
 * How long a request may hold its key without answering: far longer than any request takes (processor calls time
 * out long before), so a record older than this with no answer is a request whose process died. Its key is never
 * run again within the key's 24 hours: the request may have acted (a payment inserted, a refund sent), so a retry is
 * told that its outcome is unknown, and that answer is kept under the key (`unfinished`; docs/architecture.md, "Idempotency").
 */
export const IDEMPOTENCY_LEASE_MS = 5 * 60 * 1000;

export type IdempotencyStart =
  | { kind: 'new' }
  | { kind: 'replay'; statusCode: number; body: string }
  | { kind: 'mismatch' }
  | { kind: 'in_progress' }
  /** The key's request stopped without answering, its lease run out: answer for it with `keep` under `claimedAt`. */
  | { kind: 'unfinished'; claimedAt: Date };

/**
 * The GraphQL field extension that marks a mutation whose first write carries its request's claim on the key
 * (IdempotencyClaim): its resolver hands `context.idempotencyClaim` to that write.
 */
export const CLAIM_ON_FIRST_WRITE = 'idempotencyClaimOnFirstWrite';

interface KeptResponse {
  scope: string;
  key: string;
  /** When the holder's claim was written: a row claimed again since (its record expired) is not this answer's. */
  claimedAt: Date;
  statusCode: number;
  sealedBody: string;
}

/**
 * The statement storing a batch of answers, one array per column (one text, prepared whatever the batch's size); it
 * returns the position (from 1) of each answer stored.
 */
const KEEP_RESPONSES = `UPDATE idempotency_records AS record SET status_code = kept.status_code, response_body = kept.response_body
  FROM unnest($1::text[], $2::text[], $3::timestamptz[], $4::int[], $5::text[]) WITH ORDINALITY AS kept (scope, key, created_at, status_code, response_body, n)
  WHERE record.scope = kept.scope AND record.key = kept.key AND record.created_at = kept.created_at AND record.response_body IS NULL
  RETURNING kept.n`;

/** A claim's row in idempotency_records, as the statement of an operation's first write inserts it (CLAIMS_INSERT). */
export interface ClaimRow {
  scope: string;
  key: string;
  requestHash: string;
  createdAt: Date;
  /** The request's answer, when the write was held until it was known (IdempotencyClaim.holdFirstWrite); else stored after. */
  answer: SealedAnswer | null;
}

/** An answer as idempotency_records keeps it: its body sealed. */
export interface SealedAnswer {
  statusCode: number;
  sealedBody: string;
}

/**
 * The claims a statement of first writes carries (one write's, or a batch's), for its WITH list; its parameters $1 to
 * $6 are `claimColumns` (a claim's answer in the last two, or nulls), and it returns the claims it took. A key with any record is not taken (the statement goes on,
 * and writes nothing of the request that lost it), and the record, expired or not, is then read by `take` as if this
 * request had come second. A key another statement is taking waits for that one's commit or rollback.
 */
export const CLAIMS_INSERT = `INSERT INTO idempotency_records (scope, key, request_hash, created_at, status_code, response_body)
    SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::timestamptz[], $5::int[], $6::text[])
    ON CONFLICT (scope, key) DO NOTHING RETURNING scope, key`;

/** CLAIMS_INSERT's parameters, an array per column. */
export const claimColumns = (claims: readonly ClaimRow[]): unknown[] => [
  claims.map((claim) => claim.scope),
  claims.map((claim) => claim.key),
  claims.map((claim) => claim.requestHash),
  claims.map((claim) => claim.createdAt),
  claims.map((claim) => claim.answer?.statusCode ?? null),
  claims.map((claim) => claim.answer?.sealedBody ?? null),
];

export class IdempotencyService {
  readonly #requestHashKey: Buffer;
  /**
   * Answers are stored by group commit (platform/batcher.ts): the requests that finish while a batch is on its way
   * store theirs with the next one, one statement for all (docs/architecture.md, "Idempotency").
   */
  readonly #keptResponses: Batcher<KeptResponse, boolean>;

  constructor(private readonly context: ServiceContext) {
    this.#requestHashKey = createHmac('sha256', context.config.encryptionKey).update('idempotency-request').digest();
    this.#keptResponses = new Batcher((responses) => this.#keep(responses), { maxSize: 100, maxInFlight: 2 });
  }

  /** The stored fingerprint of a request's canonical text. */
  requestHash(canonicalRequest: string): string {
    return createHmac('sha256', this.#requestHashKey).update(canonicalRequest).digest('hex');
  }

  /** A claim on `key` for a request with this fingerprint, not yet taken. */
  claim(scope: string, key: string, requestHash: string): IdempotencyClaim {
    return new IdempotencyClaim(this, scope, key, requestHash);
  }

  /** An answer as a claim's row carries it (ClaimRow). */
  sealedAnswer(statusCode: number, body: string): SealedAnswer {
    return { statusCode, sealedBody: this.context.secretBox.seal(body) };
  }

  /** `scope` is who sent the request (an API key's id): keys never share records. */
  async begin(scope: string, key: string, requestHash: string, now = new Date()): Promise<IdempotencyStart> {
    const { db } = this.context;
    // A new key, or one whose record has expired (it no longer counts: the key starts afresh), is claimed by
    // one statement, as every keyed mutation begins here; a live record claims nothing and is read below.
    const claim = await db.prepared.query(Prisma.sql`
      INSERT INTO idempotency_records (scope, key, request_hash, created_at) VALUES (${scope}, ${key}, ${requestHash}, ${now})
      ON CONFLICT (scope, key) DO UPDATE SET request_hash = EXCLUDED.request_hash, created_at = EXCLUDED.created_at, response_body = NULL, status_code = NULL
      WHERE idempotency_records.created_at < ${new Date(now.getTime() - IDEMPOTENCY_WINDOW_MS)}`);
    if (claim.rowCount === 1) return { kind: 'new' };
    const record = await db.idempotencyRecord.findUnique({ where: { scope_key: { scope, key } } });
    if (record === null) return this.begin(scope, key, requestHash, now); // abandoned in between
    if (record.requestHash !== requestHash) return { kind: 'mismatch' };
    // An answer is stored with its status code, always: a body is the record's answer (keep's test too).
    if (record.responseBody !== null) return { kind: 'replay', statusCode: record.statusCode ?? 500, body: this.context.secretBox.open(record.responseBody) };
    // Still running, or its process died (IDEMPOTENCY_LEASE_MS): never run again, as it may have acted.
    if (now.getTime() - record.createdAt.getTime() < IDEMPOTENCY_LEASE_MS) return { kind: 'in_progress' };
    return { kind: 'unfinished', claimedAt: record.createdAt };
  }

  /**
   * Stores the answer of the request holding `key` by its claim written at `claimedAt`; resolves once it is committed.
   * Its claim wrote the row; only abandon deletes one (never this request's, which acted), and only an answer for it
   * after IDEMPOTENCY_LEASE_MS (`unfinished`) fills it. So where the answer is not stored and the row holds another,
   * this request outlived its lease and a retry was told its outcome is unknown: that stays the key's answer, and
   * this request's own client still gets the true one (logged). A row gone or claimed again is a bug, thrown.
   */
  async complete(scope: string, key: string, claimedAt: Date, statusCode: number, body: string): Promise<void> {
    if (await this.keep(scope, key, claimedAt, statusCode, body)) return;
    const record = await this.context.db.idempotencyRecord.findUnique({
      where: { scope_key: { scope, key } },
      select: { createdAt: true, responseBody: true },
    });
    if (record?.responseBody == null || record.createdAt.getTime() !== claimedAt.getTime()) {
      throw new Error(`idempotency record ${scope}/${key} is gone or claimed again before its response was stored`);
    }
    // Its own answer, when a batch that did commit was reported failed and run again item by item (batcher.ts).
    if (this.context.secretBox.open(record.responseBody) !== body) {
      this.context.logger.warn({ scope, key, claimedAt }, 'a keyed request answered after its lease ran out; its key keeps the unknown outcome told meanwhile');
    }
  }

  /**
   * Stores an answer in the record of `key` written at `claimedAt` if it has none yet; resolves once it is committed,
   * to whether it was stored (a record answered meanwhile, or claimed again, keeps what it has).
   */
  keep(scope: string, key: string, claimedAt: Date, statusCode: number, body: string): Promise<boolean> {
    return this.#keptResponses.submit({ scope, key, claimedAt, ...this.sealedAnswer(statusCode, body) });
  }

  /** `keep` for a request that stopped without answering (`unfinished`), told to operators when it is the one kept. */
  async keepForUnfinished(scope: string, key: string, claimedAt: Date, statusCode: number, body: string): Promise<boolean> {
    const stored = await this.keep(scope, key, claimedAt, statusCode, body);
    if (stored)
      this.context.logger.warn({ scope, key, claimedAt }, 'a keyed request stopped without answering; its key now answers that its outcome is unknown');
    return stored;
  }

  /** Stores each answer of a batch; for each, whether it was stored (its record there, with no answer yet). */
  async #keep(batch: KeptResponse[]): Promise<boolean[]> {
    const claimOf = (scope: string, key: string, claimedAt: Date) => JSON.stringify([scope, key, claimedAt.getTime()]);
    // Two answers for one claim (retries answering for a request that stopped, or that request's own late answer):
    // only the first submitted is sent, so it is the one stored, and the others are told they were not.
    const sent = new Map<string, KeptResponse>();
    for (const response of batch) {
      const claim = claimOf(response.scope, response.key, response.claimedAt);
      if (!sent.has(claim)) sent.set(claim, response);
    }
    const responses = [...sent.values()];
    // Two batches update one row only for a request that stopped without answering: rare, and a deadlock between them
    // is survived (the batcher runs a failed batch again item by item).
    const { rows } = await this.context.db.prepared.run<{ n: string }>(KEEP_RESPONSES, [
      responses.map((response) => response.scope),
      responses.map((response) => response.key),
      responses.map((response) => response.claimedAt),
      responses.map((response) => response.statusCode),
      responses.map((response) => response.sealedBody),
    ]);
    const stored = new Set(rows.map((row) => responses[Number(row.n) - 1]));
    return batch.map((response) => stored.has(response));
  }

  /**
   * Stores an answer under a claim whose insert (made at `claimedAt`) may or may not have committed: in the row it
   * wrote if it did, and in a row of its own if it did not (an insert still running waits for this one, then finds the
   * key taken and writes nothing: CLAIMS_INSERT). A row claimed again since (its record expired) is left alone.
   */
  async completeClaim(claim: Pick<IdempotencyClaim, 'scope' | 'key' | 'requestHash'>, claimedAt: Date, statusCode: number, body: string): Promise<void> {
    await this.context.db.prepared.query(Prisma.sql`
      INSERT INTO idempotency_records (scope, key, request_hash, created_at, status_code, response_body)
      VALUES (${claim.scope}, ${claim.key}, ${claim.requestHash}, ${claimedAt}, ${statusCode}, ${this.context.secretBox.seal(body)})
      ON CONFLICT (scope, key) DO UPDATE SET status_code = EXCLUDED.status_code, response_body = EXCLUDED.response_body
      WHERE idempotency_records.request_hash = EXCLUDED.request_hash AND idempotency_records.created_at = EXCLUDED.created_at
        AND idempotency_records.response_body IS NULL`);
  }

  /** Forgets a request that did not execute (refused, invalid), so the key can be used again. */
  async abandon(scope: string, key: string): Promise<void> {
    await this.context.db.idempotencyRecord.deleteMany({ where: { scope, key, responseBody: null } });
  }
}

/**
 * A keyed request's claim on its key (docs/architecture.md, "Idempotency"). Usually taken by a statement of its
 * own before the operation runs (`take`). An operation marked CLAIM_ON_FIRST_WRITE takes it in the statement
 * of its first write instead, which carries `insertion()`: one round trip fewer. Until then it has written
 * nothing, so a key that turns out to be another request's (the statement takes no key and writes nothing of it)
 * costs only the reads done so far, and that request's record decides the answer, as if claimed first. Where the
 * answer is known from what the operation returns, without that write, the write may wait for it and carry it too
 * (`holdFirstWrite`), and the answer needs no statement of its own.
 */
export class IdempotencyClaim {
  /** `answered`: taken by a held write (holdFirstWrite), which kept the answer too, so nothing is left to settle. */
  #state: 'open' | 'taken' | 'answered' | 'lost' | 'uncertain' = 'open';
  /** When the claim's row was written (or its insert sent): the lease runs from then. */
  #claimedAt = new Date();
  /** The operation's first write, held until the request's answer is known (holdFirstWrite); the claim stays open meanwhile. */
  #heldWrite: ((claim: ClaimRow) => Promise<boolean>) | null = null;

  constructor(
    private readonly service: IdempotencyService,
    readonly scope: string,
    readonly key: string,
    readonly requestHash: string,
  ) {}

  /** Whether this request holds the key (its record is written, and its answer is kept there), or may (`settle`). */
  get mayHold(): boolean {
    return this.#state === 'taken' || this.#state === 'answered' || this.#state === 'uncertain';
  }

  /** Whether the operation's first write waits for the answer (holdFirstWrite): `writeHeld` makes it. */
  get holdsWrite(): boolean {
    return this.#heldWrite !== null;
  }

  /** Whether another request's record was found in its place (it may expire or be abandoned before `take` reads it). */
  get lost(): boolean {
    return this.#state === 'lost';
  }

  /** Whether the statement carrying the claim failed without saying if it committed (`carriedBy`). */
  get uncertain(): boolean {
    return this.#state === 'uncertain';
  }

  /** The claim's row, for the statement of the first write (CLAIMS_INSERT); null when there is no claim to carry (taken or lost). */
  insertion(): ClaimRow | null {
    this.#refuseWhileHeld();
    if (this.#state !== 'open') return null;
    this.#claimedAt = new Date();
    return { scope: this.scope, key: this.key, requestHash: this.requestHash, createdAt: this.#claimedAt, answer: null };
  }

  /**
   * Holds back the operation's first write, which carries the claim, until the request has its answer: `writeHeld` then
   * sends the claim's row with the answer through `write`, which resolves to whether it took the key (and wrote). Only
   * for an answer that reads nothing `write` stores, and as the operation's last step: nothing in the operation may
   * depend on the write having been made (until `writeHeld`, taking or carrying the claim throws). False, and nothing
   * held, when there is no claim to carry (taken or lost).
   */
  holdFirstWrite(write: (claim: ClaimRow) => Promise<boolean>): boolean {
    if (this.#state !== 'open' || this.#heldWrite !== null) return false;
    this.#heldWrite = write;
    return true;
  }

  /**
   * Makes the held write (holdFirstWrite) carrying the answer: the key is then taken with the answer kept (`answered`),
   * or lost to another request, whose record answers. A failure is thrown, the claim uncertain if it may have committed.
   */
  async writeHeld(statusCode: number, body: string): Promise<void> {
    const write = this.#heldWrite;
    if (write === null) throw new Error(`idempotency claim ${this.scope}/${this.key} has no write held`);
    this.#heldWrite = null;
    const claim = this.insertion()!;
    const wrote = await this.#carry(write({ ...claim, answer: this.service.sealedAnswer(statusCode, body) }), (took) => took);
    if (wrote) this.#state = 'answered';
  }

  /**
   * `statement` carried `insertion()` (CLAIMS_INSERT): the key is taken when it succeeds and `tookKey` reads from its
   * answer that it did, lost when it did not. A failure may have come after the commit (a connection lost
   * mid-statement): uncertain, unless the server answered it or no connection was made (mayHaveCommitted).
   */
  async carriedBy<T>(statement: Promise<T>, tookKey: (result: T) => boolean): Promise<T> {
    const result = await this.#carry(statement, tookKey);
    if (this.#state === 'lost') throw keyHeldElsewhere();
    return result;
  }

  /** Follows a statement carrying the claim (carriedBy, writeHeld) to the claim's state. */
  async #carry<T>(statement: Promise<T>, tookKey: (result: T) => boolean): Promise<T> {
    let result: T;
    try {
      result = await statement;
    } catch (error) {
      this.#state = mayHaveCommitted(error) ? 'uncertain' : 'open';
      throw error;
    }
    this.#state = tookKey(result) ? 'taken' : 'lost';
    return result;
  }

  /** Takes the key with a statement of its own: how the operation starts, or after it wrote nothing. */
  async take(): Promise<IdempotencyStart> {
    this.#refuseWhileHeld();
    this.#claimedAt = new Date();
    const start = await this.service.begin(this.scope, this.key, this.requestHash, this.#claimedAt);
    this.#state = start.kind === 'new' ? 'taken' : 'lost';
    return start;
  }

  /**
   * Settles the key once a request that may hold it (`mayHold`) has answered: its answer is kept if the operation
   * `mayHaveActed` (its answer says so, or it wrote: an answer after a write, a refusal or an outage included,
   * never frees the key), else the key is freed for a corrected retry. After an uncertain carrying statement the
   * answer is kept in its own row, whether or not that statement committed (`completeClaim`).
   */
  async settle(statusCode: number, body: string, mayHaveActed: boolean): Promise<void> {
    if (this.#state === 'uncertain') await this.service.completeClaim(this, this.#claimedAt, statusCode, body);
    else if (this.#state !== 'taken') throw new Error(`idempotency claim ${this.scope}/${this.key} settles a key it does not hold`);
    else if (mayHaveActed) await this.service.complete(this.scope, this.key, this.#claimedAt, statusCode, body);
    else await this.service.abandon(this.scope, this.key);
  }

  /**
   * Before a write that cannot carry `insertion()`: takes the key, or stops the operation if another request has it. Its
   * statement runs inside the operation, so it counts as the operation's write (WriteWitness): the answer is kept from then.
   */
  async takeBeforeWriting(): Promise<void> {
    this.#refuseWhileHeld();
    if (this.#state === 'open') await this.take();
    if (this.#state === 'lost') throw keyHeldElsewhere();
  }

  /** A write after the first was held would come before it, without the claim: a bug in the operation. */
  #refuseWhileHeld(): void {
    if (this.#heldWrite !== null) throw new Error(`idempotency claim ${this.scope}/${this.key}: the operation wrote after holding its first write`);
  }
}

/** What an operation stops with on a lost claim; its answer is never sent (the record's answer is). */
const keyHeldElsewhere = () => new AppError('CONFLICT', 'Another request holds this Idempotency-Key.');
