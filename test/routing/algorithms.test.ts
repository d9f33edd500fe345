// Routing algorithms end to end (docs/routing.md): each set through setRoutingAlgorithm (and refused, naming the
// field, when it names an account it may not), used by confirmPayment, explained on the payment
// (Payment.routing) and previewable (routingPreview); retries across processors follow the decided order.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CreateApiKeyDocument,
  PaymentRoutingDocument,
  ProfileRoutingDocument,
  RoutingPreviewDocument,
  SetRoutingAlgorithmDocument,
  type RoutingAlgorithmInput,
  type RoutingConditionInput,
} from '../gql/graphql.ts';
import { createMerchant } from '../support/api.ts';
import { dataOf, errorOf } from '../support/graphql-client.ts';
import { ROUTING_CARDS, payByCard, setAlgorithm } from '../support/routing.ts';
import { addConnectorAccount, startStack, type Stack } from '../support/stack.ts';

let stack: Stack;
let shop: Awaited<ReturnType<typeof createMerchant>>;
/** The shop's accounts: at the sandbox (created first: the default order) and at fauxpay. */
let sandbox: string;
let fauxpay: string;

beforeAll(async () => {
  stack = await startStack({ worker: false });
  shop = await createMerchant(stack.api);
  sandbox = (await addConnectorAccount(stack, shop, 'sandbox')).account.id;
  fauxpay = (await addConnectorAccount(stack, shop, 'fauxpay')).account.id;
});
afterAll(async () => {
  await stack?.close();
});

describe('setRoutingAlgorithm', () => {
  it('makes the algorithm active in the key’s mode and keeps the one it replaces in the history', async () => {
    const other = await createMerchant(stack.api);
    const [first, second] = [(await addConnectorAccount(stack, other, 'sandbox')).account.id, (await addConnectorAccount(stack, other, 'fauxpay')).account.id];
    const priority = await setAlgorithm(other, { priority: [second, first] });
    const split = await setAlgorithm(other, {
      volumeSplit: [
        { connectorAccountId: first, percent: 70 },
        { connectorAccountId: second, percent: 30 },
      ],
    });
    const profile = dataOf(await other.secret(ProfileRoutingDocument, {})).businessProfiles[0]!;
    expect(profile.routingAlgorithm).toMatchObject({ id: split.id, type: 'VOLUME_SPLIT', supersededAt: null });
    expect(profile.routingAlgorithm!.definition).toEqual({
      type: 'volumeSplit',
      splits: [
        { connectorAccountId: first, percent: 70 },
        { connectorAccountId: second, percent: 30 },
      ],
    });
    expect(profile.routingAlgorithmHistory).toHaveLength(1);
    expect(profile.routingAlgorithmHistory[0]).toMatchObject({
      id: priority.id,
      type: 'PRIORITY',
      definition: { type: 'priority', connectorAccountIds: [second, first] },
    });
    expect(profile.routingAlgorithmHistory[0]!.supersededAt).not.toBeNull();
  });

  it('refuses every algorithm that breaks a rule, naming the field', async () => {
    const stranger = await createMerchant(stack.api);
    const strangers = (await addConnectorAccount(stack, stranger, 'sandbox')).account.id;
    const { key } = dataOf(
      await stack.api.admin(CreateApiKeyDocument, { input: { name: 'live', type: 'SECRET', mode: 'LIVE', merchantId: shop.merchantId } }),
    ).createApiKey;
    const live = (await addConnectorAccount(stack, { secret: stack.api.as(key) }, 'sandbox')).account.id;
    const rule = (conditions: RoutingConditionInput[]) => ({
      rules: { rules: [{ name: 'r', conditions, connectorAccountIds: [sandbox] }], defaultConnectorAccountIds: [fauxpay] },
    });
    const refused: [RoutingAlgorithmInput, string][] = [
      [{}, 'algorithm'],
      [{ priority: [sandbox], successRate: { connectorAccountIds: [sandbox] } }, 'algorithm'],
      [{ priority: [sandbox, 'mca_unknown'] }, 'algorithm.priority.1'],
      [{ priority: [sandbox, sandbox] }, 'algorithm.priority.1'],
      [
        {
          volumeSplit: [
            { connectorAccountId: sandbox, percent: 70 },
            { connectorAccountId: strangers, percent: 30 },
          ],
        },
        'algorithm.volumeSplit.1.connectorAccountId',
      ],
      [
        {
          volumeSplit: [
            { connectorAccountId: sandbox, percent: 70 },
            { connectorAccountId: fauxpay, percent: 20 },
          ],
        },
        'algorithm.volumeSplit',
      ],
      [{ successRate: { connectorAccountIds: [live] } }, 'algorithm.successRate.connectorAccountIds.0'],
      [{ successRate: { connectorAccountIds: [sandbox], windowSize: 5 } }, 'algorithm.successRate.windowSize'],
      [{ successRate: { connectorAccountIds: [sandbox], explorationPercent: 80 } }, 'algorithm.successRate.explorationPercent'],
      [rule([{ field: 'AMOUNT', in: ['5'] }]), 'algorithm.rules.rules.0.conditions.0.in'],
      [rule([{ field: 'AMOUNT' }]), 'algorithm.rules.rules.0.conditions.0.field'],
      [rule([{ field: 'AMOUNT', between: [500, 100] }]), 'algorithm.rules.rules.0.conditions.0.between'],
      [rule([{ field: 'CURRENCY', gt: 5 }]), 'algorithm.rules.rules.0.conditions.0.gt'],
      [rule([{ field: 'CURRENCY', in: ['EUR', 'EURO'] }]), 'algorithm.rules.rules.0.conditions.0.in.1'],
      [rule([{ field: 'CARD_NETWORK', notIn: ['visa', 'laser'] }]), 'algorithm.rules.rules.0.conditions.0.notIn.1'],
      [rule([{ field: 'BILLING_COUNTRY', in: ['XX'] }]), 'algorithm.rules.rules.0.conditions.0.in.0'],
      [rule([{ field: 'PAYMENT_METHOD_TYPE', in: ['cheque'] }]), 'algorithm.rules.rules.0.conditions.0.in.0'],
      [rule([{ field: 'METADATA', in: ['gold'] }]), 'algorithm.rules.rules.0.conditions.0.metadataKey'],
      [rule([{ field: 'CURRENCY', in: ['EUR'], metadataKey: 'tier' }]), 'algorithm.rules.rules.0.conditions.0.metadataKey'],
      [
        { rules: { rules: [{ name: 'r', conditions: [], connectorAccountIds: [sandbox] }], defaultConnectorAccountIds: [strangers] } },
        'algorithm.rules.defaultConnectorAccountIds.0',
      ],
    ];
    for (const [algorithm, field] of refused) {
      const error = errorOf(await shop.secret(SetRoutingAlgorithmDocument, { input: { profileId: shop.profileId, algorithm } }), 'INVALID_INPUT');
      expect({ algorithm, field: error.extensions?.['field'] }).toEqual({ algorithm, field });
    }
    const otherProfile = await shop.secret(SetRoutingAlgorithmDocument, { input: { profileId: stranger.profileId, algorithm: { priority: [sandbox] } } });
    expect(errorOf(otherProfile, 'INVALID_INPUT').extensions?.['field']).toBe('profileId');
    // Nothing refused became active.
    expect(dataOf(await shop.secret(ProfileRoutingDocument, {})).businessProfiles[0]!.routingAlgorithm).toBeNull();
  });
});

describe('a confirmed payment', () => {
  it('goes where the active algorithm says, and says why', async () => {
    const unset = await payByCard(shop);
    expect(unset.accounts).toEqual([sandbox]);
    expect(unset.payment.routing).toMatchObject({ algorithm: 'PRIORITY', chosen: { id: sandbox }, candidates: [{ id: sandbox }, { id: fauxpay }] });
    expect(unset.payment.routing!.reason).toMatch(/^No routing algorithm is set/);

    await setAlgorithm(shop, { priority: [fauxpay, sandbox] });
    const prioritised = await payByCard(shop);
    expect(prioritised.payment.status).toBe('SUCCEEDED');
    expect(prioritised.accounts).toEqual([fauxpay]);
    expect(prioritised.payment.routing).toMatchObject({
      algorithm: 'PRIORITY',
      chosen: { id: fauxpay },
      candidates: [
        { id: fauxpay, connectorName: 'fauxpay' },
        { id: sandbox, connectorName: 'sandbox' },
      ],
    });
    expect(prioritised.payment.routing!.reason).toMatch(new RegExp(`^Priority: fauxpay ${fauxpay}.*sandbox ${sandbox}`));
  });

  it('goes where the first rule that holds says (amount, currency, card network, country, metadata), else to the defaults', async () => {
    await setAlgorithm(shop, {
      rules: {
        rules: [
          {
            name: 'large euro payments',
            conditions: [
              { field: 'AMOUNT', gte: 50_000 },
              { field: 'CURRENCY', in: ['eur'] },
            ],
            connectorAccountIds: [fauxpay],
          },
          { name: 'gold customers', conditions: [{ field: 'METADATA', metadataKey: 'tier', in: ['gold'] }], connectorAccountIds: [fauxpay, sandbox] },
          {
            name: 'mastercard from France',
            conditions: [
              { field: 'CARD_NETWORK', in: ['MASTERCARD'] },
              { field: 'BILLING_COUNTRY', in: ['fr'] },
            ],
            connectorAccountIds: [fauxpay],
          },
        ],
        defaultConnectorAccountIds: [sandbox, fauxpay],
      },
    });
    const large = await payByCard(shop, ROUTING_CARDS.visa, { amount: 60_000 });
    expect(large.accounts).toEqual([fauxpay]);
    expect(large.payment.routing!.reason).toMatch(/^Rule 1, "large euro payments", matched/);
    const gold = await payByCard(shop, ROUTING_CARDS.visa, { metadata: { tier: 'gold' } });
    expect(gold.payment.routing).toMatchObject({ algorithm: 'RULES', candidates: [{ id: fauxpay }, { id: sandbox }] });
    expect(gold.payment.routing!.reason).toMatch(/^Rule 2, "gold customers", matched/);
    const french = await payByCard(shop, ROUTING_CARDS.mastercard, { country: 'FR' });
    expect(french.accounts).toEqual([fauxpay]);
    const german = await payByCard(shop, ROUTING_CARDS.mastercard, { country: 'DE' });
    expect(german.accounts).toEqual([sandbox]);
    expect(german.payment.routing!.reason).toMatch(/^No rule matched/);
  });

  it('follows the decided order across processors: a soft decline moves on to the next candidate, a hard one stops', async () => {
    await setAlgorithm(shop, { priority: [fauxpay, sandbox] });
    const soft = await payByCard(shop, ROUTING_CARDS.amex);
    expect(soft.payment.status).toBe('SUCCEEDED');
    expect(soft.payment.attempts.map((attempt) => [attempt.connectorAccountId, attempt.status])).toEqual([
      [fauxpay, 'FAILURE'],
      [sandbox, 'CHARGED'],
    ]);
    const hard = await payByCard(shop, ROUTING_CARDS.insufficientFunds);
    expect(errorOf(hard.result, 'PAYMENT_DECLINED').extensions?.['declineCode']).toBe('insufficient_funds');
    expect(hard.accounts).toEqual([fauxpay]);

    await setAlgorithm(shop, { priority: [sandbox, fauxpay] });
    expect((await payByCard(shop, ROUTING_CARDS.amex)).accounts).toEqual([sandbox]);
  });

  it('keeps its decision from the publishable key', async () => {
    const { payment, clientSecret } = await payByCard(shop);
    expect(payment.routing).not.toBeNull();
    // The browser's key reads the payment with its client secret, never where and why it was routed.
    const asBrowser = dataOf(await shop.publishable(PaymentRoutingDocument, { id: payment.id, clientSecret })).payment!;
    expect(asBrowser.routing).toBeNull();
  });
});

describe('routingPreview', () => {
  it('answers the decision a payment like this would get, writing nothing', async () => {
    await setAlgorithm(shop, {
      rules: {
        rules: [
          {
            name: 'US cards',
            conditions: [
              { field: 'BILLING_COUNTRY', in: ['US'] },
              { field: 'AMOUNT', between: [100, 10_000] },
            ],
            connectorAccountIds: [fauxpay],
          },
        ],
        defaultConnectorAccountIds: [sandbox],
      },
    });
    const preview = async (input: { amount: number; billingCountry?: string }) =>
      dataOf(
        await shop.secret(RoutingPreviewDocument, {
          input: { profileId: shop.profileId, currency: 'USD', paymentMethodType: 'CARD', cardNetwork: 'visa', ...input },
        }),
      ).routingPreview;
    expect(await preview({ amount: 5_000, billingCountry: 'US' })).toMatchObject({
      algorithm: 'RULES',
      chosen: { id: fauxpay },
      candidates: [{ id: fauxpay }],
    });
    expect(await preview({ amount: 50_000, billingCountry: 'US' })).toMatchObject({ chosen: { id: sandbox } });
    const refused = await shop.secret(RoutingPreviewDocument, {
      input: { profileId: shop.profileId, amount: 5, currency: 'USD', paymentMethodType: 'CARD', cardNetwork: 'laser' },
    });
    expect(errorOf(refused, 'INVALID_INPUT').extensions?.['field']).toBe('cardNetwork');
  });
});
