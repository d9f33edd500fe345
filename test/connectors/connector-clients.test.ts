// ConnectorAccountService.connectorFor: one client per account row it is given, built once (credentials decrypted and
// validated, the processor's client made), so the payments routed to a row of the read cache share it; a row read
// again (an account changed, or read from the database rather than the cache) gets a client of its own.
import { afterAll, describe, expect, it } from 'vitest';
import { createServiceContext } from '../../src/main/service-context.ts';
import { ConnectorAccountService } from '../../src/modules/connectors/service.ts';
import { loadConfig } from '../../src/platform/config.ts';
import { createLogger } from '../../src/platform/logger.ts';
import { testEnv } from '../support/api.ts';

const context = createServiceContext(loadConfig(testEnv()), createLogger('silent'));
const accounts = new ConnectorAccountService(context);
afterAll(async () => {
  await context.db.$disconnect();
  await context.cache.close();
});

describe('a connector account’s client', () => {
  it('is built once per account row, and again for a row read again', () => {
    const row = {
      connectorName: 'sandbox',
      mode: 'TEST' as const,
      credentialsEncrypted: context.secretBox.seal(JSON.stringify({ apiKey: 'sk_sandbox_0123456789' })),
    };
    const client = accounts.connectorFor(row);
    expect(client.name).toBe('sandbox');
    expect(accounts.connectorFor(row)).toBe(client);
    const readAgain = { ...row };
    expect(accounts.connectorFor(readAgain)).not.toBe(client);
    expect(accounts.connectorFor(readAgain)).toBe(accounts.connectorFor(readAgain));
  });
});
