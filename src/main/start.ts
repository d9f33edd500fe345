// `npm start`: the whole product on one machine for a demo or local development. Creates and migrates the
// database, ensures the demo merchant, starts every role in this process, and prints what to do next.
import { startTracing } from '../platform/tracing.ts';
import { run } from './run.ts';
import type { Sandbox } from '../../sandbox/src/index.ts';

// Before the app's modules load, so that the libraries tracing patches are patched (docs/operations.md, "Tracing"):
// with OTEL_EXPORTER_OTLP_ENDPOINT set, the demo traces its one process as the API and worker trace theirs.
const stopTracing = await startTracing('payments');
const { startApi } = await import('./api-app.ts');
const { loadConfig } = await import('../platform/config.ts');
const { migrate } = await import('../platform/db/migrate.ts');
const { ensureDatabase } = await import('../platform/db/reachability.ts');
const { createLogger } = await import('../platform/logger.ts');
const { DemoKeyMismatchError, ensureDemoMerchant } = await import('../modules/merchants/index.ts');
const { ensureDemoOwner } = await import('../modules/team/index.ts');
const { StartupError } = await import('../platform/startup-error.ts');
// The demo runs the sandbox processors in this process, as it runs every role: the one place the product starts them.
const { loadSandboxConfig, startSandboxFromConfig, StartupError: SandboxStartupError } = await import('../../sandbox/src/index.ts');
const { startWorker } = await import('./worker-app.ts');
const { DEFAULT_DEMO_SECRETS_FILE, loadOrCreateDemoSecrets } = await import('./demo-secrets.ts');

run('start', async () => {
  // Production sets ENCRYPTION_KEY and ADMIN_API_KEY and runs the roles apart; the demo makes its own, once.
  const secretsFile = process.env.DEMO_SECRETS_FILE || DEFAULT_DEMO_SECRETS_FILE;
  const secrets = loadOrCreateDemoSecrets(secretsFile);
  const sandbox = await startDemoSandbox();
  // Only this machine reaches the demo, and its test-mode webhooks reach only this machine (the example
  // receiver), unless the environment says otherwise; the API calls the sandbox where it actually listens.
  const config = loadConfig({
    LOG_LEVEL: 'warn',
    HOST: '127.0.0.1',
    SANDBOX_URL: sandbox.url,
    WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'loopback',
    ENCRYPTION_KEY: secrets.encryptionKey,
    ADMIN_API_KEY: secrets.adminApiKey,
    ...withoutEmpty(process.env),
  });
  const logger = createLogger(config.LOG_LEVEL);
  await ensureDatabase(config.DATABASE_URL);
  await migrate(config.DATABASE_URL);
  const api = await startApi(config, logger);
  const worker = await startWorker(config, logger);
  const demo = await ensureDemoMerchant(api.context, secrets).catch((error: unknown) => {
    if (!(error instanceof DemoKeyMismatchError)) throw error;
    throw new StartupError(
      `${error.message} (was ${secretsFile} deleted?); restore that file, or drop the database (dropdb ${new URL(config.DATABASE_URL).pathname.slice(1)}) to start afresh`,
    );
  });
  // The sandbox's callbacks for the demo's account come back to this API, so the whole loop runs here.
  const demoKey = { kind: 'secretKey', merchantId: demo.merchantId, mode: 'TEST', keyId: demo.secretKeyId } as const;
  await api.services.connectorCallbacks.register(demoKey, demo.merchantId, demo.connectorAccountId).catch((error: unknown) => {
    logger.warn({ err: error }, 'could not register the demo connector account’s callbacks; its payments rely on sync');
  });
  const owner = await ensureDemoOwner(api.services.team, demo.merchantId, secrets.dashboardPassword);
  const graphql = `${api.url}/graphql`;
  process.stdout.write(
    [
      '',
      'Payments service is running.',
      '',
      `  Hosted checkout          ${api.services.paymentLinks.urlOf({ id: demo.paymentLinkId })}  (a demo payment link: Pay opens the checkout)`,
      `                           or ${api.url}/checkout#client_secret=<a payment's clientSecret>&publishable_key=${demo.publishableKey}`,
      `  Dashboard                ${api.url}/dashboard/login  email ${owner.email}  password ${secrets.dashboardPassword}  (docs/dashboard.md)`,
      `  Browser SDK              ${api.url}/sdk/payments.js  (ES module; docs/checkout.md)`,
      `  GraphQL API + GraphiQL   ${graphql}`,
      `  Health / ready / metrics ${api.url}/health  ${api.url}/ready  ${api.url}/metrics  (the worker's: ${worker.metricsUrl})`,
      `  Sandbox processor        ${sandbox.url}  (test cards: 4242424242424242 succeeds, 4000002500003155 asks for 3DS, 4000000000000002 declines)`,
      '',
      'Demo merchant (test mode):',
      `  merchant id              ${demo.merchantId}`,
      `  business profile id      ${demo.profileId}`,
      `  secret key               ${demo.secretKey}`,
      `  publishable key          ${demo.publishableKey}`,
      `  webhook signing key      ${demo.paymentResponseHashKey}`,
      `  sandbox connector        ${demo.connectorAccountId}  (its callbacks come to ${api.url}/webhooks/${demo.merchantId}/${demo.connectorAccountId})`,
      `  admin key                ${config.ADMIN_API_KEY === secrets.adminApiKey ? config.ADMIN_API_KEY : '(from ADMIN_API_KEY)'}`,
      `  (these keys, the dashboard password and the demo's ENCRYPTION_KEY were generated at random on its first start and are kept in ${secretsFile})`,
      '',
      'Try it:',
      `  curl -s ${graphql} -H 'content-type: application/json' -H 'api-key: ${demo.secretKey}' \\`,
      `    -d '{"query":"{ merchant { id name businessProfiles { id name } apiKeys { redacted type mode } } }"}'`,
      '',
      'Receive its webhooks (signed, verified, deduplicated) in another terminal:',
      `  WEBHOOK_KEY=${demo.paymentResponseHashKey} npx tsx examples/webhook-receiver/receiver.ts`,
      "  then set the profile's webhookUrl to http://127.0.0.1:4300/ (docs/webhooks.md).",
      '',
      `Open ${graphql} in a browser for GraphiQL (add the header {"api-key": "<secret key>"}).`,
      'The README walks through a card payment (and 3D Secure in a browser) with these keys.',
      'Stop with Ctrl+C.',
      '',
    ].join('\n'),
  );
  return async () => {
    await api.close();
    await worker.close();
    await sandbox.close();
    await stopTracing();
  };
});

/** The sandbox from its SANDBOX_* settings; its start-up errors (a bad setting, a taken port) are the demo's, one line each. */
async function startDemoSandbox(): Promise<Sandbox> {
  try {
    return await startSandboxFromConfig(loadSandboxConfig());
  } catch (error) {
    throw error instanceof SandboxStartupError ? new StartupError(error.message) : error;
  }
}

/** The environment without its empty variables, which mean "unset" and so must not hide the demo's values. */
function withoutEmpty(env: NodeJS.ProcessEnv): Record<string, string> {
  return Object.fromEntries(Object.entries(env).filter((entry): entry is [string, string] => Boolean(entry[1])));
}
