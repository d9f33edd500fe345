// The server SDK's webhooks: `webhooks.verify` and the types of every event (docs/webhooks.md, "Verifying with the SDK").
import { verify } from './verify.ts';

export const webhooks = { verify };
export { DEFAULT_TOLERANCE_SECONDS, WebhookVerificationError, type VerifyWebhookOptions, type WebhookHeaders, type WebhookVerificationCode } from './verify.ts';
export type * from './types.ts';
