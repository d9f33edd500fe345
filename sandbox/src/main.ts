// Entry point of the sandbox processors (`npm run start:sandbox`): a stand-in for real processors, called by
// the service over HTTP. A bad setting or a taken port is one line on stderr and exit code 1; SIGTERM and
// SIGINT close the server and exit 0, also when they arrive while it is still starting.
import { loadSandboxConfig } from './config.ts';
import { startSandboxFromConfig, type Sandbox } from './server.ts';
import { StartupError } from './startup-error.ts';

let sandbox: Sandbox | null = null;
let requested: NodeJS.Signals | null = null;

function shutDown(): void {
  if (sandbox === null || requested === null) return;
  process.stderr.write(`sandbox: ${requested} received, shutting down\n`);
  sandbox.close().then(
    () => process.exit(0),
    (error: unknown) => {
      process.stderr.write(`sandbox: shutdown failed: ${(error as Error).message}\n`);
      process.exit(1);
    },
  );
}

for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.once(signal, () => {
    requested ??= signal;
    shutDown();
  });
}

// Async, so a bad setting is a rejection like a taken port.
const starting = (async () => startSandboxFromConfig(loadSandboxConfig()))();
starting.then(
  (started) => {
    sandbox = started;
    process.stdout.write(`sandbox listening on ${started.url}\n`);
    shutDown();
  },
  (error: unknown) => {
    process.stderr.write(error instanceof StartupError ? `sandbox: error: ${(error as Error).message}\n` : `sandbox: fatal: ${(error as Error).stack}\n`);
    process.exit(1);
  },
);
