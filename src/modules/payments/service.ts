// The payments use cases. Processor calls never happen inside a database transaction: the pending state is
// committed first (guarded by the intent's version, so of two concurrent requests exactly one proceeds to
// the processor), the processor is called, and its answer is committed in a second guarded transaction.
// A crash or timeout in between leaves a PROCESSING payment that `sync` resolves, never a guessed failure.
// PaymentService is the one entry point; each job is a part in service/, all sharing one PaymentDependencies.
import type { PaymentIntent } from '../../generated/prisma/client.ts';
import type { Principal, SecretKeyPrincipal } from '../../kernel/principal.ts';
import type { ServiceContext } from '../../platform/context.ts';
import type { ConnectorAccountService } from '../connectors/index.ts';
import type { ProcessorPayment } from '../connectors/port.ts';
import type { CustomerService } from '../customers/index.ts';
import type { MandateService } from '../mandates/index.ts';
import type { PaymentSyncJob, PaymentSyncScheduler } from '../processor-sync/index.ts';
import type { RoutingService } from '../routing/index.ts';
import { PaymentStore, type Payment, type PaymentPublisher } from './store.ts';
import { ProcessorCallOutcomes } from './service/call-outcomes.ts';
import { PaymentCaptures } from './service/capture.ts';
import { PaymentConfirmation, type ConfirmAdmission } from './service/confirm.ts';
import { PaymentCreation, type CreationKey } from './service/create.ts';
import type { PaymentDependencies } from './service/dependencies.ts';
import { PaymentKeys } from './service/keys.ts';
import { ProcessorAnswers } from './service/processor-answers.ts';
import { PaymentReads } from './service/reads.ts';
import { PaymentSweeps } from './service/sweeps.ts';

export class PaymentService {
  readonly store: PaymentStore;
  readonly #keys: PaymentKeys;
  readonly #reads: PaymentReads;
  readonly #creation: PaymentCreation;
  readonly #confirmation: PaymentConfirmation;
  readonly #captures: PaymentCaptures;
  readonly #answers: ProcessorAnswers;
  readonly #sweeps: PaymentSweeps;

  constructor(
    context: ServiceContext,
    connectorAccounts: ConnectorAccountService,
    customers: CustomerService,
    mandates: MandateService,
    publisher: PaymentPublisher,
    syncScheduler: PaymentSyncScheduler,
    routing: RoutingService,
  ) {
    this.store = new PaymentStore(context.db, publisher);
    this.#keys = new PaymentKeys(context);
    const deps: PaymentDependencies = { context, store: this.store, keys: this.#keys, connectorAccounts, customers, mandates, syncScheduler, routing };
    this.#reads = new PaymentReads(deps);
    this.#answers = new ProcessorAnswers(deps, this.#reads);
    const outcomes = new ProcessorCallOutcomes(deps);
    this.#confirmation = new PaymentConfirmation(deps, this.#reads, this.#answers, outcomes);
    this.#creation = new PaymentCreation(deps, this.#confirmation);
    this.#captures = new PaymentCaptures(deps, this.#reads, this.#answers, outcomes);
    this.#sweeps = new PaymentSweeps(deps, this.#answers);
  }

  clientSecretFor(paymentId: string) {
    return this.#keys.clientSecretFor(paymentId);
  }

  paymentIdOfClientSecret(clientSecret: string) {
    return this.#keys.paymentIdOfClientSecret(clientSecret);
  }

  redirectReturnUrl(paymentId: string, attemptId: string, connectorName: string) {
    return this.#keys.redirectReturnUrl(paymentId, attemptId, connectorName);
  }

  activeAttemptOf(payment: PaymentIntent | Payment) {
    return this.#reads.activeAttemptOf(payment);
  }

  getVisible(principal: Principal, paymentId: string, clientSecret?: string | null) {
    return this.#reads.getVisible(principal, paymentId, clientSecret);
  }

  list(principal: SecretKeyPrincipal, rawInput: unknown) {
    return this.#reads.list(principal, rawInput);
  }

  create(principal: SecretKeyPrincipal, rawInput: unknown, origin?: { paymentLinkId?: string; subscriptionPeriod?: string }, key?: CreationKey) {
    return this.#creation.create(principal, rawInput, origin, key);
  }

  confirm(principal: Principal, rawInput: unknown, admission?: ConfirmAdmission) {
    return this.#confirmation.confirm(principal, rawInput, admission);
  }

  capture(principal: SecretKeyPrincipal, rawInput: unknown) {
    return this.#captures.capture(principal, rawInput);
  }

  cancel(principal: SecretKeyPrincipal, rawInput: unknown) {
    return this.#captures.cancel(principal, rawInput);
  }

  cancelPostCapture(principal: SecretKeyPrincipal, rawInput: unknown) {
    return this.#captures.cancelPostCapture(principal, rawInput);
  }

  sync(principal: Principal, paymentId: string) {
    return this.#answers.sync(principal, paymentId);
  }

  applyCallback(connectorAccountId: string, answer: ProcessorPayment, reference: string | null) {
    return this.#answers.applyCallback(connectorAccountId, answer, reference);
  }

  returnFromRedirect(paymentId: string, connectorName: string, token: string, redirectResult: string | null = null) {
    return this.#answers.returnFromRedirect(paymentId, connectorName, token, redirectResult);
  }

  runScheduledSync(job: PaymentSyncJob) {
    return this.#sweeps.runScheduledSync(job);
  }

  expireDue(limit: number, now?: Date) {
    return this.#sweeps.expireDue(limit, now);
  }
}
