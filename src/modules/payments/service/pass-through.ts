// What a platform's payment asks its processor to pay on (docs/platforms.md, "Processor accounts"): each share of
// the payment (the ledger's) that is not the connector account owner's is paid to its merchant's own account at
// that processor. Decided at confirm for every account routing offers, before anything is written: an account
// that cannot pay every share is skipped like an ineligible one, and the payment is refused when none can. The
// sandbox pays nothing on (our ledger only). What an attempt was asked to pay on is kept on it; a partial capture and
// every refund are split from it as the ledger shares them (docs/ledger.md, "What the processors move").
import { AppError } from '../../../kernel/errors.ts';
import { z } from 'zod';
import type { ConnectorAccount, PaymentAttempt } from '../../../generated/prisma/client.ts';
import type { Database } from '../../../platform/db/client.ts';
import { passThroughOf } from '../../connectors/index.ts';
import type { PaymentSplit, RefundSplit } from '../../connectors/port.ts';
import { capturedShares, termsOf, type LedgerPayment, type Share } from '../../ledger/index.ts';
import { processorAccountsOf } from '../../merchants/index.ts';

type Owner = Pick<ConnectorAccount, 'merchantId' | 'connectorName'>;
/** Merchants' accounts at processors: by connector name, then merchant id. */
type ProcessorAccounts = ReadonlyMap<string, ReadonlyMap<string, string>>;
/** Why an account cannot pay a payment's shares: the payment's field that names the share (when one does), and the merchant. */
interface Refusal {
  field: string | null;
  merchantId: string;
  message: string;
}

/** The shares of `payment` others than `owner` get, one per merchant, each with the field of the payment that gives it. */
function othersOf(payment: LedgerPayment, owner: string): { merchantId: string; amount: number; field: string | null }[] {
  const terms = termsOf(payment);
  const byMerchant = new Map<string, { merchantId: string; amount: number; field: string | null }>();
  for (const share of capturedShares(terms, terms.amount + terms.surchargeAmount)) {
    if (share.merchantId === owner) continue;
    const field =
      share.role === 'split'
        ? `splits.${terms.splits.findIndex((split) => split.merchantId === share.merchantId)}.merchantId`
        : share.role === 'application_fee'
          ? 'applicationFeeAmount'
          : null;
    const known = byMerchant.get(share.merchantId);
    if (known === undefined) byMerchant.set(share.merchantId, { merchantId: share.merchantId, amount: share.amount, field });
    else known.amount += share.amount;
  }
  return [...byMerchant.values()];
}

/** What `account` is asked to pay on of `payment` (undefined: nothing), or why it cannot. */
function splitAt(payment: LedgerPayment, account: Owner, accounts: ProcessorAccounts): { split: PaymentSplit | undefined } | { refusal: Refusal } {
  const capability = passThroughOf(account.connectorName);
  const others = capability === null ? [] : othersOf(payment, account.merchantId);
  if (capability === null || others.length === 0) return { split: undefined };
  const connector = account.connectorName;
  const first = others[0]!;
  // The connected merchant's own account, while its platform takes a fee or shares it out: only the platform's account pays others.
  if (account.merchantId === payment.merchantId && payment.initiatedByPlatformId !== null) {
    const message = `a payment with a platform fee or splits is paid on at ${connector} through the platform's connector account, not the merchant's own`;
    return { refusal: { ...first, message } };
  }
  if (others.length > capability.maxRecipients) {
    const message = `${connector} pays ${capability.maxRecipients} connected merchant per payment (a destination charge); this payment pays ${others.length}`;
    return { refusal: { field: 'splits', merchantId: first.merchantId, message } };
  }
  const known = accounts.get(connector);
  const missing = others.find((other) => !known?.has(other.merchantId));
  if (missing !== undefined) {
    const message = `merchant ${missing.merchantId} has no ${connector} ${capability.accountShape} to be paid its share at; its platform sets one with setConnectedMerchantProcessorAccount`;
    return { refusal: { ...missing, message } };
  }
  const recipients = others.map((other) => ({ merchantId: other.merchantId, accountId: known!.get(other.merchantId)!, amount: other.amount }));
  const charged = payment.amount + payment.surchargeAmount;
  return { split: { platformAmount: charged - recipients.reduce((sum, recipient) => sum + recipient.amount, 0), recipients } };
}

/**
 * The accounts among `candidates` (routing's order) that can pay on every share of `payment` (its surcharge as
 * this confirm fixes it), with what each is to pay on (by account id; absent: nothing); INVALID_STATE naming the
 * share when none can.
 */
export async function passThroughCandidates(
  db: Database,
  payment: LedgerPayment & { status: string },
  candidates: readonly ConnectorAccount[],
): Promise<{ accounts: ConnectorAccount[]; splits: ReadonlyMap<string, PaymentSplit> }> {
  const recipients = new Set(
    candidates
      .filter((account) => passThroughOf(account.connectorName) !== null)
      .flatMap((account) => othersOf(payment, account.merchantId))
      .map((other) => other.merchantId),
  );
  if (recipients.size === 0) return { accounts: [...candidates], splits: new Map() };
  const processorAccounts = await processorAccountsOf(db, [...recipients], payment.mode);
  const accounts: ConnectorAccount[] = [];
  const splits = new Map<string, PaymentSplit>();
  for (const account of candidates) {
    const outcome = splitAt(payment, account, processorAccounts);
    if ('refusal' in outcome) continue;
    accounts.push(account);
    if (outcome.split !== undefined) splits.set(account.id, outcome.split);
  }
  if (accounts.length > 0) return { accounts, splits };
  const outcome = splitAt(payment, candidates[0]!, processorAccounts);
  const { field, merchantId, message } = (outcome as { refusal: Refusal }).refusal;
  throw new AppError('INVALID_STATE', `This payment cannot be confirmed: ${field ?? 'its merchant'}: ${message}.`, {
    status: payment.status,
    merchantId,
    connector: candidates[0]!.connectorName,
    ...(field === null ? {} : { field }),
  });
}

/** PaymentAttempt.processorSplit as stored at confirm (a PaymentSplit). */
const storedSplit = z.object({
  platformAmount: z.number().int(),
  recipients: z.array(z.object({ merchantId: z.string(), accountId: z.string(), amount: z.number().int() })),
});

/** What the attempt asked its processor to pay on (stored at confirm); undefined when it paid nothing on. */
export function sentSplitOf(attempt: Pick<PaymentAttempt, 'processorSplit'>): PaymentSplit | undefined {
  return attempt.processorSplit === null ? undefined : storedSplit.parse(attempt.processorSplit);
}

/**
 * `sent`'s recipients paid their `shares` (the ledger's, of a total of `total`), one amount per merchant, the rest the
 * platform's: so that what the processor moves of a capture or refund is what the ledger moves.
 */
function splitOfShares(sent: PaymentSplit, shares: readonly Share[], total: number): PaymentSplit {
  // A merchant may hold two shares of one payment (its own and a split): it is paid both, as at authorization.
  const owed = new Map<string, number>();
  for (const share of shares) owed.set(share.merchantId, (owed.get(share.merchantId) ?? 0) + share.amount);
  const recipients = sent.recipients.map((recipient) => ({ ...recipient, amount: owed.get(recipient.merchantId) ?? 0 }));
  return { platformAmount: total - recipients.reduce((sum, recipient) => sum + recipient.amount, 0), recipients };
}

/**
 * What the processor pays on of `captured` (all that was captured of the payment): as `sent` at authorization when
 * all it charged was captured, else each recipient's share of the capture (the ledger's capturedShares). Authorization
 * fixed the fee and splits for all of it; the ledger shares only what was captured (docs/ledger.md).
 */
export function capturedSplit(payment: LedgerPayment, sent: PaymentSplit, captured: number): PaymentSplit {
  if (captured === payment.amount + payment.surchargeAmount) return sent;
  return splitOfShares(sent, capturedShares(termsOf(payment), captured), captured);
}

/**
 * The split of a refund of `amount` at the processor of an attempt that paid on (undefined when it did not): each
 * recipient gives back what the ledger's step of the refund (`credits`, negative: what each gives back) takes from it,
 * the platform the rest; with the split of the charge it refunds (what was captured of it).
 */
export function refundSplitOf(
  payment: LedgerPayment,
  attempt: Pick<PaymentAttempt, 'id' | 'processorSplit'>,
  captured: number,
  credits: readonly Share[],
  amount: number,
): RefundSplit | undefined {
  const sent = sentSplitOf(attempt);
  if (sent === undefined) return undefined;
  const givenBack = credits.map((credit) => ({ ...credit, amount: -credit.amount }));
  return { refund: splitOfShares(sent, givenBack, amount), charge: capturedSplit(payment, sent, captured), chargeReference: attempt.id };
}
