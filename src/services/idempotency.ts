// Idempotency records in PostgreSQL: the first request with a key runs and its response is kept for 24
// hours; the same request again gets that response; a different request with the key is refused; and a
// repeat while the first still runs is told to retry.
import type { ServiceContext } from './context.ts';

export const IDEMPOTENCY_WINDOW_MS = 24 * 60 * 60 * 1000;
export const MAX_IDEMPOTENCY_KEY_LENGTH = 255;

export type IdempotencyStart =
  | { kind: 'new' }
  | { kind: 'replay'; statusCode: number; body: string }
  | { kind: 'mismatch' }
  | { kind: 'in_progress' };

export class IdempotencyService {
  constructor(private readonly context: ServiceContext) {}

  async begin(scope: string, key: string, requestHash: string): Promise<IdempotencyStart> {
    const { db } = this.context;
    // An expired record no longer counts: remove it so the key starts afresh.
    await db.idempotencyRecord.deleteMany({ where: { scope, key, createdAt: { lt: new Date(Date.now() - IDEMPOTENCY_WINDOW_MS) } } });
    const inserted = await db.idempotencyRecord.createMany({ data: [{ scope, key, requestHash }], skipDuplicates: true });
    if (inserted.count === 1) return { kind: 'new' };
    const record = await db.idempotencyRecord.findUnique({ where: { scope_key: { scope, key } } });
    if (record === null) return this.begin(scope, key, requestHash); // completed-and-abandoned in between
    if (record.requestHash !== requestHash) return { kind: 'mismatch' };
    if (record.responseBody === null || record.statusCode === null) return { kind: 'in_progress' };
    return { kind: 'replay', statusCode: record.statusCode, body: record.responseBody };
  }

  async complete(scope: string, key: string, statusCode: number, body: string): Promise<void> {
    await this.context.db.idempotencyRecord.update({ where: { scope_key: { scope, key } }, data: { statusCode, responseBody: body } });
  }

  /** Forgets a request that did not execute (refused, invalid, failed), so the key can be used again. */
  async abandon(scope: string, key: string): Promise<void> {
    await this.context.db.idempotencyRecord.deleteMany({ where: { scope, key, responseBody: null } });
  }
}
