// The layer rules in .dependency-cruiser.cjs (run by `npm test` as `npm run lint:deps`): today's src/ passes,
// and a small tree with one import of each forbidden kind fails with exactly those violations.
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
  const { output } = await cruise(['src'], { ...options, baseDir }, {}, { tsConfig });
  return (output as ICruiseResult).summary.violations.map(({ rule, from, to }) => `${rule.name}: ${from} → ${to}`).sort();
}

/** Files under a fresh directory, `path: source`; a fake `pg` package stands in for an I/O library. */
function tree(files: Record<string, string>) {
  const root = mkdtempSync(path.join(tmpdir(), 'dependency-rules-'));
  for (const [file, source] of Object.entries({ ...files, 'node_modules/pg/package.json': '{"name":"pg","main":"index.js"}', 'node_modules/pg/index.js': 'module.exports = {};' })) {
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
  it('today\'s src/ has no violations', async () => {
    expect(await violationsIn(REPOSITORY)).toEqual([]);
  });

  it('fails each forbidden import and lets the allowed ones and the known exceptions pass', async () => {
    const root = tree({
      // Allowed: domain code using node:crypto and other domain code; services using the domain.
      'src/domain/money.ts': "import { createHash } from 'node:crypto';\nexport const hash = createHash;\n",
      'src/services/refunds.ts': "import { hash } from '../domain/money.ts';\nexport const refund = hash;\n",
      // Forbidden: the domain importing an I/O library, and (even for a type) a service.
      'src/domain/ledger.ts': "import pg from 'pg';\nexport const ledger = pg;\n",
      'src/domain/leaky.ts': "import type { Refund } from '../services/payments.ts';\nexport type Leaky = Refund;\n",
      // Forbidden: a service importing the GraphQL schema (an outer layer).
      'src/services/payments.ts': "import { schema } from '../graphql/schema.ts';\nexport type Refund = typeof schema;\n",
      'src/graphql/schema.ts': 'export const schema = 1;\n',
      // Forbidden: a new cycle. Allowed: the known one between the outbox and the payment store.
      'src/services/a.ts': "import { b } from './b.ts';\nexport const a = () => b;\n",
      'src/services/b.ts': "import { a } from './a.ts';\nexport const b = () => a;\n",
      'src/services/events/event-outbox.ts': "import type { Store } from '../payments/payment-store.ts';\nexport type Outbox = Store;\n",
      'src/services/payments/payment-store.ts': "import type { Outbox } from '../events/event-outbox.ts';\nexport type Store = { outbox?: Outbox };\n",
      // Forbidden: the worker importing the HTTP server. Allowed: the shared adapters' webhook client.
      'src/worker/queue.ts': "import { server } from '../http/server.ts';\nexport const queue = server;\n",
      'src/worker/adapters.ts': "import { sender } from '../http/webhook-sender.ts';\nexport const adapters = sender;\n",
      'src/http/server.ts': 'export const server = 1;\n',
      'src/http/webhook-sender.ts': 'export const sender = 1;\n',
      'src/http/listen.ts': 'export const listen = 1;\n',
      // Forbidden: the fake processor importing a service, or a new file of it using the API's HTTP helpers.
      // Allowed: pure domain code, and the known exception (server.ts and the helpers).
      'src/sandbox/cards.ts': "import type { Refund } from '../services/payments.ts';\nimport { hash } from '../domain/money.ts';\nexport type Card = Refund | typeof hash;\n",
      'src/sandbox/banks.ts': "import { listen } from '../http/listen.ts';\nexport const banks = listen;\n",
      'src/sandbox/server.ts': "import { listen } from '../http/listen.ts';\nexport const server = listen;\n",
      // Forbidden: browser code importing a Node built-in or server-side code.
      'src/web/page.ts': "import { readFileSync } from 'node:fs';\nexport const page = readFileSync;\n",
      'src/sdk/index.ts': "import { database } from '../db/client.ts';\nexport const sdk = database;\n",
      'src/db/client.ts': 'export const database = 1;\n',
      // Forbidden: an import that resolves to nothing.
      'src/services/typo.ts': "import { gone } from './missing.ts';\nexport const typo = gone;\n",
    });
    fixtures.push(root);

    expect(await violationsIn(root)).toEqual([
      'browser-not-to-node: src/web/page.ts → fs',
      'browser-not-to-server: src/sdk/index.ts → src/db/client.ts',
      'domain-is-pure: src/domain/leaky.ts → src/services/payments.ts',
      'domain-is-pure: src/domain/ledger.ts → node_modules/pg/index.js',
      // Reported once per cycle.
      'no-circular: src/services/a.ts → src/services/b.ts',
      'not-to-unresolvable: src/services/typo.ts → ./missing.ts',
      'sandbox-is-outside-the-product: src/sandbox/cards.ts → src/services/payments.ts',
      'sandbox-known-exceptions-stay-narrow: src/sandbox/banks.ts → src/http/listen.ts',
      'services-not-to-entry-surfaces: src/services/payments.ts → src/graphql/schema.ts',
      'worker-not-to-api-surfaces: src/worker/queue.ts → src/http/server.ts',
    ]);
  });
});
