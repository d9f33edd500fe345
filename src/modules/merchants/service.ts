// Merchant accounts: created by the operator (admin key) with a default business profile and one test
// secret key and one test publishable key, all in one transaction.
import { notFound } from '../../kernel/errors.ts';
import { newId } from '../../kernel/ids.ts';
import type { BusinessProfile, MerchantAccount, Prisma } from '../../generated/prisma/client.ts';
import { issueApiKey } from './key-service.ts';
import { newSigningKeys } from './profile-service.ts';
import type { ServiceContext } from '../../platform/context.ts';
import { newProfileSettings } from './profile-settings.ts';
import { parseInput } from '../../kernel/validation.ts';
import { createMerchantInput, updateMerchantInput } from './inputs.ts';

export interface CreatedMerchant {
  merchant: MerchantAccount;
  businessProfile: BusinessProfile;
  secretKey: string;
  publishableKey: string;
  paymentResponseHashKey: string;
}

export class MerchantAccountService {
  constructor(private readonly context: ServiceContext) {}

  async create(rawInput: unknown): Promise<CreatedMerchant> {
    const input = parseInput(createMerchantInput, rawInput);
    const signingKeys = newSigningKeys();
    return this.context.db.$transaction(async (tx) => {
      const merchant = await tx.merchantAccount.create({ data: { id: newId('merchant'), name: input.name } });
      const businessProfile = await tx.businessProfile.create({
        data: {
          id: newId('businessProfile'),
          merchantId: merchant.id,
          name: 'default',
          isDefault: true,
          ...newProfileSettings(this.context.secretBox, signingKeys),
        },
      });
      const secret = await issueApiKey(tx, merchant.id, 'SECRET', 'TEST', 'default secret key');
      const publishable = await issueApiKey(tx, merchant.id, 'PUBLISHABLE', 'TEST', 'default publishable key');
      // The merchant has test keys only, so it is shown the test signing key; a live key it is given later
      // generates a new live one to learn it.
      return { merchant, businessProfile, secretKey: secret.key, publishableKey: publishable.key, paymentResponseHashKey: signingKeys.TEST };
    });
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
