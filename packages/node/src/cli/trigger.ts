// `payments trigger <event_type>`: makes one event happen through the sandbox processor, by the recipe of
// recipes.ts, and waits until the service has recorded it (docs/cli.md).
import { createTransport } from '@payments-orchestrator/client-core';
import { DEFAULT_MAX_RETRIES, Payments } from '../client.ts';
import type { EventType } from '../gql/graphql.ts';
import { firstOf } from './first-of.ts';
import { isWebhookEventType, RECIPES, WEBHOOK_EVENT_TYPES, type TriggerContext } from './recipes.ts';
import { Refusal, UsageError, type Settings } from './settings.ts';

export interface TriggerOptions extends Settings {
  profileId?: string;
  /** How long to wait for each step (a dispute, a mandate) and for the event itself. */
  timeoutMs?: number;
}

const POLL_INTERVAL_MS = 250;

/** Causes `eventType` and answers the event's id and its object's id. */
export async function trigger(options: TriggerOptions, eventType: string): Promise<{ eventId: string; objectId: string }> {
  if (!isWebhookEventType(eventType)) throw new UsageError(`unknown event type ${JSON.stringify(eventType)}: one of ${WEBHOOK_EVENT_TYPES.join(', ')}`);
  const recipe = RECIPES[eventType];
  if ('refused' in recipe) throw new Refusal(`${eventType} cannot be triggered: ${recipe.refused}`);
  // The server SDK's client, and for the CLI's own operations a transport keyed and retried as its is
  // (docs/server-sdk.md, "Retries and idempotency"): a retried step never acts twice.
  const payments = new Payments({ apiKey: options.apiKey, baseUrl: options.baseUrl });
  const api = createTransport({ apiKey: options.apiKey, baseUrl: options.baseUrl, maxRetries: DEFAULT_MAX_RETRIES, idempotencyKeys: true });
  const profile = await firstOf(payments.businessProfiles.list(), (candidate) =>
    options.profileId ? candidate.id === options.profileId : candidate.isDefault,
  );
  if (profile === undefined)
    throw new UsageError(options.profileId ? `--profile: no business profile ${options.profileId}` : 'no default business profile: name one with --profile');
  const missing = recipe.needs?.(profile);
  if (missing) throw new Refusal(`${eventType} cannot be triggered on ${profile.id}: ${missing}`);
  const timeoutMs = options.timeoutMs ?? 60_000;
  const poll: TriggerContext['poll'] = async (what, check) => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const value = await check();
      if (value !== null && value !== undefined) return value;
      if (Date.now() > deadline) throw new Error(`gave up waiting ${timeoutMs / 1000} s for ${what}`);
      await new Promise((resolve) => setTimeout(resolve, POLL_INTERVAL_MS));
    }
  };
  const context = { payments, api, profile, poll };
  const objectId = await recipe.run(context);
  const eventTypes = [eventType.toUpperCase() as EventType];
  try {
    const eventId = await poll(
      `the ${eventType} event of ${objectId}`,
      async () => (await firstOf(payments.events.list({ objectId, eventTypes, first: 1 })))?.id,
    );
    return { eventId, objectId };
  } finally {
    await recipe.cleanUp?.(context, objectId);
  }
}
