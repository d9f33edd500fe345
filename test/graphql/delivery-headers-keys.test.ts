// Event.deliveryHeaders over a page of events (src/modules/events/schema.ts): each profile's signing key is read
// and decrypted once for the page, not once per event, and a subscription's next event reads it afresh.
import { graphql } from 'graphql';
import { describe, expect, it } from 'vitest';
import { schema } from '../../src/api/schema.ts';
import { EventService } from '../../src/modules/events/service.ts';
import type { GraphQLContext } from '../../src/platform/graphql/context.ts';

const PROFILES = ['pro_a', 'pro_b'];
const events = Array.from({ length: 100 }, (_, index) => ({
  id: `evt_${index}`,
  body: `{"n":${index}}`,
  profileId: PROFILES[index % 2]!,
  mode: 'TEST',
  traceParent: null,
}));

describe('Event.deliveryHeaders', () => {
  it('reads each profile’s key once for a page of 100 events, and again for the next request', async () => {
    const keyReads: string[][] = [];
    const services = {
      events: {
        list: async () => ({ edges: events.map((node) => ({ cursor: node.id, node })), pageInfo: { hasNextPage: false, endCursor: null } }),
        deliveryHeaders: EventService.prototype.deliveryHeaders,
        testSigningKeys: async (profileIds: string[]) => {
          keyReads.push(profileIds);
          return new Map(profileIds.map((id) => [id, { current: `key of ${id}`, previous: null }]));
        },
      },
    };
    const request = () =>
      graphql({
        schema,
        source: '{ events(first: 100) { edges { node { id deliveryHeaders { name value } } } } }',
        contextValue: { principal: { kind: 'secretKey', merchantId: 'mer_1', mode: 'TEST', keyId: 'key_1' }, services } as unknown as GraphQLContext,
      });
    const answer = await request();
    expect(answer.errors).toBeUndefined();
    expect((answer.data as { events: { edges: unknown[] } }).events.edges).toHaveLength(100);
    expect(keyReads).toEqual([PROFILES]);
    await request();
    expect(keyReads).toEqual([PROFILES, PROFILES]);
  });
});
