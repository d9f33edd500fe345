// The layer rules `npm test` enforces (`npm run lint:deps`, over src/, the sandbox package sandbox/ and the
// installable packages packages/); docs/architecture.md explains the layers.
// Each layer is one regular expression below, so reorganising the tree means re-aiming these, not the rules.
// .cjs keeps it CommonJS under package.json's "type": "module" (dependency-cruiser imports .cjs and .mjs alike).

const KERNEL = '^src/kernel/';
// A module's pure files: its state machine and the rules and values beside it (no I/O, no services), and each
// connector's wire types, status and decline maps and callback parsing (the connector port is pure too).
const MODULE_PURE = [
  '^src/modules/[^/]+/(machine|machine/[a-z-]+|methods|surcharges|catalog|retry-schedule|signature|wire|wire-schemas|bank-accounts|schedule|port|algorithm|roles)\\.ts$',
  '^src/modules/connectors/[a-z-]+/(wire|status-map|decline-map|callbacks)\\.ts$',
  '^src/modules/connectors/not-supported\\.ts$',
];
const MODULES = '^src/modules/';
// A module's public entry, its GraphQL schema files, and the composition that builds every module.
const MODULE_ENTRY = '^src/modules/[^/]+/index\\.ts$';
const MODULE_SCHEMA = '^src/modules/[^/]+/[a-z-]*schema\\.ts$';
const MODULES_COMPOSITION = '^src/modules/services\\.ts$';
const PLATFORM = '^src/platform/';
const API = '^src/api/';
const MAIN = '^src/main/';
// The pages' scripts and the browser SDK.
const BROWSER = ['^src/web/', '^packages/js/src/'];
const GENERATED = '^src/generated/';
// The product, and the fake processors' own package (docs/sandbox.md), which stands apart from it.
const PRODUCT = '^src/';
const SANDBOX = '^sandbox/';
// The installable packages (docs/sdk.md): each is built and shipped on its own, bundling what it imports.
const PACKAGES = '^packages/';
// What the packages' builds share (packages/tsup-shared.ts) and the one entry a package may import another by.
const PACKAGE_ENTRY = '^packages/[^/]+/src/index\\.ts$';
const PACKAGE_BUILD_SHARED = '^packages/tsup-shared\\.ts$';
// The product files the packages may import, each bundled by the package's build so the service and the
// package keep one copy: the card rules (the browser SDK checks cards before sending them) and the currency
// exponents (the Medusa provider converts Medusa's major units to the API's minor units).
const SHARED_RULES = '^src/kernel/(cards|money)\\.ts$';
// The one product file that starts the fake processors (the demo runs every role in one process), and what it may import of them.
const DEMO = '^src/main/start\\.ts$';
const SANDBOX_ENTRY = '^sandbox/src/index\\.ts$';

// Libraries that open sockets, files or processes, or only run on a server.
const IO_LIBRARIES = 'node_modules/(pg|ioredis|bullmq|@prisma|prisma|graphql-yoga|@graphql-yoga|ws|pino|prom-client|esbuild|rate-limiter-flexible)/';
// Everything server-side in src/: what the browser bundle must not pull in.
const SERVER_SIDE = ['^src/(modules|platform|api|main|generated)/'];
// What pure code may import: pure code, node:crypto (hashing, random ids) and zod.
const PURE_IMPORTS = [KERNEL, ...MODULE_PURE, '^(node:)?crypto$', 'node_modules/zod/'];

// Today's exceptions, file by file, each to remove rather than to copy.
const KNOWN_EXCEPTIONS = {
  // The per-request GraphQL context names the types the composition fills it with (services, live feed, gate).
  graphqlContext: '^src/platform/graphql/context\\.ts$',
};

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'kernel-is-pure',
      severity: 'error',
      comment:
        'The kernel (ids, money, errors, cards, ...) is pure values and rules shared by every layer and the browser: it imports only itself, node:crypto and zod.',
      from: { path: KERNEL },
      to: { pathNot: PURE_IMPORTS },
    },
    {
      name: 'machines-are-pure',
      severity: 'error',
      comment: "A module's state machine and the rules beside it are pure: they import pure code only, nothing that does I/O and no service.",
      from: { path: MODULE_PURE },
      to: { pathNot: PURE_IMPORTS },
    },
    {
      name: 'platform-not-to-modules',
      severity: 'error',
      comment:
        'The platform (database, HTTP, GraphQL builder, queues, config, logging) is what modules stand on: it imports no module, no API surface and no process entry point. One known exception imports types only: the GraphQL context.',
      from: { path: PLATFORM, pathNot: KNOWN_EXCEPTIONS.graphqlContext },
      to: { path: [MODULES, API, MAIN] },
    },
    {
      name: 'graphql-context-types-only',
      severity: 'error',
      comment: 'The GraphQL context may name the types of what fills it, never import their code.',
      from: { path: KNOWN_EXCEPTIONS.graphqlContext },
      to: { path: [MODULES, API, MAIN], dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'modules-not-to-surfaces',
      severity: 'error',
      comment: 'Modules are what the API and the worker call; they never reach back into the API surfaces or the process entry points.',
      from: { path: MODULES },
      to: { path: [API, MAIN] },
    },
    {
      name: 'modules-through-their-entry',
      severity: 'error',
      comment:
        "A module uses another only through its index.ts (or its pure files: state tables, wire objects, the connector port), never its services' or stores' insides.",
      from: { path: '^src/modules/([^/]+)/', pathNot: MODULE_SCHEMA },
      to: { path: MODULES, pathNot: ['^src/modules/$1/', MODULE_ENTRY, ...MODULE_PURE] },
    },
    {
      name: 'schemas-through-their-entry',
      severity: 'error',
      comment: "A module's GraphQL schema may also name another module's GraphQL types (its schema files); nothing else of it but its entry and pure files.",
      from: { path: '^src/modules/([^/]+)/[a-z-]*schema\\.ts$' },
      to: { path: MODULES, pathNot: ['^src/modules/$1/', MODULE_ENTRY, MODULE_SCHEMA, ...MODULE_PURE] },
    },
    {
      name: 'surfaces-through-module-entries',
      severity: 'error',
      comment: "The API and the processes use a module through its entry (the API's schema gathers the schema files; src/modules/services.ts builds them all).",
      from: { path: [API, MAIN] },
      to: { path: MODULES, pathNot: [MODULE_ENTRY, MODULE_SCHEMA, MODULES_COMPOSITION, ...MODULE_PURE] },
    },
    {
      name: 'api-not-to-main',
      severity: 'error',
      comment: 'The API surfaces (HTTP server, GraphQL server, REST routes) are composed by src/main; they do not import it.',
      from: { path: API },
      to: { path: MAIN },
    },
    {
      name: 'sandbox-is-outside-the-product',
      severity: 'error',
      comment:
        "The fake processors stand in for third parties: they talk to the product over HTTP only and import nothing of it, not even its kernel (a bug in the product's card rules must not hide behind shared code).",
      from: { path: SANDBOX },
      to: { path: PRODUCT },
    },
    {
      name: 'product-not-to-sandbox',
      severity: 'error',
      comment: 'The product calls the fake processors over HTTP, like real ones; only the demo (npm start) starts them, in its own process.',
      from: { path: PRODUCT, pathNot: DEMO },
      to: { path: SANDBOX },
    },
    {
      name: 'demo-starts-sandbox-through-its-entry',
      severity: 'error',
      comment: "The demo starts the fake processors through their package's entry (sandbox/src/index.ts), never their inner files.",
      from: { path: DEMO },
      to: { path: SANDBOX, pathNot: SANDBOX_ENTRY },
    },
    {
      name: 'browser-not-to-node',
      severity: 'error',
      comment: 'The browser SDK and the pages run in browsers: no Node built-in module.',
      from: { path: BROWSER },
      to: { dependencyTypes: ['core'] },
    },
    {
      name: 'browser-not-to-server',
      severity: 'error',
      comment: 'The browser SDK and the pages reach the server over HTTP only; they may share pure domain code, nothing server-side, no server-only library.',
      from: { path: BROWSER },
      to: { path: [...SERVER_SIDE, IO_LIBRARIES] },
    },
    {
      name: 'packages-only-the-shared-rules-of-the-product',
      severity: 'error',
      comment:
        "The packages run in merchants' servers and browsers and talk to the service over HTTP: of the product they import only its card rules and currency exponents (src/kernel/cards.ts and money.ts, which their builds bundle), never server-side code.",
      from: { path: PACKAGES },
      to: { path: PRODUCT, pathNot: SHARED_RULES },
    },
    {
      name: 'shared-rules-import-nothing',
      severity: 'error',
      comment: "The shared rules are bundled into the packages: whatever they imported would ship to merchants' servers and browsers with them.",
      from: { path: SHARED_RULES },
      to: {},
    },
    {
      name: 'packages-through-their-entries',
      severity: 'error',
      comment:
        "A package uses another by its name (its src/index.ts), never its inner files, which a build would bundle a second copy of; the builds' shared settings are the one file beside them.",
      from: { path: '^packages/([^/]+)/' },
      to: { path: PACKAGES, pathNot: ['^packages/$1/', PACKAGE_ENTRY, PACKAGE_BUILD_SHARED] },
    },
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'Import cycles make load order matter and tangle modules: none is allowed. Generated Prisma code is not ours.',
      from: { path: [PRODUCT, SANDBOX, PACKAGES], pathNot: GENERATED },
      to: { circular: true },
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
    // A package's node_modules (its own dependencies' versions) and its build output are not ours.
    exclude: { path: '^packages/[^/]+/(node_modules|dist)/' },
    tsConfig: { fileName: 'tsconfig.json' },
    // Type-only imports count: they couple modules just the same.
    tsPreCompilationDeps: true,
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      // The packages resolve to their TypeScript source in this repository, as tsconfig.json's customConditions has them.
      conditionNames: ['@payments-orchestrator/source', 'import', 'require', 'node', 'default', 'types'],
      extensions: ['.ts', '.d.ts', '.js', '.mjs', '.cjs', '.json'],
      // Type-only packages (e.g. @graphql-typed-document-node/core) resolve through their typings.
      mainFields: ['module', 'main', 'types', 'typings'],
    },
  },
};
