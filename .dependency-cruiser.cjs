// The layer rules `npm test` enforces (`npm run lint:deps`); docs/architecture.md explains the layers.
// Each layer is one regular expression below, so reorganising the tree means re-aiming these, not the rules.
// .cjs keeps it CommonJS under package.json's "type": "module" (dependency-cruiser imports .cjs and .mjs alike).

const DOMAIN = '^src/domain/';
const SERVICES = '^src/services/';
const GRAPHQL = '^src/graphql/';
const HTTP = '^src/http/';
const WORKER = '^src/worker/';
const MAIN = '^src/main/';
const DB = '^src/db/';
const SANDBOX = '^src/sandbox/';
const BROWSER = '^src/(web|sdk)/';
const GENERATED = '^src/generated/';

// Libraries that open sockets, files or processes, or only run on a server.
const IO_LIBRARIES = 'node_modules/(pg|ioredis|bullmq|@prisma|prisma|graphql-yoga|@graphql-yoga|ws|pino|prom-client|esbuild|rate-limiter-flexible)/';
// Everything server-side in src/: what the browser bundle and the fake processors must not pull in.
const SERVER_SIDE = ['^src/(services|db|graphql|http|worker|main|connectors|realtime|generated)/', '^src/[^/]+\\.ts$'];

// Today's exceptions, file by file, each to remove rather than to copy.
const KNOWN_EXCEPTIONS = {
  // The one place both the API and the worker build their adapters, including the webhook HTTP client.
  workerToHttp: { from: '^src/worker/adapters\\.ts$', to: '^src/http/webhook-sender\\.ts$' },
  // The fake processor reuses the API's Node HTTP helpers (body reading, JSON replies, listening) and its config type.
  sandboxToProduct: {
    from: '^src/sandbox/(requests|customer|server)\\.ts$',
    to: ['^src/http/(node-bridge|listen)\\.ts$', '^src/config\\.ts$'],
  },
};
// Type-only import cycles that exist today (the outbox and the payment store name each other's types; the
// fake processor's store, processors, callbacks and wallets likewise). A cycle through any other module fails.
const KNOWN_CYCLE_MODULES = [
  '^src/services/(events/event-outbox|payments/payment-store)\\.ts$',
  '^src/sandbox/(store|processors|callbacks|wallets)\\.ts$',
].join('|'); // one expression: dependency-cruiser does not join arrays inside `via`

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'domain-is-pure',
      severity: 'error',
      comment: 'Domain code is pure rules and values: it imports other domain code, node:crypto (hashing, random ids) and zod, nothing that does I/O and no outer layer.',
      from: { path: DOMAIN },
      to: { pathNot: [DOMAIN, '^(node:)?crypto$', 'node_modules/zod/'] },
    },
    {
      name: 'services-not-to-entry-surfaces',
      severity: 'error',
      comment: 'Services are what the entry surfaces call; they never reach back into the GraphQL API, the HTTP server, the worker or the process entry points.',
      from: { path: SERVICES },
      to: { path: [GRAPHQL, HTTP, WORKER, MAIN] },
    },
    {
      name: 'graphql-not-to-other-surfaces',
      severity: 'error',
      comment: 'The GraphQL schema sits under the HTTP server, beside the worker: it must not import either, nor the process entry points.',
      from: { path: GRAPHQL },
      to: { path: [HTTP, WORKER, MAIN] },
    },
    {
      name: 'worker-not-to-api-surfaces',
      severity: 'error',
      comment: 'The worker runs without the API: it must not import the HTTP server or the GraphQL schema (one known exception: the shared adapters).',
      from: { path: WORKER, pathNot: KNOWN_EXCEPTIONS.workerToHttp.from },
      to: { path: [HTTP, GRAPHQL, MAIN] },
    },
    {
      name: 'worker-adapters-only-webhook-sender',
      severity: 'error',
      comment: 'The shared adapters may use the webhook HTTP client, nothing else of the API surfaces.',
      from: { path: KNOWN_EXCEPTIONS.workerToHttp.from },
      to: { path: [HTTP, GRAPHQL, MAIN], pathNot: KNOWN_EXCEPTIONS.workerToHttp.to },
    },
    {
      name: 'sandbox-is-outside-the-product',
      severity: 'error',
      comment: 'The fake processors stand in for third parties: they talk to the product over HTTP only, so they import nothing of it except pure domain code (ids). Known exceptions: the HTTP helpers and config type in requests.ts, customer.ts, server.ts.',
      from: { path: SANDBOX },
      to: { path: [...SERVER_SIDE, BROWSER], pathNot: KNOWN_EXCEPTIONS.sandboxToProduct.to },
    },
    {
      name: 'sandbox-known-exceptions-stay-narrow',
      severity: 'error',
      comment: 'Only the three files that share the HTTP helpers today may import them.',
      from: { path: SANDBOX, pathNot: KNOWN_EXCEPTIONS.sandboxToProduct.from },
      to: { path: KNOWN_EXCEPTIONS.sandboxToProduct.to },
    },
    {
      name: 'browser-not-to-node',
      severity: 'error',
      comment: 'The SDK and the pages run in browsers: no Node built-in module, no server-only library.',
      from: { path: BROWSER },
      to: { dependencyTypes: ['core'] },
    },
    {
      name: 'browser-not-to-server',
      severity: 'error',
      comment: 'The SDK and the pages reach the server over HTTP only; they may share pure domain code, nothing server-side.',
      from: { path: BROWSER },
      to: { path: [...SERVER_SIDE, SANDBOX, IO_LIBRARIES] },
    },
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'Import cycles make load order matter and tangle modules; the ones listed in KNOWN_CYCLE_MODULES are tolerated until removed, any other fails. Generated Prisma code is not ours.',
      from: { path: '^src/', pathNot: GENERATED },
      to: { circular: true, via: { pathNot: KNOWN_CYCLE_MODULES } },
    },
    {
      name: 'not-to-unresolvable',
      severity: 'error',
      comment: 'An import that does not resolve is a typo or a missing dependency.',
      from: {},
      to: { couldNotResolve: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsConfig: { fileName: 'tsconfig.json' },
    // Type-only imports count: they couple modules just the same.
    tsPreCompilationDeps: true,
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      extensions: ['.ts', '.d.ts', '.js', '.mjs', '.cjs', '.json'],
      // Type-only packages (e.g. @graphql-typed-document-node/core) resolve through their typings.
      mainFields: ['module', 'main', 'types', 'typings'],
    },
  },
};
