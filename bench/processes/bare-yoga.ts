// The no-I/O ceiling: graphql-yoga on node:http with createPayment and confirmPayment mutations of the same
// shape as the service's (same documents, input types and selected fields), answering constants. No
// database, Redis, processor call, key lookup or query limits: what the HTTP + GraphQL layers alone cost
// on this machine. confirmPayment waits BARE_LATENCY_MS (the sandbox's SANDBOX_LATENCY_MS), so the
// create+confirm flow has the same processor time as the service's; each wait is timed and kept by
// attempt id, and answered over IPC ("timings") exactly like the sandbox's timing preload.
import { createServer } from 'node:http';
import { createSchema, createYoga } from 'graphql-yoga';
import { answer } from '../lib/ipc.ts';

const port = Number(process.env.PORT);
const latencyMs = Number(process.env.BARE_LATENCY_MS ?? 0);
let sequence = 0;
let timings: [string, number][] = [];

const typeDefs = /* GraphQL */ `
  scalar DateTime
  enum PaymentStatus {
    REQUIRES_PAYMENT_METHOD
    SUCCEEDED
  }
  enum AttemptStatus {
    PAYMENT_METHOD_AWAITED
    CHARGED
  }
  input CreatePaymentInput {
    amount: Int!
    currency: String!
    description: String
    captureMethod: String
    customerId: String
    metadata: String
  }
  input CardInput {
    number: String!
    expiryMonth: Int!
    expiryYear: Int!
    cvc: String!
    holderName: String
  }
  input PaymentMethodDataInput @oneOf {
    card: CardInput
  }
  input ConfirmPaymentInput {
    clientSecret: String!
    paymentMethodData: PaymentMethodDataInput
    returnUrl: String
  }
  type PaymentAttempt {
    id: ID!
    status: AttemptStatus!
  }
  type Payment {
    id: ID!
    status: PaymentStatus!
    amount: Int!
    currency: String!
    clientSecret: String!
    createdAt: DateTime!
    activeAttempt: PaymentAttempt!
  }
  type Query {
    health: String
  }
  type Mutation {
    createPayment(input: CreatePaymentInput!): Payment!
    confirmPayment(input: ConfirmPaymentInput!): Payment!
  }
`;

const payment = (status: 'REQUIRES_PAYMENT_METHOD' | 'SUCCEEDED', amount: number, attemptId: string) => ({
  id: `pay_bare${String(sequence).padStart(20, '0')}`,
  status,
  amount,
  currency: 'USD',
  clientSecret: `pay_bare${String(sequence).padStart(20, '0')}_secret_bare000000000000000000`,
  createdAt: new Date().toISOString(),
  activeAttempt: { id: attemptId, status: status === 'SUCCEEDED' ? 'CHARGED' : 'PAYMENT_METHOD_AWAITED' },
});

const schema = createSchema({
  typeDefs,
  resolvers: {
    Mutation: {
      createPayment: (_: unknown, { input }: { input: { amount: number } }) => {
        sequence += 1;
        return payment('REQUIRES_PAYMENT_METHOD', input.amount, `att_bare${sequence}`);
      },
      confirmPayment: async () => {
        sequence += 1;
        const attemptId = `att_bare${sequence}`;
        if (latencyMs > 0) {
          const started = performance.now();
          await new Promise((resolve) => setTimeout(resolve, latencyMs));
          timings.push([attemptId, performance.now() - started]);
        } else {
          timings.push([attemptId, 0]);
        }
        return payment('SUCCEEDED', 1050, attemptId);
      },
    },
  },
});

const yoga = createYoga({ schema, graphiql: false, logging: false, landingPage: false });
const server = createServer(yoga);
server.keepAliveTimeout = 65_000;
server.listen(port, '127.0.0.1', () => process.stdout.write(`bare yoga listening on http://127.0.0.1:${port}\n`));

answer('timings', () => {
  const taken = timings;
  timings = [];
  return { timings: taken };
});

process.on('SIGTERM', () => {
  server.close(() => process.exit(0));
  server.closeAllConnections();
});
