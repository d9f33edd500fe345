// The processor-sync module's public entry: what other modules, the API and the processes may use of it.
export { PaymentSyncQueue } from './jobs.ts';
export { type PaymentSyncJob, type PaymentSyncScheduler, type ResourceSyncJob } from './scheduler.ts';
export { askProcessor, runSyncStep, watchOpen } from './steps.ts';
