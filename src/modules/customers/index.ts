// The customers module's public entry: what other modules, the API and the processes may use of it.
export { type CustomerService } from './service.ts';
export { customerId } from './inputs.ts';
