// Per-request batching (src/platform/graphql/request-loader.ts): a field resolved for each item of a list asks
// for its id, and the ids asked for in one round of resolvers go in one read, each once per request.
import { describe, expect, it } from 'vitest';
import type { GraphQLContext } from '../../src/platform/graphql/context.ts';
import { requestLoader } from '../../src/platform/graphql/request-loader.ts';

describe('requestLoader', () => {
  it('reads the ids of one round in one call, each id once per request, and a new request afresh', async () => {
    const reads: string[][] = [];
    const load = requestLoader(async (_context, ids) => {
      reads.push(ids);
      return new Map(ids.filter((id) => id !== 'gone').map((id) => [id, `account ${id}`]));
    });
    const request = {} as GraphQLContext;
    const asked = ['a', 'b', 'a', 'c', 'gone', 'b'];
    expect(await Promise.all(asked.map((id) => load(request, id)))).toEqual(['account a', 'account b', 'account a', 'account c', null, 'account b']);
    expect(reads).toEqual([['a', 'b', 'c', 'gone']]);
    expect(await load(request, 'c')).toBe('account c');
    expect(reads).toHaveLength(1);
    expect(await load({} as GraphQLContext, 'c')).toBe('account c');
    expect(reads).toEqual([['a', 'b', 'c', 'gone'], ['c']]);
  });

  it('with keep: batch, reads an id again in the next round of the same request (a subscription’s next event)', async () => {
    const reads: string[][] = [];
    const load = requestLoader(
      async (_context, ids) => {
        reads.push(ids);
        return new Map(ids.map((id) => [id, `key ${id} #${reads.length}`]));
      },
      { keep: 'batch' },
    );
    const subscription = {} as GraphQLContext;
    expect(await Promise.all([load(subscription, 'a'), load(subscription, 'a')])).toEqual(['key a #1', 'key a #1']);
    expect(await load(subscription, 'a')).toBe('key a #2');
    expect(reads).toEqual([['a'], ['a']]);
  });

  it('rejects every id of a batch whose read fails', async () => {
    const load = requestLoader(() => Promise.reject(new Error('redis unreachable')));
    const request = {} as GraphQLContext;
    const results = await Promise.allSettled([load(request, 'a'), load(request, 'b')]);
    expect(results.map((result) => result.status)).toEqual(['rejected', 'rejected']);
  });
});
