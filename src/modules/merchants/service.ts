// Merchant accounts: created by the operator (admin key) with a default business profile and one test
// secret key and one test publishable key, all in one transaction; and a platform's connected merchants
// (docs/platforms.md), created by the platform's secret key with their default profile only.
import { AppError, notFound } from '../../kernel/errors.ts';
import type { SecretKeyPrincipal } from '../../kernel/principal.ts';
import type { Mode } from '../../kernel/api-keys.ts';
import { connectionPage, DEFAULT_PAGE_SIZE, olderThanCursor } from '../../platform/db/pagination.ts';
import { newId } from '../../kernel/ids.ts';
import type { BusinessProfile, MerchantAccount, Prisma } from '../../generated/prisma/client.ts';
import { issueApiKey } from './key-service.ts';
import { newSigningKeys } from './profile-service.ts';
import type { ServiceContext } from '../../platform/context.ts';
import { newProfileSettings } from './profile-settings.ts';
import { parseInput } from '../../kernel/validation.ts';
import { createConnectedMerchantInput, createMerchantInput, listConnectedMerchantsInput, setProcessorAccountInput, updateMerchantInput } from './inputs.ts';

export interface CreatedMerchant {
  merchant: MerchantAccount;
  businessProfile: BusinessProfile;
  secretKey: string;
  publishableKey: string;
  paymentResponseHashKey: string;
}

type Transaction = Prisma.TransactionClient;

export class MerchantAccountService {
  constructor(private readonly context: ServiceContext) {}

  /** A merchant (or a platform: docs/platforms.md) with its default profile and test keys (admin key). */
  async create(rawInput: unknown): Promise<CreatedMerchant> {
    const input = parseInput(createMerchantInput, rawInput);
    const signingKeys = newSigningKeys();
    return this.context.db.$transaction(async (tx) => {
      const { merchant, businessProfile } = await this.insertWithProfile(tx, { name: input.name, isPlatform: input.platform ?? false }, signingKeys);
      const secret = await issueApiKey(tx, merchant.id, 'SECRET', 'TEST', 'default secret key');
      const publishable = await issueApiKey(tx, merchant.id, 'PUBLISHABLE', 'TEST', 'default publishable key');
      // The merchant has test keys only, so it is shown the test signing key; a live key it is given later
      // generates a new live one to learn it.
      return { merchant, businessProfile, secretKey: secret.key, publishableKey: publishable.key, paymentResponseHashKey: signingKeys.TEST };
    });
  }

  /**
   * A merchant connected to the platform of the secret key, with its default profile and no keys: the platform acts
   * for it with its own key and X-Connected-Merchant-Id, and issues it keys that way if it wants (docs/platforms.md).
   */
  async createConnected(principal: SecretKeyPrincipal, rawInput: unknown): Promise<MerchantAccount> {
    const input = parseInput(createConnectedMerchantInput, rawInput);
    const platformId = await this.platformOf(principal);
    const signingKeys = newSigningKeys();
    return this.context.db.$transaction(async (tx) => {
      const { merchant } = await this.insertWithProfile(tx, { name: input.name, platformMerchantId: platformId }, signingKeys);
      // Its accounts at processors are the key's mode's, as everything the key creates.
      await tx.merchantProcessorAccount.createMany({
        data: (input.processorAccounts ?? []).map((account) => ({
          merchantId: merchant.id,
          mode: principal.mode,
          connectorName: account.connector,
          accountId: account.accountId,
        })),
      });
      return merchant;
    });
  }

  /**
   * Sets (or replaces) a connected merchant's account at a processor, in the key's mode: the platform's own secret key,
   * for one of its connected merchants; any other merchant is not found, whichever it is.
   */
  async setProcessorAccount(principal: SecretKeyPrincipal, rawInput: unknown): Promise<MerchantAccount> {
    const input = parseInput(setProcessorAccountInput, rawInput);
    const platformId = await this.platformOf(principal);
    const merchant = await this.context.db.merchantAccount.findFirst({ where: { id: input.merchantId, platformMerchantId: platformId } });
    if (merchant === null) throw notFound('connected merchant', input.merchantId);
    const key = { merchantId: merchant.id, mode: principal.mode, connectorName: input.connector };
    await this.context.db.merchantProcessorAccount.upsert({
      where: { merchantId_mode_connectorName: key },
      create: { ...key, accountId: input.accountId },
      update: { accountId: input.accountId },
    });
    return merchant;
  }

  /** The merchants connected to the platform of the secret key, newest first. */
  async listConnected(principal: SecretKeyPrincipal, rawInput: unknown) {
    const input = parseInput(listConnectedMerchantsInput, rawInput);
    const platformId = await this.platformOf(principal);
    const first = input.first ?? DEFAULT_PAGE_SIZE;
    const rows = await this.context.db.merchantAccount.findMany({
      where: { platformMerchantId: platformId, ...olderThanCursor(input.after, 'merchant') },
      orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
      take: first + 1,
    });
    return connectionPage(rows, first);
  }

  /** The merchant's accounts at processors in `mode`, by connector name. */
  async processorAccounts(merchantId: string, mode: Mode): Promise<{ connector: string; accountId: string }[]> {
    const rows = await this.context.db.merchantProcessorAccount.findMany({ where: { merchantId, mode }, orderBy: { connectorName: 'asc' } });
    return rows.map((row) => ({ connector: row.connectorName, accountId: row.accountId }));
  }

  /** The platform's id: the key's own merchant, when it is a platform and the key is not acting for another. */
  private async platformOf(principal: SecretKeyPrincipal): Promise<string> {
    const merchant = principal.platformMerchantId === undefined ? await this.get(principal.merchantId) : null;
    if (merchant?.isPlatform !== true) throw new AppError('FORBIDDEN', 'Only a platform’s secret key manages connected merchants (docs/platforms.md).');
    return merchant.id;
  }

  private async insertWithProfile(tx: Transaction, data: Omit<Prisma.MerchantAccountUncheckedCreateInput, 'id'>, signingKeys: Record<Mode, string>) {
    const merchant = await tx.merchantAccount.create({ data: { id: newId('merchant'), ...data } });
    const businessProfile = await tx.businessProfile.create({
      data: {
        id: newId('businessProfile'),
        merchantId: merchant.id,
        name: 'default',
        isDefault: true,
        ...newProfileSettings(this.context.secretBox, signingKeys),
      },
    });
    return { merchant, businessProfile };
  }

  /** `query` is the selection Pothos computed for the requested fields (relations load in the same query). */
  async get<Query extends Omit<Prisma.MerchantAccountFindUniqueArgs, 'where'>>(merchantId: string, query?: Query) {
    const merchant = await this.context.db.merchantAccount.findUnique({ ...query, where: { id: merchantId } });
    if (merchant === null) throw notFound('merchant account', merchantId);
    return merchant;
  }

  /** Operator settings of a merchant (admin key). */
  async update(rawInput: unknown): Promise<MerchantAccount> {
    const input = parseInput(updateMerchantInput, rawInput);
    await this.get(input.merchantId);
    return this.context.db.merchantAccount.update({
      where: { id: input.merchantId },
      data: input.liveWebhookHosts == null ? {} : { liveWebhookHosts: [...new Set(input.liveWebhookHosts)] },
    });
  }
}
