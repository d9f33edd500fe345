// Shared subscription execution (src/api/shared-execution.ts): one execution of a payload for every subscriber of the
// same document, variables and authorization scope; a separate one for any other scope or variables.
import { describe, expect, it } from 'vitest';
import { createPubSub, createSchema, createYoga } from 'graphql-yoga';
import type { ExecutionResult } from 'graphql';
import { sharedPayloadJson, useSharedSubscriptionExecution } from '../../src/api/shared-execution.ts';

function fixture() {
  const pubSub = createPubSub<{ tick: [{ n: number }] }>();
  let executions = 0;
  const schema = createSchema<{ principal: { kind: string; merchantId: string; mode: string } }>({
    typeDefs: /* GraphQL */ `
      type Tick {
        n: Int!
        seenBy: String!
      }
      type Query {
        ok: Boolean
      }
      type Subscription {
        ticks(label: String): Tick!
      }
    `,
    resolvers: {
      Subscription: { ticks: { subscribe: () => pubSub.subscribe('tick'), resolve: (tick: { n: number }) => tick } },
      Tick: {
        seenBy: (_tick, _args, { principal }) => {
          executions += 1;
          return principal.merchantId;
        },
      },
    },
  });
  const yoga = createYoga({ schema, plugins: [useSharedSubscriptionExecution()] });
  const subscribe = async (merchantId: string, label: string) => {
    const enveloped = yoga.getEnveloped({} as never);
    const document = enveloped.parse('subscription($label: String) { ticks(label: $label) { n seenBy } }');
    const stream = (await enveloped.subscribe({
      schema: enveloped.schema,
      document,
      variableValues: { label },
      contextValue: { principal: { kind: 'secretKey', merchantId, mode: 'TEST' } },
    })) as AsyncIterableIterator<ExecutionResult>;
    return { next: stream.next(), stream };
  };
  return { pubSub, subscribe, executions: () => executions };
}

describe('shared subscription execution', () => {
  it('executes a payload once for subscribers of the same selection and scope, and apart for another merchant or variables', async () => {
    const { pubSub, subscribe, executions } = fixture();
    const same = await Promise.all([1, 2, 3].map(() => subscribe('mer_a', 'x')));
    const otherMerchant = await subscribe('mer_b', 'x');
    const otherVariables = await subscribe('mer_a', 'y');
    await new Promise((resolve) => setImmediate(resolve));
    pubSub.publish('tick', { n: 1 });
    const results = await Promise.all([...same, otherMerchant, otherVariables].map((subscriber) => subscriber.next));
    expect(results.map((result) => result.value)).toEqual([
      ...same.map(() => ({ data: { ticks: { n: 1, seenBy: 'mer_a' } } })),
      { data: { ticks: { n: 1, seenBy: 'mer_b' } } },
      { data: { ticks: { n: 1, seenBy: 'mer_a' } } },
    ]);
    expect(executions()).toBe(3);
    // One result object, serialized once, for the subscribers that share it.
    expect(new Set(same.map((_, index) => results[index]!.value)).size).toBe(1);
    expect(sharedPayloadJson(results[0]!.value as ExecutionResult)).toBe(JSON.stringify({ data: { ticks: { n: 1, seenBy: 'mer_a' } } }));
    for (const subscriber of [...same, otherMerchant, otherVariables]) await subscriber.stream.return?.();
  });
});
