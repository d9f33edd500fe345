// Proves the SQL migrations and schema.prisma describe the same database: every model, generated from
// Prisma's own datamodel (so a new model or field is covered without touching this test), is written with
// every field set and read back unchanged from the migrated database.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, inject } from 'vitest';
import { createDatabase, type Database } from '../../src/platform/db/client.ts';
import { columnOf } from '../../src/modules/payments/store.ts';
import * as enums from '../../src/generated/prisma/enums.ts';
import { getDatamodel } from '../../src/generated/pothos-types.ts';

interface FieldModel {
  name: string;
  type: string;
  kind: 'scalar' | 'enum' | 'object';
  isRequired: boolean;
  isList: boolean;
  isId: boolean;
  isUpdatedAt: boolean;
  hasDefaultValue: boolean;
  relationFromFields?: string[];
}

const models = getDatamodel().datamodel.models as unknown as Record<
  string,
  { fields: FieldModel[]; primaryKey: { name: string | null; fields: string[] } | null }
>;
let db: Database;
let sql: pg.Client;
let sequence = 0;

beforeAll(async () => {
  db = createDatabase(inject('databaseUrl'), 2);
  sql = new pg.Client({ connectionString: inject('databaseUrl') });
  await sql.connect();
});
afterAll(async () => {
  await db.$disconnect();
  await sql.end();
});

function delegate(model: string, client: unknown = db) {
  return (
    client as Record<
      string,
      { create: (args: unknown) => Promise<Record<string, unknown>>; findUniqueOrThrow: (args: unknown) => Promise<Record<string, unknown>> }
    >
  )[model[0]!.toLowerCase() + model.slice(1)]!;
}

/** A value of `field`'s type that differs from any default, so a silently dropped column is noticed. */
function sampleValue(model: string, field: FieldModel): unknown {
  sequence += 1;
  if (field.kind === 'enum') {
    const values = Object.values((enums as Record<string, Record<string, string>>)[field.type]!);
    const value = values[values.length - 1];
    return field.isList ? values : value;
  }
  const one = (): unknown => {
    switch (field.type) {
      case 'String':
        return `${model}.${field.name}.${sequence}.ünïcødé`;
      case 'Int':
        // Decreasing, so a later field is smaller: the money CHECKs (amount_refunded <= amount_received) hold.
        return 1_000_000 - sequence;
      case 'BigInt':
        return 9_007_199_254_740_993n + BigInt(sequence);
      case 'Float':
        return 0.5 + sequence;
      case 'Boolean':
        return true;
      case 'DateTime':
        return new Date(Date.UTC(2031, 0, 2, 3, 4, 5, sequence % 1000));
      case 'Json':
        return { nested: [1, 'two', { three: null }], sequence };
      case 'Bytes':
        return new Uint8Array([1, 2, 3, sequence % 256]);
      default:
        throw new Error(`schema-parity test: no sample for ${field.type}; add one`);
    }
  };
  return field.isList ? [one(), one()] : one();
}

/** The unique `where` of a row: its @id field, or Prisma's compound key (`a_b: { a, b }`) for an @@id. */
function uniqueWhere(model: string, row: Record<string, unknown>): Record<string, unknown> {
  const idField = models[model]!.fields.find((field) => field.isId);
  if (idField) return { [idField.name]: row[idField.name] };
  const keyFields = models[model]!.primaryKey!.fields;
  return { [keyFields.join('_')]: Object.fromEntries(keyFields.map((field) => [field, row[field]])) };
}

/**
 * Values a row cannot take with every other field set: a connected merchant (platformMerchantId set) is never a
 * platform (the CHECK merchant_accounts_platform_not_connected), so isPlatform is written false here; test/platform reads a
 * platform's back through the API.
 */
const SAMPLE_OVERRIDES: Record<string, Record<string, unknown>> = {
  MerchantAccount: { isPlatform: false },
  // The processor side's row (no merchant, role processor), of a type the CHECKs allow.
  LedgerEntry: { merchantId: null, role: 'processor', type: 'capture' },
  // A processor that pays on to a connected merchant's own account (the CHECK of merchant_processor_accounts).
  MerchantProcessorAccount: { connectorName: 'stripe' },
  // Dashboard users and invitations: a role the CHECK allows, and an email stored lowercase (the CHECK), a new one for
  // each row (a getter, read by each Object.assign) as users' are unique.
  DashboardUser: {
    role: 'viewer',
    get email() {
      return `user.${++sequence}.ünïcødé@example.com`;
    },
  },
  DashboardInvitation: { role: 'viewer', email: 'invited.ünïcødé@example.com' },
};

/**
 * Rows never written alone: a ledger transaction must add up to zero when its database transaction commits (the
 * deferred trigger of the ledger migration), so a ledger row is written with its opposite.
 */
const COMPANIONS: Record<string, (row: Record<string, unknown>) => Record<string, unknown>> = {
  LedgerEntry: (row) => ({ ...row, id: `${String(row['id'])}.opposite`, amount: -(row['amount'] as bigint) }),
};

/**
 * Creates a row of `model` with every scalar field set (parents created first) and returns what was written. A
 * parent of the model's own type (a self-relation) is created without its own self-relations, so the chain ends.
 */
async function createFull(model: string, asSelfParent = false): Promise<Record<string, unknown>> {
  const fields = models[model]!.fields;
  const data: Record<string, unknown> = {};
  for (const field of fields) {
    if (field.kind === 'object' || field.isUpdatedAt) continue;
    data[field.name] = sampleValue(model, field);
  }
  const relations = fields.filter((field) => field.kind === 'object' && field.relationFromFields?.length);
  if (asSelfParent) {
    for (const self of relations.filter((relation) => relation.type === model)) data[self.relationFromFields![0]!] = null;
  } else {
    Object.assign(data, SAMPLE_OVERRIDES[model]);
  }
  for (const relation of relations) {
    if (asSelfParent && relation.type === model) continue;
    const parent = await createFull(relation.type, relation.type === model);
    const [foreignKey] = relation.relationFromFields!;
    data[foreignKey!] = parent[models[relation.type]!.fields.find((field) => field.isId)!.name];
  }
  const companion = COMPANIONS[model];
  if (companion) {
    await db.$transaction(async (tx) => {
      for (const row of [data, companion(data)]) await delegate(model, tx).create({ data: row });
    });
  } else await delegate(model).create({ data });
  return data;
}

describe('migrations match schema.prisma', () => {
  it.each(Object.keys(models))('%s: every field is written and read back unchanged', async (model) => {
    const written = await createFull(model);
    const read = await delegate(model).findUniqueOrThrow({ where: uniqueWhere(model, written) });
    for (const field of models[model]!.fields) {
      if (field.kind === 'object') continue;
      if (field.isUpdatedAt) expect(read[field.name], field.name).toBeInstanceOf(Date);
      else expect(read[field.name], `${model}.${field.name}`).toEqual(written[field.name]);
    }
  });

  // The payment store writes its commits as SQL and names each column after its field (columnOf).
  it.each([
    ['PaymentIntent', 'payment_intents'],
    ['PaymentAttempt', 'payment_attempts'],
  ])('%s: every field is the column columnOf names', async (model, table) => {
    const { rows } = await sql.query<{ column_name: string }>(
      `SELECT column_name FROM information_schema.columns WHERE table_schema = 'public' AND table_name = $1`,
      [table],
    );
    const fields = models[model]!.fields.filter((field) => field.kind !== 'object').map((field) => columnOf(field.name));
    expect(fields.sort()).toEqual(rows.map((row) => row.column_name).sort());
  });

  it('has one table per model and nothing else but the migration ledger', async () => {
    const { rows } = await sql.query(
      `SELECT count(*)::int AS n FROM information_schema.tables WHERE table_schema = 'public' AND table_name <> '_prisma_migrations'`,
    );
    expect(rows[0].n).toBe(Object.keys(models).length);
  });
});
