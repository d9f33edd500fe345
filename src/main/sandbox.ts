// Entry point of the sandbox card processor: a stand-in for a real processor, called by the service over HTTP.
import { loadSandboxConfig } from '../platform/config.ts';
import { startSandboxFromConfig } from '../sandbox/server.ts';
import { run } from './run.ts';

run('sandbox', async () => {
  const sandbox = await startSandboxFromConfig(loadSandboxConfig());
  process.stdout.write(`sandbox listening on ${sandbox.url}\n`);
  return sandbox.close;
});
