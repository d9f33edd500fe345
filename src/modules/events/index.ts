// The events module's public entry: what other modules, the API and the processes may use of it.
export { applyGuardedMove, type ApplyOutcome } from './guarded-moves.ts';
export { createWebhookSender } from './http-sender.ts';
export { startWebhookWorker, WebhookQueue } from './jobs.ts';
export { type CommittedEvent, type EventOutbox, type LivePublisher, type PreparedEvent, type WrittenEvent, type WrittenEventRow } from './outbox.ts';
export { type LiveEvents } from './service.ts';
export { registerWebhookQueueGauges } from './queue-gauges.ts';
