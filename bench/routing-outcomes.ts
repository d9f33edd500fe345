// Routing's measured outcomes (issue 20, docs/routing.md), through the running service, its sandbox processors
// and GraphQL, with the demo merchant's sandbox account and a fauxpay account added to it:
// - success rate: fauxpay (listed first) declines half of otherwise good payments (the sandbox's /_control
//   declineRate 0.5, a soft decline sent on to the sandbox); of the last 100 of 300 payments, the share whose
//   first attempt went to the healthy sandbox (goal ≥ 80 %); then fauxpay recovers (declineRate 0) and
//   exploration brings its share of first attempts back up, measured over the last 100 of 300 more;
// - volume split 70 / 30 over 1,000 payments: the share of first attempts each account got (goal ±5 points).
// Payments go one at a time, so each decision sees every earlier outcome. The profile is left on priority (its
// sandbox account), and fauxpay steered back to normal, for the parts that follow.
import type { Stack } from './lib/stack.ts';

const DEGRADED_PAYMENTS = 300;
const RECOVERY_PAYMENTS = 300;
const SPLIT_PAYMENTS = 1000;
const LAST = 100;
/** The shortest window (the default exploration), so recovery shows within a few hundred payments. */
const SUCCESS_RATE = { windowSize: 10, explorationPercent: 5 };

async function graphql<Data>(stack: Stack, query: string, variables: Record<string, unknown>): Promise<Data> {
  const response = await fetch(`${stack.apiUrl}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${stack.demo.secretKey}` },
    body: JSON.stringify({ query, variables }),
  });
  const body = (await response.json()) as { data?: Data; errors?: unknown[] };
  if (body.errors) throw new Error(`routing outcomes: ${JSON.stringify(body.errors)}`);
  return body.data!;
}

async function steerFauxpay(stack: Stack, declineRate: number): Promise<void> {
  const response = await fetch(`${stack.env.SANDBOX_URL}/_control`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ processor: 'fauxpay', declineRate, outage: false, seed: 20 }),
  });
  if (!response.ok) throw new Error(`routing outcomes: /_control answered ${response.status}`);
}

const setAlgorithm = (stack: Stack, algorithm: Record<string, unknown>) =>
  graphql(stack, 'mutation ($input: SetRoutingAlgorithmInput!) { setRoutingAlgorithm(input: $input) { id } }', {
    input: { profileId: stack.demo.profileId, algorithm },
  });

/** Pays `count` card payments one after another; answers the account each one's first attempt went to. */
async function firstAttempts(stack: Stack, count: number): Promise<string[]> {
  const chosen: string[] = [];
  const card = { number: '4242424242424242', expiryMonth: 12, expiryYear: new Date().getUTCFullYear() + 2, cvc: '123' };
  for (let payment = 0; payment < count; payment++) {
    const { createPayment } = await graphql<{ createPayment: { routing: { chosen: { id: string } } } }>(
      stack,
      'mutation ($input: CreatePaymentInput!) { createPayment(input: $input) { routing { chosen { id } } } }',
      { input: { amount: 1000, currency: 'EUR', confirm: true, paymentMethodData: { card } } },
    );
    chosen.push(createPayment.routing.chosen.id);
  }
  return chosen;
}

const percentOf = (ids: readonly string[], id: string) => Math.round((ids.filter((chosen) => chosen === id).length / ids.length) * 1000) / 10;

export async function benchRoutingOutcomes(stack: Stack) {
  const healthy = stack.demo.connectorAccountId;
  const { createConnectorAccount } = await graphql<{ createConnectorAccount: { id: string } }>(
    stack,
    'mutation ($input: CreateConnectorAccountInput!) { createConnectorAccount(input: $input) { id } }',
    { input: { connectorName: 'fauxpay', credentials: { apiKey: `sk_fauxpay_bench${stack.runId.replace(/[^A-Za-z0-9]/g, '')}` }, paymentMethods: ['card'] } },
  );
  const degraded = createConnectorAccount.id;
  try {
    console.log(`routing outcomes: success rate, fauxpay declining half, ${DEGRADED_PAYMENTS} payments then ${RECOVERY_PAYMENTS} after it recovers`);
    await setAlgorithm(stack, { successRate: { connectorAccountIds: [degraded, healthy], ...SUCCESS_RATE } });
    await steerFauxpay(stack, 0.5);
    const whileDegraded = (await firstAttempts(stack, DEGRADED_PAYMENTS)).slice(-LAST);
    await steerFauxpay(stack, 0);
    const afterRecovery = (await firstAttempts(stack, RECOVERY_PAYMENTS)).slice(-LAST);
    const successRate = {
      ...SUCCESS_RATE,
      lastOfDegradedToHealthyPercent: percentOf(whileDegraded, healthy),
      lastOfDegradedToRecoveredPercent: percentOf(whileDegraded, degraded),
      lastAfterRecoveryToRecoveredPercent: percentOf(afterRecovery, degraded),
    };
    console.log(`  last ${LAST} while degraded: ${successRate.lastOfDegradedToHealthyPercent} % to the healthy account (goal ≥ 80 %)`);
    console.log(
      `  fauxpay's share: ${successRate.lastOfDegradedToRecoveredPercent} % degraded, ${successRate.lastAfterRecoveryToRecoveredPercent} % recovered`,
    );

    console.log(`routing outcomes: volume split 70 / 30 over ${SPLIT_PAYMENTS} payments`);
    await setAlgorithm(stack, {
      volumeSplit: [
        { connectorAccountId: healthy, percent: 70 },
        { connectorAccountId: degraded, percent: 30 },
      ],
    });
    const split = await firstAttempts(stack, SPLIT_PAYMENTS);
    const volumeSplit = { payments: SPLIT_PAYMENTS, firstPercent: percentOf(split, healthy), secondPercent: percentOf(split, degraded) };
    console.log(`  ${volumeSplit.firstPercent} % / ${volumeSplit.secondPercent} % (goal 70 / 30 ± 5)`);
    return { payments: { degraded: DEGRADED_PAYMENTS, recovery: RECOVERY_PAYMENTS, measuredLast: LAST }, successRate, volumeSplit };
  } finally {
    await steerFauxpay(stack, 0);
    await setAlgorithm(stack, { priority: [healthy] });
  }
}
