// Platforms and their connected merchants through the public API (docs/platforms.md).
import { expect } from 'vitest';
import { CreateConnectedMerchantDocument, CreateMerchantAccountDocument } from '../gql/graphql.ts';
import type { ApiClient } from './api.ts';
import { dataOf, graphqlClient, type Execute } from './graphql-client.ts';

export const CONNECTED_MERCHANT_HEADER = 'X-Connected-Merchant-Id';

/** A client with `key` that sends X-Connected-Merchant-Id when `connectedMerchantId` is given. */
export function actingClient(api: ApiClient, key: string, connectedMerchantId?: string): Execute {
  const execute = graphqlClient(api.url, key);
  const acting: Record<string, string> = connectedMerchantId ? { [CONNECTED_MERCHANT_HEADER]: connectedMerchantId } : {};
  return (document, variables, headers = {}) => execute(document, variables, { ...acting, ...headers });
}

/** A platform merchant, as the operator creates it (admin key). */
export async function createPlatform(api: ApiClient, name: string) {
  const { createMerchantAccount } = dataOf(await api.admin(CreateMerchantAccountDocument, { input: { name, platform: true } }));
  expect(createMerchantAccount.merchant).toMatchObject({ isPlatform: true, platformMerchantId: null });
  return { merchantId: createMerchantAccount.merchant.id, secretKey: createMerchantAccount.secretKey, publishableKey: createMerchantAccount.publishableKey };
}

/** A merchant connected to `platform`, created with the platform's secret key. */
export async function connectMerchant(api: ApiClient, platform: { secretKey: string }, name: string) {
  return dataOf(await actingClient(api, platform.secretKey)(CreateConnectedMerchantDocument, { input: { name } })).createConnectedMerchant;
}
