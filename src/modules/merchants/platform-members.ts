// Who belongs to which platform (docs/platforms.md), for the modules that act on a platform's behalf.
import type { Prisma } from '../../generated/prisma/client.ts';
import type { Database } from '../../platform/db/client.ts';
import type { SecretKeyPrincipal } from '../../kernel/principal.ts';
import type { Mode } from '../../kernel/api-keys.ts';

/** The platform a secret key speaks for: the platform acting for a connected merchant, or its own merchant if that is a platform; else null. */
export async function platformSpokenFor(db: Database, principal: SecretKeyPrincipal): Promise<string | null> {
  if (principal.platformMerchantId !== undefined) return principal.platformMerchantId;
  const merchant = await db.merchantAccount.findUnique({ where: { id: principal.merchantId }, select: { isPlatform: true } });
  return merchant?.isPlatform === true ? principal.merchantId : null;
}

/** Which of `merchantIds` are connected to `platformId`. */
export async function connectedAmong(db: Database, platformId: string, merchantIds: readonly string[]): Promise<Set<string>> {
  const rows = await db.merchantAccount.findMany({ where: { id: { in: [...merchantIds] }, platformMerchantId: platformId }, select: { id: true } });
  return new Set(rows.map((row) => row.id));
}

/** The accounts of `merchantIds` at processors in `mode` (docs/platforms.md, "Processor accounts"): by connector, then merchant. */
export async function processorAccountsOf(db: Database, merchantIds: readonly string[], mode: Mode): Promise<Map<string, Map<string, string>>> {
  const rows = await db.merchantProcessorAccount.findMany({ where: { merchantId: { in: [...merchantIds] }, mode } });
  const byConnector = new Map<string, Map<string, string>>();
  for (const row of rows) {
    let accounts = byConnector.get(row.connectorName);
    if (accounts === undefined) byConnector.set(row.connectorName, (accounts = new Map()));
    accounts.set(row.merchantId, row.accountId);
  }
  return byConnector;
}

/**
 * Which merchants belong to a platform (a platform or a connected merchant): their balances are never overdrawn.
 * Remembered per process: whether a merchant is a platform or connected is set when it is created, never changed.
 */
export class PlatformMembers {
  private readonly known = new Map<string, boolean>();

  async among(tx: Prisma.TransactionClient, merchantIds: readonly string[]): Promise<Set<string>> {
    const unknown = merchantIds.filter((id) => !this.known.has(id));
    if (unknown.length > 0) {
      const rows = await tx.merchantAccount.findMany({ where: { id: { in: unknown } }, select: { id: true, isPlatform: true, platformMerchantId: true } });
      for (const row of rows) this.known.set(row.id, row.isPlatform || row.platformMerchantId !== null);
    }
    return new Set(merchantIds.filter((id) => this.known.get(id) === true));
  }
}
