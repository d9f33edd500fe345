// The layer rules in .dependency-cruiser.cjs (run by `npm test` as `npm run lint:deps`): today's src/, sandbox/
// and packages/ pass, and a small tree with one import of each forbidden kind fails with exactly those violations.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { cruise, type ICruiseResult } from 'dependency-cruiser';
import extractDepcruiseOptions from 'dependency-cruiser/config-utl/extract-depcruise-options';
import extractTSConfig from 'dependency-cruiser/config-utl/extract-ts-config';
import { afterAll, describe, expect, it } from 'vitest';

const REPOSITORY = path.resolve(import.meta.dirname, '../..');

async function violationsIn(baseDir: string) {
  const options = await extractDepcruiseOptions(path.join(REPOSITORY, '.dependency-cruiser.cjs'));
  const tsConfig = extractTSConfig(path.join(REPOSITORY, 'tsconfig.json'));
  const { output } = await cruise(['src', 'sandbox', 'packages'], { ...options, baseDir }, {}, { tsConfig });
  return (output as ICruiseResult).summary.violations.map(({ rule, from, to }) => `${rule.name}: ${from} → ${to}`).sort();
}

/** Files under a fresh directory, `path: source`; a fake `pg` package stands in for an I/O library. */
function tree(files: Record<string, string>) {
  const root = mkdtempSync(path.join(tmpdir(), 'dependency-rules-'));
  for (const [file, source] of Object.entries({
    ...files,
    'node_modules/pg/package.json': '{"name":"pg","main":"index.js"}',
    'node_modules/pg/index.js': 'module.exports = {};',
  })) {
    mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
    writeFileSync(path.join(root, file), source);
  }
  return root;
}

const fixtures: string[] = [];
afterAll(() => {
  for (const root of fixtures) rmSync(root, { recursive: true, force: true });
});

describe('dependency rules', () => {
  it("today's src/, sandbox/ and packages/ have no violations", async () => {
    expect(await violationsIn(REPOSITORY)).toEqual([]);
  });

  it('fails each forbidden import and lets the allowed ones and the known exceptions pass', async () => {
    const root = tree({
      // Allowed: kernel code using node:crypto; a state machine using the kernel; a service using both.
      'src/kernel/money.ts': 'export const hash = (value: string) => value;\n',
      'src/modules/refunds/machine.ts': "import { hash } from '../../kernel/money.ts';\nexport const rule = hash;\n",
      'src/modules/refunds/service.ts': "import { rule } from './machine.ts';\nexport const refund = rule;\n",
      // Forbidden: the kernel importing an I/O library; a state machine importing (even for a type) a service.
      'src/kernel/ledger.ts': "import pg from 'pg';\nexport const ledger = pg;\n",
      'src/modules/payments/machine/leaky.ts': "import type { Refund } from '../service.ts';\nexport type Leaky = Refund;\n",
      // Forbidden: a module importing an API surface, the platform importing a module, the API importing main.
      'src/modules/payments/service.ts': "import { schema } from '../../api/schema.ts';\nexport type Refund = typeof schema;\n",
      'src/api/schema.ts': "import { start } from '../main/run.ts';\nexport const schema = start;\n",
      'src/main/run.ts': 'export const start = 1;\n',
      'src/platform/db/client.ts': "import { refund } from '../../modules/refunds/service.ts';\nexport const database = refund;\n",
      // Allowed: the GraphQL context naming a module's type. Forbidden: it importing a module's code.
      'src/platform/graphql/context.ts':
        "import type { Refund } from '../../modules/payments/service.ts';\nimport { refund } from '../../modules/refunds/service.ts';\nexport type Context = Refund | typeof refund;\n",
      // Allowed: a module using another through its entry or a schema naming another's GraphQL types. Forbidden:
      // reaching past the entry into its store, from a module, a schema or an API surface.
      'src/modules/payments/index.ts': 'export const entry = 1;\n',
      'src/modules/payments/schema.ts': 'export type PaymentRef = 1;\n',
      'src/modules/disputes/service.ts':
        "import type { Store } from '../payments/store.ts';\nimport { entry } from '../payments/index.ts';\nexport type Dispute = Store | typeof entry;\n",
      'src/modules/disputes/schema.ts':
        "import type { PaymentRef } from '../payments/schema.ts';\nimport type { Store } from '../payments/store.ts';\nexport type DisputeRef = PaymentRef | Store;\n",
      'src/api/routes/disputes.ts':
        "import type { Store } from '../../modules/payments/store.ts';\nimport { entry } from '../../modules/payments/index.ts';\nexport type Route = Store | typeof entry;\n",
      // Forbidden: any cycle, of values or of types only (as the outbox and the payment store once were).
      'src/modules/a/service.ts': "import { b } from './store.ts';\nexport const a = () => b;\n",
      'src/modules/a/store.ts': "import { a } from './service.ts';\nexport const b = () => a;\n",
      'src/modules/events/outbox.ts': "import type { Delivery } from './delivery.ts';\nexport type Outbox = Delivery;\n",
      'src/modules/events/delivery.ts': "import type { Outbox } from './outbox.ts';\nexport type Delivery = { outbox?: Outbox };\n",
      'src/modules/payments/store.ts': 'export type Store = 1;\n',
      // Forbidden: the fake processors importing the product, even its pure kernel code; a cycle among them.
      'sandbox/src/cards.ts': "import { hash } from '../../src/kernel/money.ts';\nexport const card = hash;\n",
      'sandbox/src/store.ts': "import type { Processor } from './processors.ts';\nexport type Store = { processor?: Processor };\n",
      'sandbox/src/processors.ts': "import type { Store } from './store.ts';\nexport type Processor = { store?: Store };\n",
      'sandbox/src/server.ts': 'export const server = 1;\n',
      'sandbox/src/index.ts': "export { server } from './server.ts';\n",
      // Allowed: the demo starting the fake processors through their entry. Forbidden: it reaching past the
      // entry, and any other product file importing them.
      'src/main/start.ts':
        "import { server } from '../../sandbox/src/index.ts';\nimport { server as inner } from '../../sandbox/src/server.ts';\nexport const demo = [server, inner];\n",
      'src/modules/connectors/fake.ts': "import { server } from '../../../sandbox/src/index.ts';\nexport const fake = server;\n",
      // Forbidden: browser code importing a Node built-in or server-side code.
      'src/web/page.ts': "import { readFileSync } from 'node:fs';\nexport const page = readFileSync;\n",
      'packages/js/src/index.ts': "import { database } from '../../../src/platform/db/client.ts';\nexport const sdk = database;\n",
      // Allowed: a package bundling the card rules, and using another package through its entry. Forbidden: a
      // package importing any other product file, or another package's inner file; the card rules importing anything.
      'src/kernel/cards.ts': "import { hash } from './money.ts';\nexport const cardProblem = hash;\n",
      'packages/client-core/src/index.ts': "export { retry } from './retry.ts';\n",
      'packages/client-core/src/retry.ts': 'export const retry = 1;\n',
      'packages/node/src/index.ts':
        "import { cardProblem } from '../../../src/kernel/cards.ts';\nimport { retry } from '../../client-core/src/index.ts';\nexport const node = [cardProblem, retry];\n",
      'packages/node/src/money.ts': "import { ledger } from '../../../src/kernel/ledger.ts';\nexport const money = ledger;\n",
      'packages/medusa/src/index.ts': "import { retry } from '../../client-core/src/retry.ts';\nexport const medusa = retry;\n",
      // Forbidden: an import that resolves to nothing.
      'src/modules/refunds/typo.ts': "import { gone } from './missing.ts';\nexport const typo = gone;\n",
    });
    fixtures.push(root);

    expect(await violationsIn(root)).toEqual([
      'api-not-to-main: src/api/schema.ts → src/main/run.ts',
      'browser-not-to-node: src/web/page.ts → fs',
      'browser-not-to-server: packages/js/src/index.ts → src/platform/db/client.ts',
      'demo-starts-sandbox-through-its-entry: src/main/start.ts → sandbox/src/server.ts',
      'graphql-context-types-only: src/platform/graphql/context.ts → src/modules/refunds/service.ts',
      'kernel-is-pure: src/kernel/ledger.ts → node_modules/pg/index.js',
      'machines-are-pure: src/modules/payments/machine/leaky.ts → src/modules/payments/service.ts',
      'modules-not-to-surfaces: src/modules/payments/service.ts → src/api/schema.ts',
      'modules-through-their-entry: src/modules/disputes/service.ts → src/modules/payments/store.ts',
      // Reported once per cycle.
      'no-circular: sandbox/src/processors.ts → sandbox/src/store.ts',
      'no-circular: src/modules/a/service.ts → src/modules/a/store.ts',
      'no-circular: src/modules/events/delivery.ts → src/modules/events/outbox.ts',
      'not-to-unresolvable: src/modules/refunds/typo.ts → ./missing.ts',
      'packages-only-the-shared-rules-of-the-product: packages/js/src/index.ts → src/platform/db/client.ts',
      'packages-only-the-shared-rules-of-the-product: packages/node/src/money.ts → src/kernel/ledger.ts',
      'packages-through-their-entries: packages/medusa/src/index.ts → packages/client-core/src/retry.ts',
      'platform-not-to-modules: src/platform/db/client.ts → src/modules/refunds/service.ts',
      'product-not-to-sandbox: src/modules/connectors/fake.ts → sandbox/src/index.ts',
      'sandbox-is-outside-the-product: sandbox/src/cards.ts → src/kernel/money.ts',
      'schemas-through-their-entry: src/modules/disputes/schema.ts → src/modules/payments/store.ts',
      'shared-rules-import-nothing: src/kernel/cards.ts → src/kernel/money.ts',
      'surfaces-through-module-entries: src/api/routes/disputes.ts → src/modules/payments/store.ts',
    ]);
  });
});
