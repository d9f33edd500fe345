// What the sandbox offers a process that runs it beside the product (the demo's `npm start`): start it from
// its SANDBOX_* settings, and tell its start-up errors (one line each) from failures.
export { loadSandboxConfig } from './config.ts';
export { startSandboxFromConfig, type Sandbox } from './server.ts';
export { StartupError } from './startup-error.ts';
