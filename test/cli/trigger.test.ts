// `payments trigger <event_type>` over the recipe table (packages/node/src/cli/recipes.ts) against the real
// service and sandbox: every type with a recipe makes its event happen on the merchant's profile (read back by
// the events query), every other one is refused with its reason, a recipe that needs a profile setting is
// refused on a profile without it, and docs/cli.md's table says what the recipes do. All triggers run at once.
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RECIPES, WEBHOOK_EVENT_TYPES, type WebhookEventType } from '../../packages/node/src/cli/recipes.ts';
import { Refusal } from '../../packages/node/src/cli/settings.ts';
import { trigger } from '../../packages/node/src/cli/trigger.ts';
import { EVENT_TYPES } from '../../src/modules/events/catalog.ts';
import { EventDocument, RecurringSubscriptionDocument, UpdateBusinessProfileDocument } from '../gql/graphql.ts';
import { runCli } from '../support/cli.ts';
import { dataOf } from '../support/graphql-client.ts';
import { merchantWithSandbox, startStack, type Stack } from '../support/stack.ts';
import { ownDatabase } from '../support/database.ts';
import type { ScratchDatabase } from '../../src/platform/db/scratch-database.ts';

/** A database of this file's own: its worker sweeps, and a sweep acts on every row of its database (docs/development.md). */
let database: ScratchDatabase;
let stack: Stack;
let shop: Awaited<ReturnType<typeof merchantWithSandbox>>;
/** Every trigger, started at once in beforeAll: what each ended with. */
const outcomes = new Map<WebhookEventType, Promise<{ eventId: string; objectId: string } | { error: unknown }>>();

beforeAll(async () => {
  database = await ownDatabase();
  stack = await startStack({
    sandboxBankDebitSettleMs: 300,
    sandboxRefundSettleMs: 200,
    sandboxDisputeOpenMs: 200,
    // payout_cancelled's cancel must reach the sandbox while the payout is still pending, though all 33 triggers
    // run at once on a busy machine; the payouts that settle take two of these steps, well within the timeout.
    sandboxPayoutSettleMs: 5_000,
    env: { DATABASE_URL: database.url, PAYMENT_EXPIRY_SWEEP_MS: '100', SUBSCRIPTION_SWEEP_MS: '100' },
  });
  shop = await merchantWithSandbox(stack);
  // The sandbox's callbacks (disputes open by one) reach the service once registered, as the demo merchant's are.
  const registered = await fetch(`${stack.api.url}/account/${shop.merchantId}/webhooks/${shop.connectorAccountId}`, {
    method: 'POST',
    headers: { 'api-key': shop.secretKey },
  });
  expect(registered.status).toBe(200);
  // The settings the recipes that need one ask for (each refused without it, below); 60 s is the shortest session.
  const settings = { allowPartialAuthorization: true, payoutLimit: 100_000, surcharges: [{ paymentMethodType: 'CARD' as const, fixedAmount: 25 }] };
  dataOf(await shop.secret(UpdateBusinessProfileDocument, { input: { profileId: shop.profileId, ...settings, sessionExpirySeconds: 60 } }));
  const settingsOf = { apiKey: shop.secretKey, baseUrl: stack.api.url, timeoutMs: 60_000 };
  for (const eventType of WEBHOOK_EVENT_TYPES) {
    outcomes.set(
      eventType,
      trigger(settingsOf, eventType).catch((error: unknown) => ({ error })),
    );
  }
});
afterAll(async () => {
  await Promise.all(outcomes.values());
  await stack?.close();
  await database?.drop();
});

describe('payments trigger', () => {
  it('has a recipe or a refusal for each of the 33 event types', () => {
    expect([...WEBHOOK_EVENT_TYPES].sort()).toEqual([...EVENT_TYPES].sort());
  });

  it.each(WEBHOOK_EVENT_TYPES)(
    '%s: happens on the merchant’s profile, or is refused with its reason',
    async (eventType) => {
      const recipe = RECIPES[eventType];
      const outcome = await outcomes.get(eventType)!;
      if ('refused' in recipe) {
        expect(outcome).toEqual({ error: expect.any(Refusal) });
        expect((outcome as { error: Refusal }).error.message).toBe(`${eventType} cannot be triggered: ${recipe.refused}`);
        return;
      }
      if ('error' in outcome) throw outcome.error;
      const { event } = dataOf(await shop.secret(EventDocument, { id: outcome.eventId }));
      expect(event).toMatchObject({ eventType: eventType.toUpperCase(), objectId: outcome.objectId, profileId: shop.profileId, mode: 'TEST' });
    },
    90_000,
  );

  it('leaves no test subscription running: invoice_paid cancels the one it charged once its event is recorded', async () => {
    const outcome = await outcomes.get('invoice_paid')!;
    if ('error' in outcome) throw outcome.error;
    const { subscription } = dataOf(await shop.secret(RecurringSubscriptionDocument, { id: outcome.objectId }));
    expect(subscription.status).toBe('CANCELLED');
  });

  it('refuses, on a profile without the setting, each recipe that needs one, naming it', async () => {
    const plain = await merchantWithSandbox(stack);
    const needing = WEBHOOK_EVENT_TYPES.filter((eventType) => 'needs' in RECIPES[eventType] && RECIPES[eventType].needs);
    expect(needing.sort()).toEqual([
      'payment_expired',
      'payment_partially_authorized',
      'payout_not_permitted',
      'surcharge_payment_succeeded',
      'surcharge_refund_succeeded',
    ]);
    for (const eventType of needing) {
      const refused = await trigger({ apiKey: plain.secretKey, baseUrl: stack.api.url }, eventType).catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(Refusal);
      expect((refused as Refusal).message).toMatch(
        new RegExp(`^${eventType} cannot be triggered on ${plain.profileId}: .*(allowPartialAuthorization|payoutLimit|surcharge|sessionExpirySeconds)`),
      );
    }
  });

  it('runs as a command: the event and its object on stdout, a refusal in one line, an unknown type with the usage', async () => {
    const env = { PAYMENTS_API_KEY: shop.secretKey, PAYMENTS_BASE_URL: stack.api.url };
    const done = runCli(['trigger', 'payment_succeeded'], env);
    const refused = runCli(['trigger', 'payout_reversed'], env);
    const unknown = runCli(['trigger', 'payment_teleported'], env);
    const live = runCli(['trigger', 'payment_succeeded', '--api-key', `sk_live_${'b'.repeat(32)}`], env);
    expect(await done.exited).toBe(0);
    expect(done.output.stdout).toMatch(/^payment_succeeded {2}evt_\w+ {2}pay_\w+\n$/);
    expect(await refused.exited).toBe(3);
    expect(refused.output.stderr).toBe(`payments: payout_reversed cannot be triggered: ${(RECIPES.payout_reversed as { refused: string }).refused}\n`);
    expect(await unknown.exited).toBe(2);
    expect(unknown.output.stderr).toMatch(/^payments: unknown event type "payment_teleported": one of payment_succeeded, /);
    expect(await live.exited).toBe(3);
    expect(live.output.stderr).toMatch(/^payments: refused: that is a live key[^\n]*\n$/);
  });

  it('is described by docs/cli.md’s table, row for row', () => {
    const docs = readFileSync('docs/cli.md', 'utf8');
    for (const eventType of WEBHOOK_EVENT_TYPES) {
      const recipe = RECIPES[eventType];
      const cell = 'refused' in recipe ? `refused: ${recipe.refused}` : recipe.steps;
      expect(docs, eventType).toContain(`| \`${eventType}\` | ${cell} |`);
    }
  });
});
