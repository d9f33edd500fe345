import { fileURLToPath } from 'node:url';
import { configDefaults, defineConfig } from 'vitest/config';

// The suite's files that stop and restart a Redis server of their own (test/support/redis-server.ts): a client
// of the service left reconnecting to it after the file ends (seen after routing/redis-down.test.ts) would
// keep failing, and logging, in every later file of a shared worker. They get a fresh process each.
const OWN_REDIS_FILES = [
  'test/cache/read-cache.test.ts',
  'test/routing/redis-down.test.ts',
  'test/routing/redis-unanswering.test.ts',
  'test/subscriptions/redis-loss.test.ts',
];

/** The timeouts and group of both the suite's projects. */
const SUITE_LIMITS = { testTimeout: 30_000, hookTimeout: 60_000, sequence: { groupOrder: 0 } };

export default defineConfig({
  resolve: {
    // Load graphql the way Node does (its CommonJS entry), so our code and the libraries share one copy;
    // Vite would otherwise pick graphql's ESM build for our files and schemas would come from two "realms".
    alias: [{ find: /^graphql$/, replacement: fileURLToPath(new URL('node_modules/graphql/index.js', import.meta.url)) }],
  },
  // The published packages from their TypeScript source, as tsconfig.json's customConditions has them (docs/sdk.md,
  // "Building the packages"); the rest are Vitest's own defaults, which setting these replaces (Vite's server
  // conditions but `module`). Vitest passes them to its workers' Node too (--conditions).
  ssr: { resolve: { conditions: ['@payments-orchestrator/source', 'node', 'development|production'] } },
  test: {
    // One fresh database per project and run (test/support/global-setup.ts), dropped at the end.
    globalSetup: ['test/support/global-setup.ts'],
    reporters: ['default', './test/support/summary-reporter.ts'],
    // Medusa's app loader (the medusa project) looks for the link modules of @medusajs/medusa, not installed
    // since the tests load the payment module alone, and warns about it on every start: noise.
    onConsoleLog: (log) => !log.startsWith('Error initializing link modules.'),
    // Test files share their project's database; each test creates its own merchants, so files run in parallel.
    maxWorkers: 2,
    projects: [
      {
        extends: true,
        test: {
          name: 'suite',
          include: ['test/**/*.test.ts'],
          exclude: [...configDefaults.exclude, 'test/faults/**', 'test/medusa/**', ...OWN_REDIS_FILES],
          // Each worker process runs file after file and imports the service (Prisma's client, graphql, the
          // Pothos schema, BullMQ…) once, not once per file: isolated, each file paid a fresh process and about
          // a second of imports, more than most files' tests take, nearly two minutes of the run on 2 CPUs
          // (docs/development.md). No file needs a fresh module graph: none mocks modules or stubs globals or
          // the environment, fake timers are restored after their test, and what a file starts it closes.
          isolate: false,
          ...SUITE_LIMITS,
        },
      },
      { extends: true, test: { name: 'suite-isolated', include: OWN_REDIS_FILES, ...SUITE_LIMITS } },
      {
        // The Medusa provider (packages/medusa) driven through Medusa's own payment module, which
        // @medusajs/test-utils' moduleIntegrationTestRunner starts on a database of its own (test/medusa/database.ts).
        // The runner declares its suite with jest's globals, which vitest provides with `globals`.
        extends: true,
        resolve: {
          // The test utilities are the provider package's dev dependency, installed beside it only.
          alias: {
            '@medusajs/test-utils': fileURLToPath(new URL('packages/medusa/node_modules/@medusajs/test-utils', import.meta.url)),
          },
        },
        test: {
          name: 'medusa',
          include: ['test/medusa/**/*.test.ts'],
          globals: true,
          testTimeout: 60_000,
          hookTimeout: 120_000,
          sequence: { groupOrder: 0 },
        },
      },
      {
        // The fault-injection scenarios (test/faults): real API and worker processes killed, restarted and
        // raced, private PostgreSQL and Redis servers restarted. They run after the suite, never beside it:
        // each waits out leases and restarts, and must not compete with it for the 2 CPUs.
        extends: true,
        test: {
          name: 'faults',
          include: ['test/faults/**/*.test.ts'],
          testTimeout: 180_000,
          hookTimeout: 120_000,
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});
