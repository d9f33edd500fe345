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

export const IDEMPOTENCY_WINDOW_MS = 24 * 60 * 60 * 1000;
export const MAX_IDEMPOTENCY_KEY_LENGTH = 255;
/**
 * How long a request may hold its key before a retry may take it over: far longer than any request
 * takes (processor calls time out long before), so only a request whose process died is taken over.
 * Taking over is safe because the operations themselves refuse to act twice (the state machines).
 */
export const IDEMPOTENCY_LEASE_MS = 5 * 60 * 1000;

export type IdempotencyStart = { kind: 'new' } | { kind: 'replay'; statusCode: number; body: string } | { kind: 'mismatch' } | { kind: 'in_progress' };

export class IdempotencyService {
  readonly #requestHashKey: Buffer;

  constructor(private readonly context: ServiceContext) {
    this.#requestHashKey = createHmac('sha256', context.config.encryptionKey).update('idempotency-request').digest();
  }

  /** The stored fingerprint of a request's canonical text. */
  requestHash(canonicalRequest: string): string {
    return createHmac('sha256', this.#requestHashKey).update(canonicalRequest).digest('hex');
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
    if (record.responseBody !== null && record.statusCode !== null) {
      return { kind: 'replay', statusCode: record.statusCode, body: this.context.secretBox.open(record.responseBody) };
    }
    // Still running, or its process died: a lease older than IDEMPOTENCY_LEASE_MS is taken over (one
    // taker wins: the update is guarded by the start time it read).
    if (now.getTime() - record.createdAt.getTime() < IDEMPOTENCY_LEASE_MS) return { kind: 'in_progress' };
    const taken = await db.idempotencyRecord.updateMany({ where: { scope, key, responseBody: null, createdAt: record.createdAt }, data: { createdAt: now } });
    return taken.count === 1 ? { kind: 'new' } : this.begin(scope, key, requestHash, now);
  }

  async complete(scope: string, key: string, statusCode: number, body: string): Promise<void> {
    const stored = await this.context.db.prepared.query(Prisma.sql`
      UPDATE idempotency_records SET status_code = ${statusCode}, response_body = ${this.context.secretBox.seal(body)} WHERE scope = ${scope} AND key = ${key}`);
    // begin claimed it, and only abandon deletes one (never this request's, which acted): a miss is a bug.
    if (stored.rowCount !== 1) throw new Error(`idempotency record ${scope}/${key} is gone before its response was stored`);
  }

  /** Forgets a request that did not execute (refused, invalid), so the key can be used again. */
  async abandon(scope: string, key: string): Promise<void> {
    await this.context.db.idempotencyRecord.deleteMany({ where: { scope, key, responseBody: null } });
  }
}
