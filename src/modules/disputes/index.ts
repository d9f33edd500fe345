// The disputes module's public entry: what other modules, the API and the processes may use of it.
export { type DisputeCallbackResult, type DisputeService } from './service.ts';
