// What a platform's payment asks its processor to pay on (docs/platforms.md, "Processor accounts"): each share of
// the payment (the ledger's) that is not the connector account owner's is paid to its merchant's own account at
// that processor. Decided at confirm for every account routing offers, before anything is written: an account
// that cannot pay every share is skipped like an ineligible one, and the payment is refused when none can. The
// sandbox pays nothing on (our ledger only).
import { AppError } from '../../../kernel/errors.ts';
import type { ConnectorAccount } from '../../../generated/prisma/client.ts';
import type { Database } from '../../../platform/db/client.ts';
import { passThroughOf } from '../../connectors/index.ts';
import type { PaymentSplit } from '../../connectors/port.ts';
import { capturedShares, termsOf, type LedgerPayment } from '../../ledger/index.ts';
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
