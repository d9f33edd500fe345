// updateConnectorAccount (docs/connectors/README.md, "Disabling an account"): a disabled account is no longer
// routed to, enabling it brings it back, and only the merchant's own accounts of the key's mode can be changed.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConnectorAccountsDocument, UpdateConnectorAccountDocument } from '../gql/graphql.ts';
import { dataOf, errorOf } from '../support/graphql-client.ts';
import { addConnectorAccount, merchantWithSandbox, startStack, type Stack } from '../support/stack.ts';
import { paidPayment } from '../support/webhooks.ts';

let stack: Stack;
beforeAll(async () => {
  stack = await startStack({ worker: false });
});
afterAll(() => stack.close());

describe('updateConnectorAccount', () => {
  it('stops routing payments to a disabled account, and routes to it again once enabled', async () => {
    // The sandbox account is the older one: payments go there first while it is enabled.
    const shop = await merchantWithSandbox(stack);
    await addConnectorAccount(stack, shop, 'fauxpay');
    expect((await paidPayment(shop)).connector).toBe('sandbox');

    const disabled = dataOf(await shop.secret(UpdateConnectorAccountDocument, { input: { id: shop.connectorAccountId, disabled: true } }));
    expect(disabled.updateConnectorAccount).toEqual({ id: shop.connectorAccountId, disabled: true });
    const listed = dataOf(await shop.secret(ConnectorAccountsDocument)).connectorAccounts;
    expect(listed.find((account) => account.id === shop.connectorAccountId)?.disabled).toBe(true);
    const whileDisabled = await paidPayment(shop);
    expect(whileDisabled.status).toBe('SUCCEEDED');
    expect(whileDisabled.connector).toBe('fauxpay');

    dataOf(await shop.secret(UpdateConnectorAccountDocument, { input: { id: shop.connectorAccountId, disabled: false } }));
    expect((await paidPayment(shop)).connector).toBe('sandbox');
  });

  it('answers NOT_FOUND for another merchant’s account, or an unknown id, and changes nothing', async () => {
    const alice = await merchantWithSandbox(stack);
    const bob = await merchantWithSandbox(stack);
    for (const id of [bob.connectorAccountId, 'mca_unknown']) {
      const error = errorOf(await alice.secret(UpdateConnectorAccountDocument, { input: { id, disabled: true } }), 'NOT_FOUND');
      expect(error.message).toContain(id);
    }
    expect((await paidPayment(bob)).connector).toBe('sandbox');
  });
});
