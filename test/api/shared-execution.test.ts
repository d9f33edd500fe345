// Shared subscription execution (src/api/shared-execution.ts): one execution of a payload for every subscriber of the
// same document, variables and authorization scope; a separate one for any other scope or variables. Over a transport
// that writes ready frames, a stream's push side feeds them by plain calls, in order, with its backlog bounded.
import { describe, expect, it } from 'vitest';
import { createPubSub, createSchema, createYoga } from 'graphql-yoga';
import { GraphQLScalarType, type ExecutionResult } from 'graphql';
import { sharedPayloadJson, useSharedSubscriptionExecution } from '../../src/api/shared-execution.ts';
import { createMetrics } from '../../src/platform/http/metrics.ts';
import { MAX_UNREAD_RESULTS } from '../../src/api/subscription-gate.ts';
import { withPush, type PushSink } from '../../src/kernel/async-streams.ts';
import { AppError } from '../../src/kernel/errors.ts';

/**
 * What the subscription pushes: tick `n`, `held` until a promise settles when the test needs an execution still running,
 * and `raw`, given back as is by the field of that name (a value JSON cannot hold makes a result that cannot be written).
 */
interface Tick {
  n: number;
  held?: Promise<void>;
  raw?: unknown;
}

/**
 * A schema with one subscription, `ticks`, fed by `subscribe`; `seenBy` counts its executions, a negative tick cannot be
 * seen, and a held tick is executed once its promise settles (as a field that waits on a data loader).
 */
function tickSchema(subscribe: () => unknown) {
  let executions = 0;
  const schema = createSchema<{ principal: { kind: string; merchantId: string; mode: string } }>({
    typeDefs: /* GraphQL */ `
      scalar Raw
      type Tick {
        n: Int!
        seenBy: String!
        raw: Raw
      }
      type Query {
        ok: Boolean
      }
      type Subscription {
        ticks(label: String): Tick!
      }
    `,
    resolvers: {
      Raw: new GraphQLScalarType({ name: 'Raw', serialize: (value) => value }),
      Subscription: { ticks: { subscribe, resolve: (tick: { n: number }) => tick } },
      Tick: {
        seenBy: (tick: Tick, _args, { principal }) => {
          const see = () => {
            executions += 1;
            if (tick.n < 0) throw new Error(`tick ${tick.n} cannot be seen`);
            return principal.merchantId;
          };
          return tick.held ? tick.held.then(see) : see();
        },
      },
    },
  });
  return { schema, executions: () => executions };
}

function fixture() {
  const pubSub = createPubSub<{ tick: [{ n: number }] }>();
  const { schema, executions } = tickSchema(() => pubSub.subscribe('tick'));
  const yoga = createYoga({ schema, plugins: [useSharedSubscriptionExecution(createMetrics())] });
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
  return { pubSub, subscribe, executions };
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

/** A live stream whose push side the test drives: the sink the subscription attached, and whether it detached. */
function pushFixture(document = 'subscription { ticks { n seenBy } }') {
  const attached: { sink: PushSink<unknown>; detached: boolean }[] = [];
  const source = () => {
    const iterated: AsyncIterable<unknown> = {
      [Symbol.asyncIterator]: () => {
        throw new Error('a pushed subscription is never iterated');
      },
    };
    return withPush(iterated, (sink: PushSink<unknown>) => {
      const attachment = { sink, detached: false };
      attached.push(attachment);
      return () => void (attachment.detached = true);
    });
  };
  const { schema, executions } = tickSchema(source);
  // Errors as the source gave them (the service's own masking maps an AppError to its code).
  const yoga = createYoga({ schema, maskedErrors: false, plugins: [useSharedSubscriptionExecution(createMetrics())] });
  /** A subscriber whose transport writes ready frames (as graphql-ws's does), accepting them while `accepting`. */
  const subscribe = async (merchantId: string) => {
    const enveloped = yoga.getEnveloped({} as never);
    const frames: unknown[] = [];
    const transport = { accepting: true, frames };
    const stream = (await enveloped.subscribe({
      schema: enveloped.schema,
      document: enveloped.parse(document),
      contextValue: { principal: { kind: 'secretKey', merchantId, mode: 'TEST' } },
      rootValue: {
        sendReady: (json: string) => {
          frames.push(JSON.parse(json));
          return transport.accepting;
        },
      },
    })) as AsyncIterableIterator<ExecutionResult>;
    return { stream, transport, attachment: attached.at(-1)! };
  };
  const frame = (n: number, merchantId = 'mer_a') => ({ data: { ticks: { n, seenBy: merchantId } } });
  return { subscribe, executions, frame };
}

/** Tick `n`, whose execution runs until the test releases it. */
function held(n: number) {
  let release!: () => void;
  const tick: Tick = { n, held: new Promise<void>((resolve) => (release = resolve)) };
  return { tick, release };
}

const turn = () => new Promise((resolve) => setImmediate(resolve));

describe('pushed subscriptions (graphql-ws ready frames)', () => {
  it('write each value as a frame in the order pushed, executed once per scope, an execution still running holding back the ones after it', async () => {
    const { subscribe, executions, frame } = pushFixture();
    const same = [await subscribe('mer_a'), await subscribe('mer_a'), await subscribe('mer_a')];
    const other = await subscribe('mer_b');
    const first = held(1);
    const second = { n: 2 };
    for (const { attachment } of [...same, other]) {
      attachment.sink.next(first.tick);
      attachment.sink.next(second);
    }
    // The second is executed at once, but the first is still running: nothing goes out yet.
    expect(same[0]!.transport.frames).toEqual([]);
    first.release();
    await turn();
    for (const { transport } of same) expect(transport.frames).toEqual([frame(1), frame(2)]);
    expect(other.transport.frames).toEqual([frame(1, 'mer_b'), frame(2, 'mer_b')]);
    expect(executions()).toBe(4); // two values, two scopes
    // The source's end ends the stream once what was queued is out.
    same[0]!.attachment.sink.end();
    expect(await same[0]!.stream.next()).toEqual({ done: true, value: undefined });
    for (const { stream } of [...same, other]) await stream.return?.();
  });

  it('hand a result with errors to the reader (graphql-ws frames it with the subscriber’s request id), writing nothing after it until the reader has it', async () => {
    const { subscribe, frame } = pushFixture();
    const { stream, transport, attachment } = await subscribe('mer_a');
    const next = stream.next();
    attachment.sink.next({ n: 1 });
    attachment.sink.next({ n: -2 });
    attachment.sink.next({ n: 3 });
    const failed = await next;
    expect(failed.value?.errors?.[0]?.message).toBe('tick -2 cannot be seen');
    expect(transport.frames).toEqual([frame(1)]);
    const after = stream.next(); // graphql-ws asks again once it has written the error frame
    await turn();
    expect(transport.frames).toEqual([frame(1), frame(3)]);
    await stream.return?.();
    expect(await after).toEqual({ done: true, value: undefined });
  });

  it('end with RATE_LIMITED, and stop listening, when the socket holds too much unsent or too many values wait', async () => {
    const { subscribe } = pushFixture();
    const unsent = await subscribe('mer_a');
    unsent.transport.accepting = false;
    const refused = unsent.stream.next();
    unsent.attachment.sink.next({ n: 1 });
    await expect(refused).rejects.toMatchObject({ originalError: { code: 'RATE_LIMITED' } });
    expect(unsent.attachment.detached).toBe(true);

    const waiting = await subscribe('mer_a');
    const cut = waiting.stream.next();
    waiting.attachment.sink.next(held(0).tick); // never released: everything after it waits
    for (let n = 0; n < MAX_UNREAD_RESULTS; n += 1) waiting.attachment.sink.next({ n });
    await expect(cut).rejects.toMatchObject({ originalError: { code: 'RATE_LIMITED' } });
    expect(waiting.attachment.detached).toBe(true);
    expect(waiting.transport.frames).toEqual([]);
  });

  it('still write what was queued before the source ended with an error (Redis lost), then end with it', async () => {
    const { subscribe, frame } = pushFixture();
    const { stream, transport, attachment } = await subscribe('mer_a');
    const value = held(1);
    const next = stream.next();
    attachment.sink.next(value.tick);
    attachment.sink.end(new AppError('SERVICE_UNAVAILABLE', 'Redis is gone'));
    value.release();
    await expect(next).rejects.toMatchObject({ originalError: { code: 'SERVICE_UNAVAILABLE' } });
    expect(transport.frames).toEqual([frame(1)]);
  });

  it('end only the subscriber whose socket failed; the others waiting on the same value still get it', async () => {
    const { subscribe, frame } = pushFixture();
    const failing = await subscribe('mer_a');
    const healthy = await subscribe('mer_a');
    const value = held(1);
    const failed = failing.stream.next();
    for (const { attachment } of [failing, healthy]) attachment.sink.next(value.tick);
    const broken = failing.transport.frames;
    broken.push = () => {
      throw new Error('the socket is broken');
    };
    value.release();
    await expect(failed).rejects.toThrow('the socket is broken');
    await turn();
    expect(healthy.transport.frames).toEqual([frame(1)]);
    await healthy.stream.return?.();
  });

  it('end with the error when a result cannot be written or the source fails, and stop listening on return()', async () => {
    const unwritable = await pushFixture('subscription { ticks { n raw } }').subscribe('mer_a');
    const cut = unwritable.stream.next();
    unwritable.attachment.sink.next({ n: 1, raw: 1n });
    await expect(cut).rejects.toThrow('BigInt');
    expect(unwritable.attachment.detached).toBe(true);
    expect(unwritable.transport.frames).toEqual([]);

    const { subscribe } = pushFixture();
    const interrupted = await subscribe('mer_a');
    const ended = interrupted.stream.next();
    interrupted.attachment.sink.end(new AppError('SERVICE_UNAVAILABLE', 'Redis is gone'));
    await expect(ended).rejects.toMatchObject({ originalError: { code: 'SERVICE_UNAVAILABLE' } });

    const left = await subscribe('mer_a');
    await left.stream.return?.();
    expect(left.attachment.detached).toBe(true);
  });
});
