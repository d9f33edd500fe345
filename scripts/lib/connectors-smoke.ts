// The flow of `npm run connectors:smoke` (scripts/connectors-smoke.ts): the card flow (pay, capture, a partial
// refund) through our GraphQL API at Stripe's and Adyen's test environments, for each processor whose test keys
// are in `env`. It starts the API in this process on a free port, with a fresh database and a Redis prefix of its
// own (both removed at the end), prints one line per step, and stops at the first unexpected status. Keys are
// never printed. How to run it and what it proves: docs/connectors/stripe.md and adyen.md, "Smoke test against
// the real processors". test/scripts/connectors-smoke.test.ts runs it against the local fakes.
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { startApi } from '../../src/main/api-app.ts';
import { loadConfig } from '../../src/platform/config.ts';
import { createScratchDatabase } from '../../src/platform/db/scratch-database.ts';
import { createLogger } from '../../src/platform/logger.ts';
import { deleteKeysUnder } from '../../src/platform/queues/prefix-keys.ts';

export const NAME = 'connectors:smoke';

interface Card {
  number: string;
  expiryMonth: number;
  expiryYear: number;
  cvc: string;
}

/** A step's expected status, and a note printed beside it. */
interface Expected {
  status: string;
  note?: string;
}

/** What differs between the processors: their keys, their documented non-3DS test card, and their answers. */
interface Processor {
  name: 'stripe' | 'adyen';
  /** The variables this processor's run needs; it runs when all are set. */
  variables: readonly string[];
  credentials: (env: NodeJS.ProcessEnv) => Record<string, string>;
  /** The account's webhook secret: a random one, since the processor's callbacks cannot reach this machine. */
  webhookSecret: () => string;
  card: Card;
  /** The capture's expected status, and why, when the processor only acknowledges it. */
  capture: Expected;
  /**
   * Which payment is refunded in part: the captured one, or (where a capture completes only on a notification
   * that cannot reach us) a new automatic-capture payment, which the processor says is captured at once.
   */
  refundOf: 'captured' | 'automatic';
  refund: Expected;
}

/** Adyen answers a capture or a refund "received"; its outcome comes in a notification (docs/connectors/adyen.md). */
const received = (notification: string) => `received by Adyen: done on its ${notification} notification, which cannot reach this machine`;

const PROCESSORS: readonly Processor[] = [
  {
    name: 'stripe',
    variables: ['STRIPE_TEST_SECRET_KEY'],
    credentials: (env) => ({ apiKey: env.STRIPE_TEST_SECRET_KEY! }),
    webhookSecret: () => `whsec_${randomBytes(24).toString('hex')}`,
    // docs.stripe.com/testing: 4242 4242 4242 4242, any future expiry, any CVC.
    card: { number: '4242424242424242', expiryMonth: 12, expiryYear: new Date().getUTCFullYear() + 3, cvc: '123' },
    capture: { status: 'SUCCEEDED' },
    refundOf: 'captured',
    refund: { status: 'SUCCEEDED' },
  },
  {
    name: 'adyen',
    variables: ['ADYEN_TEST_API_KEY', 'ADYEN_TEST_MERCHANT_ACCOUNT'],
    credentials: (env) => ({ apiKey: env.ADYEN_TEST_API_KEY!, merchantAccount: env.ADYEN_TEST_MERCHANT_ACCOUNT! }),
    webhookSecret: () => randomBytes(32).toString('hex').toUpperCase(),
    // docs.adyen.com/development-resources/test-cards-and-credentials/test-card-numbers: Mastercard, 03/2030, CVC 737.
    card: { number: '5555555555554444', expiryMonth: 3, expiryYear: 2030, cvc: '737' },
    capture: { status: 'PROCESSING', note: received('CAPTURE') },
    refundOf: 'automatic',
    refund: { status: 'PENDING', note: received('REFUND') },
  },
];

const PAYMENT_FIELDS = 'id status errorCode errorMessage activeAttempt { connectorTransactionId }';
const OPERATIONS = {
  createMerchant: 'mutation ($input: CreateMerchantAccountInput!) { createMerchantAccount(input: $input) { merchant { id } secretKey publishableKey } }',
  createConnectorAccount: 'mutation ($input: CreateConnectorAccountInput!) { createConnectorAccount(input: $input) { id mode } }',
  createPayment: `mutation ($input: CreatePaymentInput!) { createPayment(input: $input) { ${PAYMENT_FIELDS} clientSecret } }`,
  confirmPayment: `mutation ($input: ConfirmPaymentInput!) { confirmPayment(input: $input) { ${PAYMENT_FIELDS} } }`,
  capturePayment: `mutation ($input: CapturePaymentInput!) { capturePayment(input: $input) { ${PAYMENT_FIELDS} } }`,
  createRefund: 'mutation ($input: CreateRefundInput!) { createRefund(input: $input) { id status connectorRefundId errorCode errorMessage } }',
};

interface Payment {
  id: string;
  status: string;
  clientSecret?: string;
  errorCode: string | null;
  errorMessage: string | null;
  activeAttempt: { connectorTransactionId: string | null } | null;
}

interface Refund {
  id: string;
  status: string;
  connectorRefundId: string | null;
  errorCode: string | null;
  errorMessage: string | null;
}

const AMOUNT = 2000;
const REFUNDED = 500;
const CURRENCY = 'EUR';

/** A step whose answer was not the expected one: printed, and the run stops. */
class UnexpectedAnswer extends Error {}

/** Our API's refusal: its errors' codes and messages, which carry no card data or keys (docs/api.md). */
class ApiRefusal extends Error {}

type Execute = <T>(query: string, variables: Record<string, unknown>) => Promise<T>;

function graphql(url: string, key: string): Execute {
  return async <T>(query: string, variables: Record<string, unknown>) => {
    const response = await fetch(`${url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json', 'api-key': key },
      body: JSON.stringify({ query, variables }),
    });
    const body = (await response.json()) as { data?: Record<string, T> | null; errors?: { message: string; extensions?: { code?: string } }[] };
    if (body.errors?.length) throw new ApiRefusal(body.errors.map((error) => `${error.extensions?.code ?? 'ERROR'}: ${error.message}`).join('; '));
    return Object.values(body.data!)[0]!;
  };
}

/** Where the run's lines go: stdout's (steps, the result) and stderr's (why it stopped). */
export interface Output {
  out: (line: string) => void;
  err: (line: string) => void;
}

/** One processor's flow through our API, one line per step. */
class Flow {
  constructor(
    private readonly processor: Processor,
    private readonly url: string,
    private readonly output: Output,
  ) {}

  async run(admin: Execute, env: NodeJS.ProcessEnv): Promise<void> {
    const { merchant, secretKey, publishableKey } = await this.answerOf(
      'merchant',
      admin<{ merchant: { id: string }; secretKey: string; publishableKey: string }>(OPERATIONS.createMerchant, {
        input: { name: `Smoke test (${this.processor.name})` },
      }),
    );
    const asMerchant = graphql(this.url, secretKey);
    const asCustomer = graphql(this.url, publishableKey);
    const account = await this.answerOf(
      'account',
      asMerchant<{ id: string; mode: string }>(OPERATIONS.createConnectorAccount, {
        input: { connectorName: this.processor.name, credentials: this.processor.credentials(env), webhookSecret: this.processor.webhookSecret() },
      }),
    );
    this.report('account', account.mode, `merchant ${merchant.id}  connector account ${account.id}`);

    const authorized = await this.pay(asMerchant, asCustomer, 'MANUAL', 'REQUIRES_CAPTURE');
    const captured = await this.answerOf('capture', asMerchant<Payment>(OPERATIONS.capturePayment, { input: { paymentId: authorized.id } }));
    this.expectPayment('capture', captured, this.processor.capture);

    const refunded = this.processor.refundOf === 'captured' ? captured : await this.pay(asMerchant, asCustomer, 'AUTOMATIC', 'SUCCEEDED');
    const refund = await this.answerOf('refund', asMerchant<Refund>(OPERATIONS.createRefund, { input: { paymentId: refunded.id, amount: REFUNDED } }));
    const ids = `refund ${refund.id}  ${REFUNDED} of ${AMOUNT} ${CURRENCY}  ${this.processor.name} ${refund.connectorRefundId ?? '(none)'}`;
    this.expect('refund', refund.status, this.processor.refund, ids, refund.errorCode && `${refund.errorCode}: ${refund.errorMessage}`);
  }

  /** Creates a payment and confirms it with the processor's test card; the confirmed payment. */
  private async pay(merchant: Execute, customer: Execute, captureMethod: 'MANUAL' | 'AUTOMATIC', expected: string): Promise<Payment> {
    const input = { amount: AMOUNT, currency: CURRENCY, captureMethod };
    const created = await this.answerOf('create', merchant<Payment>(OPERATIONS.createPayment, { input }));
    this.expect(
      'create',
      created.status,
      { status: 'REQUIRES_PAYMENT_METHOD' },
      `payment ${created.id}  ${AMOUNT} ${CURRENCY}, capture ${captureMethod.toLowerCase()}`,
      null,
    );
    const paymentMethodData = { card: this.processor.card };
    const confirmed = await this.answerOf(
      'confirm',
      customer<Payment>(OPERATIONS.confirmPayment, { input: { clientSecret: created.clientSecret, paymentMethodData } }),
    );
    this.expectPayment('confirm', confirmed, { status: expected });
    return confirmed;
  }

  /** The answer of one step's call; our API's refusal is that step's unexpected answer. */
  private async answerOf<T>(step: string, call: Promise<T>): Promise<T> {
    try {
      return await call;
    } catch (error) {
      if (!(error instanceof ApiRefusal)) throw error;
      this.report(step, 'ERROR', error.message);
      throw new UnexpectedAnswer(`${this.processor.name} ${step}: ${error.message}`);
    }
  }

  private expectPayment(step: string, payment: Payment, expected: Expected) {
    const ids = `payment ${payment.id}  ${this.processor.name} ${payment.activeAttempt?.connectorTransactionId ?? '(none)'}`;
    this.expect(step, payment.status, expected, ids, payment.errorCode && `${payment.errorCode}: ${payment.errorMessage}`);
  }

  private expect(step: string, status: string, expected: Expected, ids: string, failure: string | null) {
    if (status === expected.status) return this.report(step, status, ids, expected.note);
    this.report(step, status, ids, `expected ${expected.status}${failure ? `: ${failure}` : ''}`);
    throw new UnexpectedAnswer(`${this.processor.name} ${step}: ${status}, expected ${expected.status}`);
  }

  /** One line: the processor, the step, the status, and the ids at both ends. */
  private report(step: string, status: string, ids: string, note?: string) {
    const line = [this.processor.name.padEnd(7), step.padEnd(8), status.padEnd(23), ids, note ? `(${note})` : ''];
    this.output.out(line.join(' ').trimEnd());
  }
}

/** The processors whose variables are all set; a processor with only some of them set is an error. */
function chosenProcessors(env: NodeJS.ProcessEnv): Processor[] {
  const chosen = PROCESSORS.filter((processor) => processor.variables.some((variable) => env[variable]));
  for (const processor of chosen) {
    const missing = processor.variables.filter((variable) => !env[variable]);
    if (missing.length) throw new UnexpectedAnswer(`${processor.name}: set ${missing.join(' and ')} too`);
  }
  // A live key would take real money: the smoke test only ever runs in the test environments.
  if (env.STRIPE_TEST_SECRET_KEY && !env.STRIPE_TEST_SECRET_KEY.startsWith('sk_test_'))
    throw new UnexpectedAnswer('STRIPE_TEST_SECRET_KEY must be a test secret key (sk_test_…)');
  return chosen;
}

/** Runs the flow for each processor whose keys are in `env`; the exit code (0: passed or skipped, 1: stopped). */
export async function connectorsSmoke(env: NodeJS.ProcessEnv, output: Output): Promise<number> {
  let processors: Processor[];
  try {
    processors = chosenProcessors(env);
  } catch (error) {
    output.err(`${NAME}: ${(error as Error).message}`);
    return 1;
  }
  if (processors.length === 0) {
    const variables = PROCESSORS.map((processor) => processor.variables.join(' + ')).join(', and/or ');
    output.out(`${NAME}: skipped: set ${variables} to run the card flow against the processors' test environments`);
    return 0;
  }

  const runId = `${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`;
  const adminKey = randomBytes(24).toString('hex');
  // The operator's settings (DATABASE_URL's server, REDIS_URL, STRIPE_API_BASE, ADYEN_CHECKOUT_API_BASE, …) with
  // what this run owns: its database, Redis prefix, keys and port.
  const settings = {
    LOG_LEVEL: 'error',
    ...Object.fromEntries(Object.entries(env).filter((entry): entry is [string, string] => Boolean(entry[1]))),
    REDIS_PREFIX: `smoke_${runId}`,
    ENCRYPTION_KEY: randomBytes(32).toString('hex'),
    ADMIN_API_KEY: adminKey,
    HOST: '127.0.0.1',
    PORT: '0',
  };
  const database = await createScratchDatabase(loadConfig(settings).DATABASE_URL, `payments_smoke_${runId}`);
  try {
    const config = loadConfig({ ...settings, DATABASE_URL: database.url });
    const api = await startApi(config, createLogger(config.LOG_LEVEL));
    try {
      for (const processor of processors) await new Flow(processor, api.url, output).run(graphql(api.url, adminKey), env);
      output.out(`${NAME}: passed (${processors.map((processor) => processor.name).join(', ')})`);
      return 0;
    } catch (error) {
      if (!(error instanceof UnexpectedAnswer)) throw error;
      output.err(`${NAME}: failed: ${error.message}`);
      return 1;
    } finally {
      await api.close();
      const redis = new Redis(config.REDIS_URL, { maxRetriesPerRequest: 1 });
      await deleteKeysUnder(redis, config.REDIS_PREFIX).finally(() => redis.disconnect());
    }
  } finally {
    await database.drop();
  }
}
