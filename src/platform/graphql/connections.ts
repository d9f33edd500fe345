// The cursor connections of the lists added with platforms (connected merchants, ledger entries): hand-written like
// PaymentConnection (modules/payments/schema.ts says why), each with its own Edge, PageInfo and Connection type
// named after its node, as EventConnection has.
import type { ObjectRef } from '@pothos/core';
import { builder } from './builder.ts';

type Types = typeof builder extends PothosSchemaTypes.SchemaBuilder<infer Types> ? Types : never;

/** `${name}Connection` of `node`, with `${name}Edge` and `${name}PageInfo`: what pagination.ts connectionPage returns. */
export function connectionOf<Node>(name: string, node: ObjectRef<Types, Node>) {
  const edge = builder.simpleObject(`${name}Edge`, { fields: (t) => ({ cursor: t.string(), node: t.field({ type: node }) }) });
  const pageInfo = builder.simpleObject(`${name}PageInfo`, { fields: (t) => ({ hasNextPage: t.boolean(), endCursor: t.string({ nullable: true }) }) });
  return builder.simpleObject(`${name}Connection`, { fields: (t) => ({ edges: t.field({ type: [edge] }), pageInfo: t.field({ type: pageInfo }) }) });
}
