// Which selections createPayment may answer from the payment it returns, before the payment is written
// (docs/architecture.md, "Idempotency"): only those whose every field, at any depth, reads its parent alone.
import { GraphQLList, GraphQLObjectType, GraphQLSchema, GraphQLString, graphql, type GraphQLResolveInfo } from 'graphql';
import { describe, expect, it } from 'vitest';
import { schema as serviceSchema } from '../../src/api/schema.ts';
import { RESOLVES_FROM_PARENT, selectionResolvesFromValue } from '../../src/platform/graphql/resolves-from-parent.ts';

const fromParent = { [RESOLVES_FROM_PARENT]: true };
const Item: GraphQLObjectType = new GraphQLObjectType({
  name: 'Item',
  fields: () => ({
    id: { type: GraphQLString },
    computed: { type: GraphQLString, extensions: fromParent, resolve: () => 'from the item' },
    stored: { type: GraphQLString, resolve: () => 'read from the database' },
    child: { type: Item, extensions: fromParent, resolve: () => ({ id: 'child' }) },
    others: { type: new GraphQLList(Item), resolve: () => [] },
  }),
});

/** What selectionResolvesFromValue says of the root field `item` in `document`. */
async function judged(document: string): Promise<boolean> {
  let verdict: boolean | undefined;
  const remember = (_root: unknown, _args: unknown, _context: unknown, info: GraphQLResolveInfo) => {
    verdict = selectionResolvesFromValue(info);
    return { id: 'item' };
  };
  const schema = new GraphQLSchema({ query: new GraphQLObjectType({ name: 'Query', fields: { item: { type: Item, resolve: remember } } }) });
  const { errors } = await graphql({ schema, source: document });
  expect(errors).toBeUndefined();
  return verdict!;
}

describe('selectionResolvesFromValue', () => {
  it.each([
    ['fields without resolvers, and __typename', '{ item { id __typename } }', true],
    ['a marked resolver', '{ item { id computed } }', true],
    ['an unmarked resolver', '{ item { id stored } }', false],
    ['a marked object field whose own fields read nothing', '{ item { child { id computed } } }', true],
    ['a marked object field with an unmarked field below', '{ item { child { child { stored } } } }', false],
    ['an unmarked list of objects', '{ item { others { id } } }', false],
    ['a fragment reading nothing', '{ item { ...F } } fragment F on Item { id computed }', true],
    ['a fragment with an unmarked field', '{ item { id ...F } } fragment F on Item { stored }', false],
    ['an inline fragment with an unmarked field', '{ item { ... on Item { stored } } }', false],
    ['an unmarked field skipped by a directive (still counted: nothing is judged by variables)', '{ item { id stored @skip(if: true) } }', false],
  ])('%s: %s → %s', async (_case, document, expected) => {
    expect(await judged(document)).toBe(expected);
  });
});

describe('on the service’s schema', () => {
  /** The fields of `typeName` a createPayment answer may select and still be written with its payment. */
  const fieldsFromParent = (typeName: string) =>
    Object.values((serviceSchema.getType(typeName) as GraphQLObjectType).getFields())
      .filter((field) => field.resolve === undefined || field.extensions[RESOLVES_FROM_PARENT] === true)
      .map((field) => field.name)
      .sort();

  // A field added to Payment (by any module) reads something stored until it is marked: a new name here is a reviewed one.
  it('a Payment’s fields that resolve from the payment as created, and no others', () => {
    expect(fieldsFromParent('Payment')).toEqual([
      'activeAttempt',
      'amount',
      'amountCapturable',
      'amountReceived',
      'amountRefunded',
      'applicationFeeAmount',
      'attemptCount',
      'authenticationType',
      'cancellationReason',
      'captureMethod',
      'clientSecret',
      'connector',
      'country',
      'createdAt',
      'currency',
      'customerId',
      'description',
      'email',
      'errorCode',
      'errorMessage',
      'expiresAt',
      'id',
      'initiatedByPlatformId',
      'mandateId',
      'metadata',
      'nextAction',
      'paymentLinkId',
      'processorErrorCode',
      'processorMerchantId',
      'profileId',
      'returnUrl',
      'setupFutureUsage',
      'splits',
      'status',
      'surchargeAmount',
      'updated',
      'version',
    ]);
    expect(fieldsFromParent('PaymentAttempt')).toEqual(Object.keys((serviceSchema.getType('PaymentAttempt') as GraphQLObjectType).getFields()).sort());
  });
});
