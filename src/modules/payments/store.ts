// Reads payments and writes them. Every commit is one SQL statement guarded by the intent's version: it
// updates the intent and the attempt, writes a history row per attempt move and one for the intent's
// change, checks the intent's move against the intent table, and writes the outbox events the change
// emits (modules/events/catalog.ts); where the guard does not hold it writes nothing, and that is CONFLICT.
// A new payment is one statement too, shared with the payments created at the same time (group commit).
// Starting a new attempt (a retry) is the one other write: a transaction under the same guard, with no
// event (the attempt is about to be sent to its processor).
// This file is the only writer of payment_intents and payment_attempts: the changes refunds, disputes and
// the sync schedule make beside commits are its functions too (changedBeside), so each bumps the version.
import { AppError, notFound } from '../../kernel/errors.ts';
import { newId } from '../../kernel/ids.ts';
import type { AttemptTransition } from './machine/attempt.ts';
import { isIntentMoveAllowed, isNewAttemptMoveAllowed } from './machine/intent.ts';
import { intentStatusOf } from './machine/statuses.ts';
import { Prisma, type PaymentAttempt, type PaymentIntent, type PaymentStatusHistory } from '../../generated/prisma/client.ts';
import { Batcher } from '../../platform/batcher.ts';
import type { Database } from '../../platform/db/client.ts';
import { failedOnItsRows, unwitnessed, witnessShare } from '../../platform/db/write-witness.ts';
import { CLAIMS_INSERT, claimColumns, type ClaimRow, type IdempotencyClaim } from '../../platform/http/idempotency.ts';
import type { CommittedEvent, PreparedEvent, WrittenEventRow } from '../events/index.ts';
import { captureMovement, movementInsert } from '../ledger/index.ts';

export type Payment = PaymentIntent & { activeAttempt: PaymentAttempt };

/** What a refund or dispute copies of the charge it concerns: its payment, owner, attempt and where it was made. */
export function chargeOf(payment: PaymentIntent, attempt: PaymentAttempt) {
  return {
    paymentId: payment.id,
    merchantId: payment.merchantId,
    profileId: payment.profileId,
    mode: payment.mode,
    attemptId: attempt.id,
    connectorAccountId: attempt.connectorAccountId!,
    connectorName: attempt.connectorName!,
    processorMerchantId: attempt.processorMerchantId,
  };
}

/** What refunds and disputes check of a payment's money while they hold its row. */
export type LockedPayment = Pick<PaymentIntent, 'status' | 'amount' | 'surchargeAmount' | 'amountReceived' | 'amountRefunded' | 'currency'>;

/**
 * Locks a payment's row for the rest of `tx` and reads its money as committed when the lock was granted (a
 * locking SELECT returns the row's newest version), in one statement. Refunds and dispute openings both take
 * it first, so they queue on the row in one order and each sees what the one before it committed.
 */
export async function lockPayment(tx: Prisma.TransactionClient, paymentId: string): Promise<LockedPayment> {
  const [row] = await tx.$queryRaw<LockedPayment[]>`
    SELECT status, amount, surcharge_amount AS "surchargeAmount", amount_received AS "amountReceived", amount_refunded AS "amountRefunded", currency
    FROM payment_intents WHERE id = ${paymentId} FOR UPDATE`;
  if (row === undefined) throw notFound('payment', paymentId);
  return row;
}

/**
 * Reserves `amount` of the payment for a refund, in the refund's transaction after lockPayment (the
 * amount_refunded CHECK refuses an overdraw that got past the caller's check).
 */
export async function reserveRefund(tx: Prisma.TransactionClient, paymentId: string, amount: number): Promise<void> {
  await changedBeside(tx, paymentId, Prisma.sql`amount_refunded = amount_refunded + ${amount}, `);
}

/** Gives a failed refund's reservation back, in the transaction that records the refund FAILED. */
export async function releaseRefund(tx: Prisma.TransactionClient, paymentId: string, amount: number): Promise<void> {
  await changedBeside(tx, paymentId, Prisma.sql`amount_refunded = amount_refunded - ${amount}, `);
}

/**
 * Marks the payment changed without changing a field: a dispute was opened on it, so a void after capture
 * that read it before (and checked it had no dispute) fails with CONFLICT.
 */
export async function touchPayment(tx: Prisma.TransactionClient, paymentId: string): Promise<void> {
  await changedBeside(tx, paymentId);
}

/**
 * The change of a payment's intent row outside commit and startAttempt: `set` (each assignment followed by
 * a comma), and the version bump that makes a commit of the payment as read before it fail (see commit).
 */
async function changedBeside(executor: Database | Transaction, paymentId: string, set: Prisma.Sql = Prisma.empty): Promise<void> {
  const changed = await executor.$executeRaw`UPDATE payment_intents SET ${set}version = version + 1 WHERE id = ${paymentId}`;
  // Every caller has just read or locked the row: a payment that is not there is a bug, never a no-op.
  if (changed !== 1) throw notFound('payment', paymentId);
}

type Transaction = Prisma.TransactionClient;

/** How a payment's changes are told (payments/events.ts): the store writes the events it is given, then hands them on. */
export interface PaymentPublisher {
  /** The events `payment`'s status emits, ready to be written by the statement that commits it. */
  eventsOf(payment: Payment): PreparedEvent[];
  /** After commit: the change's events to the relay, the payment to live subscribers. Never fails the caller. */
  published(payment: Payment, events: CommittedEvent[]): void;
}

export interface Commit {
  moves: readonly AttemptTransition[];
  attempt?: Prisma.PaymentAttemptUncheckedUpdateInput;
  intent?: Prisma.PaymentIntentUncheckedUpdateInput;
  /** Who caused it: "key_…", "processor", "sync", "redirect". */
  actor: string;
  /**
   * Emit the event of the status the payment is in even though this commit does not change it: the
   * payment rests in PROCESSING where a processor call left it (see commit for the quiet pending state).
   */
  announce?: true;
  /** When a capture this commit records settles, if its processor reported a later date (ProcessorPayment.fundsAvailableAt). */
  fundsAvailableAt?: Date;
  /**
   * More writes the change entails, given the state it makes (a paid setup's saved card and mandate): null
   * when there are none, else the writes, run in the change's transaction, returning their events.
   */
  alsoInTransaction?: (after: Payment) => ((tx: Transaction) => Promise<CommittedEvent[]>) | null;
}

/** A new attempt of a payment: an automatic retry on the next connector, or a manual retry of a failed payment. */
export interface NewAttempt {
  /** The move that ends the current attempt (automatic retry), or none when it has already ended (manual retry). */
  closeMove: AttemptTransition | null;
  closeFields?: Prisma.PaymentAttemptUncheckedUpdateInput;
  /** The new attempt's fields; it starts PENDING, about to be sent to its connector. */
  attempt: Omit<
    Prisma.PaymentAttemptUncheckedCreateInput,
    'id' | 'paymentId' | 'attemptNumber' | 'status' | 'amount' | 'currency' | 'captureMethod' | 'authenticationType'
  >;
  intent?: Prisma.PaymentIntentUncheckedUpdateInput;
  trigger: 'retry' | 'manual_retry';
  actor: string;
}

/** Whether a commit's statement wrote: when its guard failed, every CTE matched no row (a keyed request's key is then freed: write-witness.ts). */
const changedOne = (answer: { rows: { changed: number }[] }) => answer.rows[0]?.changed === 1;

const staleVersion = (paymentId: string) => new AppError('CONFLICT', `Payment ${paymentId} was changed by another request; retry with its current state.`);

export class PaymentStore {
  /**
   * New payments, written by group commit (platform/batcher.ts): those created while a batch is on its way go in the
   * next, one statement and one commit for all (docs/architecture.md, "Database access").
   */
  readonly #inserts: Batcher<NewPaymentRows, boolean>;
  /** The keys claimed by the payments in #inserts: a second claim of one is lost without being sent (INSERT_PAYMENTS takes each key once). */
  readonly #keysInFlight = new Set<string>();

  constructor(
    private readonly db: Database,
    private readonly publisher: PaymentPublisher,
  ) {
    this.#inserts = new Batcher((batch) => this.#insertAll(batch), { maxSize: 64, maxInFlight: 2, runsAloneAfter: failedOnItsRows });
  }

  /**
   * The payment with its active attempt, as one statement reads them: both rows as of one moment, never a pair no
   * commit wrote (two parallel reads could pair a current intent with an older attempt, which the version guard
   * would not refuse). Prepared, in node-postgres: every column is an int4, text, enum, text[], jsonb or
   * timestamptz, which it reads as Prisma does (test/payments/store-find.test.ts).
   */
  async find(paymentId: string): Promise<Payment | null> {
    const [row] = (await this.db.prepared.run<Record<string, unknown>>(FIND_PAYMENT, [paymentId])).rows;
    if (row === undefined || row.activeAttemptId === null) return null;
    // Written together (insert, startAttempt) and never deleted: an active attempt missing is a bug, not "no payment".
    if (row['attempt.id'] === null) throw new Error(`payment ${paymentId}: its active attempt ${String(row.activeAttemptId)} is missing`);
    const intent: Record<string, unknown> = {};
    const activeAttempt: Record<string, unknown> = {};
    for (const field of INTENT_FIELDS) intent[field] = row[field];
    for (const field of ATTEMPT_FIELDS) activeAttempt[field] = row[`attempt.${field}`];
    return { ...(intent as PaymentIntent), activeAttempt: activeAttempt as PaymentAttempt };
  }

  async get(paymentId: string): Promise<Payment> {
    const payment = await this.find(paymentId);
    if (payment === null) throw notFound('payment', paymentId);
    return payment;
  }

  /**
   * Writes a new payment, its first attempt and their first history rows (every column is given, so `payment` is the
   * rows as written), then tells live subscribers (dashboards) of it. The statement also takes `idempotencyClaim` if
   * nothing has taken it yet, and writes nothing of this payment if another request holds the key. It is shared with
   * the payments created at the same time (INSERT_PAYMENTS). With `holdForAnswer` (the request's answer is the payment
   * as returned here, and reads nothing stored), the write waits for that answer and carries it
   * (IdempotencyClaim.holdFirstWrite): the payment is returned unwritten, and written before its answer is sent.
   */
  async insert(payment: Payment, actor: string, idempotencyClaim?: IdempotencyClaim, { holdForAnswer = false } = {}): Promise<Payment> {
    const { activeAttempt } = payment;
    const row = { paymentId: payment.id, actor, trigger: 'create', createdAt: payment.createdAt, fromStatus: null };
    const history: NewHistoryRow[] = [
      { ...row, attemptId: null, subject: 'intent', toStatus: payment.status },
      { ...row, attemptId: activeAttempt.id, subject: 'attempt', toStatus: activeAttempt.status },
    ];
    const rows = {
      // The intent's columns read from the payment itself: INTENT_COLUMNS has no activeAttempt, so no copy without it.
      intent: columnsRow(INTENT_COLUMNS, payment),
      attempt: columnsRow(ATTEMPT_COLUMNS, activeAttempt),
      history: history.map((historyRow) => columnsRow(HISTORY_COLUMNS, historyRow)),
    };
    if (holdForAnswer && idempotencyClaim?.holdFirstWrite((claim) => this.#heldInsert(payment, { ...rows, claim }))) return payment;
    const claim = idempotencyClaim?.insertion() ?? null;
    // A claim this statement cannot carry (a mandate's charge has written first; a run again after losing the key holds it):
    // taken first, or the charge stops here if another request holds the key.
    if (idempotencyClaim && !claim) await idempotencyClaim.takeBeforeWriting();
    // The batch's statement is this request's write as much as the others': its witness follows its share.
    const written = witnessShare(this.#submitted({ ...rows, claim }), (wrote) => wrote);
    await (claim ? idempotencyClaim!.carriedBy(written, (wrote) => wrote) : written);
    this.publisher.published(payment, []);
    return payment;
  }

  /** A held insert (IdempotencyClaim.holdFirstWrite), made once the request's answer rides with its claim. */
  async #heldInsert(payment: Payment, rows: NewPaymentRows): Promise<boolean> {
    const wrote = await this.#submitted(rows);
    if (wrote) this.publisher.published(payment, []);
    return wrote;
  }

  /**
   * `rows` in the next batch; resolves to whether they were written. A key this process is already claiming is the
   * first claimant's, so a second payment claiming it is answered lost without being sent: never part of a batch, it
   * cannot share that batch's failure either (a connection lost mid-statement would make its claim uncertain).
   */
  #submitted(rows: NewPaymentRows): Promise<boolean> {
    if (rows.claim === null) return this.#inserts.submit(rows);
    const key = claimKey(rows.claim);
    if (this.#keysInFlight.has(key)) return Promise.resolve(false);
    this.#keysInFlight.add(key);
    return this.#inserts.submit(rows).finally(() => this.#keysInFlight.delete(key));
  }

  /**
   * INSERT_PAYMENTS for a batch of new payments (no key claimed twice: #submitted); for each, whether it was written.
   * The claims go in one order, so two batches taking the same keys (two processes') queue rather than deadlock.
   */
  async #insertAll(batch: NewPaymentRows[]): Promise<boolean[]> {
    const claims = batch.flatMap((rows) => (rows.claim === null ? [] : [{ ...rows.claim, owner: rows.intent['id'], order: claimKey(rows.claim) }]));
    claims.sort((one, other) => (one.order < other.order ? -1 : 1));
    const { rows: lost } = await unwitnessed(() =>
      this.db.prepared.run<{ owner: string }>(INSERT_PAYMENTS, [
        ...claimColumns(claims),
        claims.map((claim) => claim.owner),
        JSON.stringify(batch.map((rows) => rows.intent)),
        JSON.stringify(batch.map((rows) => rows.attempt)),
        JSON.stringify(batch.flatMap((rows) => rows.history)),
      ]),
    );
    const lostIds = new Set(lost.map(({ owner }) => owner));
    return batch.map((rows) => !lostIds.has(rows.intent['id'] as string));
  }

  /**
   * Ends the active attempt (if it has not ended) and makes a new PENDING attempt the active one, in one
   * transaction guarded by the intent's version, with history rows for both attempts and the intent.
   */
  async startAttempt(payment: Payment, start: NewAttempt): Promise<Payment> {
    const now = new Date();
    const attemptId = newId('attempt');
    const intentFrom = payment.status;
    const intentTo = intentStatusOf('PENDING');
    if (!isNewAttemptMoveAllowed(intentFrom, intentTo)) {
      throw new Error(`a new attempt cannot move intent ${intentFrom} → ${intentTo} (not in the intent table)`);
    }
    const row = { paymentId: payment.id, actor: start.actor, createdAt: now };
    const history: NewHistoryRow[] = [];
    if (start.closeMove) {
      const { from, to, trigger } = start.closeMove;
      history.push({ ...row, attemptId: payment.activeAttempt.id, subject: 'attempt', fromStatus: from, toStatus: to, trigger });
    }
    history.push({ ...row, attemptId, subject: 'attempt', fromStatus: null, toStatus: 'PENDING', trigger: start.trigger });
    if (intentFrom !== intentTo)
      history.push({ ...row, attemptId: null, subject: 'intent', fromStatus: intentFrom, toStatus: intentTo, trigger: start.trigger });
    // The new attempt is about to be sent to its processor: a pending state, no event (see commit).
    const after = await this.db.$transaction(async (tx) => {
      const intent = await this.updateIntent(tx, payment, {
        ...start.intent,
        status: intentTo,
        activeAttemptId: attemptId,
        attemptCount: { increment: 1 },
        version: { increment: 1 },
        updatedAt: now,
      });
      if (start.closeMove) {
        await tx.paymentAttempt.update({ where: { id: payment.activeAttempt.id }, data: { ...start.closeFields, status: start.closeMove.to, updatedAt: now } });
      }
      const activeAttempt = await tx.paymentAttempt.create({
        data: {
          ...start.attempt,
          id: attemptId,
          paymentId: payment.id,
          attemptNumber: payment.attemptCount + 1,
          status: 'PENDING',
          amount: payment.amount,
          currency: payment.currency,
          captureMethod: payment.captureMethod,
          authenticationType: payment.authenticationType,
          createdAt: now,
          updatedAt: now,
        },
      });
      await tx.paymentStatusHistory.createMany({ data: history });
      return { ...intent, activeAttempt };
    });
    this.publisher.published(after, []);
    return after;
  }

  /** Applies `commit` to `payment` if nobody changed it since it was read; returns the new state. */
  async commit(payment: Payment, commit: Commit): Promise<Payment> {
    const attemptTo = commit.moves.at(-1)?.to ?? payment.activeAttempt.status;
    const now = new Date();
    const history: NewHistoryRow[] = [];
    for (const move of commit.moves) {
      const row = { paymentId: payment.id, trigger: move.trigger, actor: commit.actor, createdAt: now };
      history.push({ ...row, attemptId: payment.activeAttempt.id, subject: 'attempt', fromStatus: move.from, toStatus: move.to });
      const intentFrom = intentStatusOf(move.from);
      const intentTo = intentStatusOf(move.to);
      if (!isIntentMoveAllowed(intentFrom, intentTo)) {
        throw new Error(`intent move ${intentFrom} → ${intentTo} (attempt ${move.from} → ${move.to}) is not in the intent table`);
      }
      if (intentTo !== intentFrom) history.push({ ...row, attemptId: null, subject: 'intent', fromStatus: intentFrom, toStatus: intentTo });
    }
    // The pending state committed before a processor call (a move with an effect) is not news: the
    // merchant's endpoint hears where the call lands, and payment_processing only if the payment rests
    // there (announce). A refused void after capture is not news either: the payment was and stays paid.
    const quiet = commit.moves.some((move) => move.effect !== undefined || (move.from === 'VOID_POST_CHARGE_INITIATED' && move.to === 'CHARGED'));
    // The state after: every writer of a payment's rows bumps its version, so under the version guard the
    // rows are exactly `payment` plus what this commit sets, known before the statement runs. That lets the
    // events (whose bodies carry that state) be written by the same single statement.
    const intentFields = plainFields(commit.intent);
    const attemptFields = plainFields(commit.attempt);
    const after: Payment = {
      ...payment,
      ...(intentFields as Partial<PaymentIntent>),
      status: intentStatusOf(attemptTo),
      version: payment.version + 1,
      updatedAt: now,
      activeAttempt: { ...payment.activeAttempt, ...(attemptFields as Partial<PaymentAttempt>), status: attemptTo, updatedAt: now },
    };
    const events = commit.announce || (!quiet && after.status !== payment.status) ? this.publisher.eventsOf(after) : [];
    const guard = Prisma.sql`EXISTS (SELECT 1 FROM intent)`;
    // Money captured (or a capture undone) is a ledger movement, written by this same statement (docs/ledger.md).
    const ledger =
      after.amountReceived === payment.amountReceived
        ? null
        : movementInsert(
            captureMovement(
              payment,
              after.activeAttempt.connectorAccountId,
              { before: payment.amountReceived, after: after.amountReceived },
              now,
              commit.fundsAvailableAt,
            ),
            guard,
          );
    // The guard: the version read, the attempt it was read with, and (when it emits events) the profile
    // their rows are written for; where it does not hold, the statement writes nothing at all.
    const statement = Prisma.sql`
      WITH intent AS (
        UPDATE payment_intents SET ${assignments('intent', intentFields)} status = ${after.status}::"IntentStatus", version = version + 1, updated_at = ${now}
        WHERE id = ${payment.id} AND version = ${payment.version} AND active_attempt_id = ${payment.activeAttempt.id}
          ${events.length > 0 ? Prisma.sql`AND EXISTS (SELECT 1 FROM business_profiles WHERE id = ${payment.profileId})` : Prisma.empty}
        RETURNING id
      ), attempt AS (
        UPDATE payment_attempts SET ${assignments('attempt', attemptFields)} status = ${attemptTo}::"AttemptStatus", updated_at = ${now}
        WHERE id = ${payment.activeAttempt.id} AND payment_id = ${payment.id} AND ${guard} RETURNING id
      )${history.length > 0 ? Prisma.sql`, history AS (${historyInsert(history, guard)})` : Prisma.empty}
      ${ledger === null ? Prisma.empty : Prisma.sql`, ledger AS (${ledger})`}
      ${joined(events.map((event, index) => Prisma.sql`, ${Prisma.raw(`event_${index}`)} AS (${event.insert(guard)})`))}
      SELECT (SELECT count(*)::int FROM intent) AS changed, (SELECT count(*)::int FROM attempt) AS attempts,
             json_build_array(${Prisma.join([...events.map((_event, index) => Prisma.sql`(SELECT COALESCE(json_agg(written), '[]') FROM ${Prisma.raw(`event_${index}`)} written)`), Prisma.sql`NULL`])}) AS written`;
    type Result = { changed: number; attempts: number; written: WrittenEventRow[][] };
    // Alone, the statement is prepared (its text varies only by which fields and events a commit has: client.ts,
    // PreparedStatements); in a transaction it runs on the transaction's connection.
    const run = async (executor: Database | Transaction) => {
      const [result] =
        executor === this.db ? (await this.db.prepared.query<Result>(statement, changedOne)).rows : await executor.$queryRaw<Result[]>(statement);
      if (result!.changed !== 1) throw staleVersion(payment.id);
      // Both hold under the guard (an attempt row is never deleted; the profile was there): a miss is a bug,
      // which committed() throws for an event whose own row is missing (its copies are written by its insert).
      if (result!.attempts !== 1) throw new Error(`payment ${payment.id}: commit wrote ${result!.attempts} attempt rows`);
      return events.map((event, index) => event.committed(result!.written[index]!));
    };
    // One statement is its own transaction; writes the change entails beside it need a transaction around both.
    const also = commit.alsoInTransaction?.(after) ?? null;
    const committed = also ? await this.db.$transaction(async (tx) => [...(await run(tx)), ...(await also(tx))]) : await run(this.db);
    this.publisher.published(after, committed);
    return after;
  }

  /** Flags a payment whose sync schedule ran out while it still waits on its processor, for the merchant. */
  async markSyncExhausted(paymentId: string): Promise<void> {
    await changedBeside(this.db, paymentId, Prisma.sql`sync_exhausted_at = ${new Date()}, `);
  }

  /** The guarded update: only the version that was read may be changed. */
  private async updateIntent(tx: Transaction, payment: Payment, data: Prisma.PaymentIntentUncheckedUpdateManyInput): Promise<PaymentIntent> {
    const updated = await tx.paymentIntent.updateManyAndReturn({ where: { id: payment.id, version: payment.version }, data });
    if (updated.length === 0) throw staleVersion(payment.id);
    return updated[0]!;
  }
}

/**
 * What a commit sets, as plain values: Prisma.DbNull (a JSON column's SQL NULL) is null. Anything else
 * that is not a plain value (an increment, a nested write) is refused: the state after must be known.
 */
function plainFields(fields: Record<string, unknown> | undefined): Record<string, unknown> {
  const plain: Record<string, unknown> = {};
  for (const [field, value] of Object.entries(fields ?? {})) {
    if (value === undefined) continue;
    if (value === Prisma.DbNull) plain[field] = null;
    else if (value === null || value instanceof Date || ['string', 'number', 'boolean'].includes(typeof value) || isJson(value)) plain[field] = value;
    else throw new Error(`a commit sets ${field} to a value that is not a plain one`);
  }
  return plain;
}

/** A JSON object (for a Json column): plain objects, arrays and primitives all the way down. */
function isJson(value: unknown): boolean {
  return value !== null && typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype && Object.values(value).every(isJsonMember);
}
const isJsonMember = (value: unknown): boolean =>
  value === null || ['string', 'number', 'boolean'].includes(typeof value) || (Array.isArray(value) ? value.every(isJsonMember) : isJson(value));

/**
 * `column = value, ` for each field (the schema maps camelCase fields to snake_case columns). Values are
 * untyped parameters, so PostgreSQL reads each as its column's type (see parameter).
 */
function assignments(model: keyof typeof MODEL_FIELDS, fields: Record<string, unknown>): Prisma.Sql {
  return joined(Object.entries(fields).map(([field, value]) => Prisma.sql`${column(model, field)} = ${parameter(field, value)}, `));
}

/** The fields of each model (Prisma's generated enums), so only a field's name is ever spliced into SQL. */
const MODEL_FIELDS = { intent: Prisma.PaymentIntentScalarFieldEnum, attempt: Prisma.PaymentAttemptScalarFieldEnum } as const;

/** Each model's columns by field, made once: every payment write names dozens. */
const columnsOf = (fields: Record<string, string>) => new Map(Object.values(fields).map((field) => [field, Prisma.raw(columnOf(field))]));
const COLUMNS: Record<keyof typeof MODEL_FIELDS, ReadonlyMap<string, Prisma.Sql>> = {
  intent: columnsOf(MODEL_FIELDS.intent),
  attempt: columnsOf(MODEL_FIELDS.attempt),
};

function column(model: keyof typeof MODEL_FIELDS, field: string): Prisma.Sql {
  const named = COLUMNS[model].get(field);
  if (named === undefined) throw new Error(`${field} is not a field of the payment ${model}`);
  return named;
}

/** The list (PostgreSQL array) columns of the payment tables: every other array is a JSON column's (splits). */
const LIST_FIELDS: ReadonlySet<string> = new Set([Prisma.PaymentIntentScalarFieldEnum.connectors]);

/**
 * A value as a parameter: a JSON column's object or array as its text; a list column's array, a Date and a
 * primitive as they are (the driver sends arrays as PostgreSQL arrays, which a JSON column refuses).
 */
const parameter = (field: string, value: unknown): unknown =>
  value !== null && typeof value === 'object' && !(value instanceof Date) && !(Array.isArray(value) && LIST_FIELDS.has(field)) ? JSON.stringify(value) : value;

/** The parts one after another (Prisma.join refuses an empty list). */
const joined = (parts: Prisma.Sql[]): Prisma.Sql => (parts.length > 0 ? Prisma.join(parts, '') : Prisma.empty);

/** The column of a model field: prisma/schema.prisma maps every camelCase field to its snake_case column. */
export function columnOf(field: string): string {
  return field.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`);
}

const INTENT_FIELDS = Object.values(Prisma.PaymentIntentScalarFieldEnum);
const ATTEMPT_FIELDS = Object.values(Prisma.PaymentAttemptScalarFieldEnum);

/** PaymentStore.find's statement: every field of both rows under its model name, the attempt's prefixed "attempt.". */
const FIND_PAYMENT = `SELECT ${[
  ...INTENT_FIELDS.map((field) => `i.${columnOf(field)} AS "${field}"`),
  ...ATTEMPT_FIELDS.map((field) => `a.${columnOf(field)} AS "attempt.${field}"`),
].join(', ')} FROM payment_intents i LEFT JOIN payment_attempts a ON a.id = i.active_attempt_id WHERE i.id = $1`;

/** A new payment's rows as INSERT_PAYMENTS takes them, each by its columns, and the claim it carries if any. */
interface NewPaymentRows {
  claim: ClaimRow | null;
  intent: Record<string, unknown>;
  attempt: Record<string, unknown>;
  history: Record<string, unknown>[];
}

/** A new history row: every column but the id, which the table gives in write order (the order of a payment's history). */
type NewHistoryRow = Omit<PaymentStatusHistory, 'id' | 'subject'> & { subject: 'intent' | 'attempt' };

/**
 * The type of each history value in historyInsert's VALUES, whose parameters are otherwise untyped (created_at would be
 * text). Its keys are the columns of both history inserts (HISTORY_COLUMNS), in this order.
 */
const HISTORY_FIELD_TYPES: Record<keyof NewHistoryRow, 'text' | 'timestamptz'> = {
  paymentId: 'text',
  attemptId: 'text',
  subject: 'text',
  fromStatus: 'text',
  toStatus: 'text',
  trigger: 'text',
  actor: 'text',
  createdAt: 'timestamptz',
};

/** A claim's key, one string. */
const claimKey = (claim: ClaimRow) => JSON.stringify([claim.scope, claim.key]);

/** Each model's fields and their columns, in one order. */
const INTENT_COLUMNS = INTENT_FIELDS.map((field) => [field, columnOf(field)] as const);
const ATTEMPT_COLUMNS = ATTEMPT_FIELDS.map((field) => [field, columnOf(field)] as const);
const HISTORY_FIELDS = Object.keys(HISTORY_FIELD_TYPES) as (keyof NewHistoryRow)[];
const HISTORY_COLUMNS = HISTORY_FIELDS.map((field) => [field, columnOf(field)] as const);

/** A row by its columns, for jsonb_populate_recordset: every field of the model, so no column is left to a default. */
function columnsRow(columns: readonly (readonly [string, string])[], row: Record<string, unknown>): Record<string, unknown> {
  const byColumn: Record<string, unknown> = {};
  for (const [field, column] of columns) byColumn[column] = row[field];
  return byColumn;
}

const listOf = (columns: readonly (readonly [string, string])[]) => columns.map(([, column]) => column).join(', ');
const HISTORY_COLUMN_LIST = listOf(HISTORY_COLUMNS);

/**
 * New payments, any number of them (PaymentStore.insert): the claims they carry ($1 to $6: CLAIMS_INSERT; $7, the
 * payment carrying each), then the intents, attempts and history rows ($8, $9, $10) of every payment but those whose
 * claim was not taken (another request holds the key), which it returns. Rows are sent as a JSON array per table that
 * PostgreSQL reads as the table's row type, so the text is one whatever the batch (prepared once per connection) and
 * each value is read as its column's type. History rows keep their order (their ids order a payment's history).
 */
const INSERT_PAYMENTS = `WITH claim AS (${CLAIMS_INSERT}),
  lost AS (SELECT carried.owner FROM unnest($1::text[], $2::text[], $7::text[]) AS carried (scope, key, owner)
    WHERE NOT EXISTS (SELECT FROM claim WHERE claim.scope = carried.scope AND claim.key = carried.key)),
  intent AS (INSERT INTO payment_intents (${listOf(INTENT_COLUMNS)})
    SELECT ${listOf(INTENT_COLUMNS)} FROM jsonb_populate_recordset(NULL::payment_intents, $8::jsonb) AS row_of WHERE NOT EXISTS (SELECT FROM lost WHERE lost.owner = row_of.id)),
  attempt AS (INSERT INTO payment_attempts (${listOf(ATTEMPT_COLUMNS)})
    SELECT ${listOf(ATTEMPT_COLUMNS)} FROM jsonb_populate_recordset(NULL::payment_attempts, $9::jsonb) AS row_of WHERE NOT EXISTS (SELECT FROM lost WHERE lost.owner = row_of.payment_id)),
  history AS (INSERT INTO payment_status_history (${HISTORY_COLUMN_LIST})
    SELECT ${HISTORY_COLUMN_LIST} FROM jsonb_populate_recordset(NULL::payment_status_history, $10::jsonb) WITH ORDINALITY AS row_of
    WHERE NOT EXISTS (SELECT FROM lost WHERE lost.owner = row_of.payment_id) ORDER BY row_of.ordinality)
  SELECT owner FROM lost`;

/** Each history field with its type as SQL, made once. */
const HISTORY_CASTS = HISTORY_FIELDS.map((field) => [field, Prisma.raw(HISTORY_FIELD_TYPES[field])] as const);

/** The history rows, written where `condition` holds. */
function historyInsert(rows: NewHistoryRow[], condition: Prisma.Sql): Prisma.Sql {
  const values = rows.map((row) => Prisma.sql`(${Prisma.join(HISTORY_CASTS.map(([field, type]) => Prisma.sql`${row[field]}::${type}`))})`);
  return Prisma.sql`INSERT INTO payment_status_history (${Prisma.raw(HISTORY_COLUMN_LIST)})
    SELECT * FROM (VALUES ${Prisma.join(values)}) AS history_row WHERE ${condition}`;
}
