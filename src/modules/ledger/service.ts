// The ledger's use cases (docs/ledger.md). Captures are written by the payment's own commit (captureMovement,
// in the same statement); refunds, disputes and payouts call takeBack and payout inside the transaction of
// the change that moves the money, so a movement is never written without its change nor a change without
// its movement. Debits a platform member's balance cannot cover are refused (INSUFFICIENT_BALANCE) before
// anything is written; a dispute is the processor's to take and is written whatever the balance.
import { z } from 'zod';
import { AppError } from '../../kernel/errors.ts';
import type { Prisma, LedgerEntry, Mode } from '../../generated/prisma/client.ts';
import type { ServiceContext } from '../../platform/context.ts';
import { connectionPage, DEFAULT_PAGE_SIZE, olderThanCursor } from '../../platform/db/pagination.ts';
import type { SecretKeyPrincipal } from '../../kernel/principal.ts';
import { parseInput } from '../../kernel/validation.ts';
import { captureStep, capturedShares, takeBackStep, type PaymentTerms, type Share } from './allocation.ts';
import { ledgerEntriesInput } from './inputs.ts';
import { PlatformMembers } from '../merchants/index.ts';
import { balancesOf, captureSettlement, lockBalance, partyKey, recordMovement, sumOfSource, takenBackByParty, type Balance, type Movement } from './store.ts';

/** The columns of a payment the ledger reads: its terms, and where its money went. */
export interface LedgerPayment {
  id: string;
  merchantId: string;
  mode: Mode;
  currency: string;
  amount: number;
  surchargeAmount: number;
  applicationFeeAmount: number;
  splits: Prisma.JsonValue;
  initiatedByPlatformId: string | null;
}

const storedSplits = z.array(z.object({ merchantId: z.string(), amount: z.number().int() }));

/** The terms of `payment` as stored (payment_intents.splits holds what createPayment validated). */
export function termsOf(payment: LedgerPayment): PaymentTerms {
  return {
    merchantId: payment.merchantId,
    amount: payment.amount,
    surchargeAmount: payment.surchargeAmount,
    applicationFeeAmount: payment.applicationFeeAmount,
    feeMerchantId: payment.initiatedByPlatformId ?? payment.merchantId,
    splits: storedSplits.parse(payment.splits ?? []),
  };
}

/**
 * The movement of a payment's capture moving from `before` to `after` received (a first capture, or a capture
 * undone): written by the payment's commit, in its statement.
 */
export function captureMovement(
  payment: LedgerPayment,
  connectorAccountId: string | null,
  amounts: { before: number; after: number },
  at: Date,
  availableAt: Date = at,
): Movement {
  return {
    type: 'capture',
    sourceId: payment.id,
    paymentId: payment.id,
    mode: payment.mode,
    currency: payment.currency,
    connectorAccountId,
    credits: captureStep(termsOf(payment), amounts.before, amounts.after),
    availableAt,
    at,
  };
}

export class LedgerService {
  private readonly members = new PlatformMembers();

  constructor(
    private readonly context: ServiceContext,
    /** What balances are read as of (milliseconds): tests pass theirs to see pending money settle without waiting. */
    private readonly clock: () => number = Date.now,
  ) {}

  /**
   * Takes `amount` back from a captured payment for a refund or a dispute (a negative amount gives it back: a
   * refund that failed, a dispute won), each party in proportion to its share of `captured`. The caller
   * holds the payment's row lock, so what was taken back before is read as committed. Returns what each party
   * was credited (negative: what it gave back), for the processor to move the same (a refund's split).
   */
  async takeBack(
    tx: Prisma.TransactionClient,
    charge: { payment: LedgerPayment; captured: number; connectorAccountId: string },
    source: { type: 'refund' | 'dispute'; id: string; amount: number; settlesAt?: Date | null },
  ): Promise<Share[]> {
    const { payment } = charge;
    const terms = termsOf(payment);
    const held = capturedShares(terms, charge.captured);
    // One party (no fee, no splits) takes the whole step: no rounding, so nothing to read.
    const credits =
      held.length === 1 ? [{ ...held[0]!, amount: -source.amount }] : await this.sharedStep(tx, payment.id, terms, charge.captured, held, source.amount);
    const at = this.now();
    // A refund of money still pending (its capture settles later) comes out of that pending money: its rows are
    // available when the capture's are, and it is checked against the balance as it will be then. The processor
    // takes a dispute's money from what is available now, whatever is left; a refund is ours to refuse.
    const availableAt = source.settlesAt && source.settlesAt > at ? source.settlesAt : at;
    if (source.type === 'refund') await this.refuseOverdraw(tx, payment.mode, payment.currency, credits, availableAt);
    await recordMovement(tx, {
      type: source.type,
      sourceId: source.id,
      paymentId: payment.id,
      mode: payment.mode,
      currency: payment.currency,
      connectorAccountId: charge.connectorAccountId,
      credits,
      availableAt,
      at,
    });
    return credits;
  }

  /**
   * Sends a payout's amount out of its merchant's balance (`direction` out, refused beyond a platform member's
   * available balance) or back into it (the payout failed, was cancelled or expired, or the bank returned it).
   */
  async payout(
    tx: Prisma.TransactionClient,
    payout: { id: string; merchantId: string; mode: Mode; currency: string; amount: number; connectorAccountId: string | null },
    direction: 'out' | 'back',
  ): Promise<void> {
    // What goes back is what went out: nothing for a payout that never took any (one made before the ledger).
    const amount = direction === 'out' ? -payout.amount : -(await sumOfSource(tx, payout.id));
    if (amount === 0) return;
    const credits: Share[] = [{ merchantId: payout.merchantId, role: 'merchant', amount }];
    const at = this.now();
    if (direction === 'out') await this.refuseOverdraw(tx, payout.mode, payout.currency, credits, at);
    await recordMovement(tx, {
      type: 'payout',
      sourceId: payout.id,
      paymentId: null,
      mode: payout.mode,
      currency: payout.currency,
      connectorAccountId: payout.connectorAccountId,
      credits,
      availableAt: at,
      at,
    });
  }

  /** When the money a payment's capture credited becomes available (null: never captured): a refund comes out of it then. */
  settlementOf(paymentId: string, executor: Prisma.TransactionClient = this.context.db): Promise<Date | null> {
    return captureSettlement(executor, paymentId);
  }

  /** The merchant's balances in the key's mode; `merchantId` is the key's merchant or one connected to it. */
  async balances(principal: SecretKeyPrincipal, merchantId: string): Promise<Balance[]> {
    return balancesOf(this.context.db, merchantId, principal.mode, this.now());
  }

  /** The merchant's ledger entries in the key's mode, newest first. */
  async entries(principal: SecretKeyPrincipal, merchantId: string, rawInput: unknown) {
    const input = parseInput(ledgerEntriesInput, rawInput);
    const first = input.first ?? DEFAULT_PAGE_SIZE;
    const rows: LedgerEntry[] = await this.context.db.ledgerEntry.findMany({
      where: {
        merchantId,
        mode: principal.mode,
        ...(input.currency ? { currency: input.currency } : {}),
        ...(input.paymentId ? { paymentId: input.paymentId } : {}),
        ...olderThanCursor(input.after, 'ledgerEntry'),
      },
      orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
      take: first + 1,
    });
    return connectionPage(rows, first);
  }

  /** The ledger's now: the clock balances are read by, so a movement and a balance check agree on what is available. */
  private now(): Date {
    return new Date(this.clock());
  }

  /** The credits of a step of `amount` taken back from a payment shared among several parties (takeBackStep). */
  private async sharedStep(tx: Prisma.TransactionClient, paymentId: string, terms: PaymentTerms, captured: number, held: Share[], amount: number) {
    const taken = await takenBackByParty(tx, paymentId);
    const given = held.map((share) => taken.get(partyKey(share)) ?? 0);
    const total = given.reduce((a, b) => a + b, 0) + amount;
    return takeBackStep(terms, captured, given, total).map((share) => ({ ...share, amount: -share.amount }));
  }

  /**
   * Refuses, before anything is written, debits in `credits` that a platform member's available balance does
   * not cover. Each debited member's balance is locked (in merchant id order) and read after the lock, so two
   * debits never both spend the same money.
   */
  private async refuseOverdraw(tx: Prisma.TransactionClient, mode: Mode, currency: string, credits: readonly Share[], asOf: Date): Promise<void> {
    const debits = new Map<string, number>();
    for (const credit of credits) if (credit.amount < 0) debits.set(credit.merchantId, (debits.get(credit.merchantId) ?? 0) - credit.amount);
    if (debits.size === 0) return;
    const members = await this.members.among(tx, [...debits.keys()]);
    for (const merchantId of [...members].sort()) {
      await lockBalance(tx, merchantId, mode, currency);
      const available = (await balancesOf(tx, merchantId, mode, asOf, currency))[0]?.available ?? 0;
      const needed = debits.get(merchantId)!;
      if (available < needed) {
        throw new AppError(
          'INSUFFICIENT_BALANCE',
          `amount: merchant ${merchantId} needs ${needed} ${currency} of its available balance, which holds ${available}.`,
          {
            field: 'amount',
            merchantId,
            currency,
            available,
            needed,
          },
        );
      }
    }
  }
}
