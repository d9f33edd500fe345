// Routing's use cases (docs/routing.md): setting a profile's algorithm, deciding where a payment goes (the
// eligible accounts, the active algorithm, the connector accounts' health and success rates), previewing that
// decision, and recording each authorization's outcome for the next decisions. Health and rates live in
// Redis, shared by every process; when Redis cannot be reached, payments are routed without them (fail open).
import { createHash } from 'node:crypto';
import { invalidInput } from '../../kernel/errors.ts';
import type { Mode } from '../../kernel/api-keys.ts';
import type { MerchantPrincipal } from '../../kernel/principal.ts';
import { parseInput } from '../../kernel/validation.ts';
import { cardBrand } from '../../kernel/cards.ts';
import type { ServiceContext } from '../../platform/context.ts';
import type { ConnectorAccount, SavedPaymentMethod } from '../../generated/prisma/client.ts';
import type { ConnectorAccountService } from '../connectors/index.ts';
import { profileSettings } from '../merchants/index.ts';
import { methodTypeOf, type ConnectorError, type PaymentMethod, type ProcessorPayment } from '../connectors/port.ts';
import type { PaymentMethodType } from '../payments/methods.ts';
import type { CircuitState, RoutingAlgorithm, RoutingDecision, RoutingFacts, SuccessRate } from './algorithm.ts';
import { decideRoute, rateKeyOf } from './machine.ts';
import type { ChainableCommander } from 'ioredis';
import { circuitsAt, type ConnectorHealth } from './health.ts';
import type { SuccessRates } from './success-rates.ts';
import { accountReferences, algorithmOf, routingPreviewInput, setRoutingAlgorithmInput } from './inputs.ts';
import { RoutingAlgorithmStore, type StoredAlgorithm } from './store.ts';

/** What routing needs of a payment. */
export interface RoutablePayment {
  id: string;
  merchantId: string;
  profileId: string;
  mode: Mode;
  amount: number;
  currency: string;
  country: string | null;
  metadata: unknown;
  /** The payment's own connector order (names). */
  connectors: readonly string[];
}

/**
 * The circuits of a merchant's routable accounts, read ahead of its payment's decision (RoutingService.circuitsAhead):
 * each account's stored openUntil and when the read was sent (the routing clock's ms); unreadable when Redis could not
 * be read; not read for a merchant with more accounts than a read ahead covers.
 */
export type CircuitsAhead = { kind: 'read'; sentAt: number; openUntil: ReadonlyMap<string, string | null> } | { kind: 'unreadable' } | { kind: 'not_read' };

/** The most enabled accounts a read ahead covers: a merchant with more has the eligible ones' circuits read at the decision. */
const MAX_ACCOUNTS_READ_AHEAD = 16;

/**
 * How old circuits read ahead may be at the decision. A read ahead misses what other processes change after it (a
 * circuit opened, a probe settled) as any read misses what follows it; this keeps that window about as short as a
 * read at the decision's own: a decision later than this (a slow insert, a lock waited on) reads them again.
 */
const READ_AHEAD_MAX_AGE_MS = 50;

/** The signals a decision reads: each account's circuit state and, for success-rate routing, its rate. */
interface Signals {
  health: ReadonlyMap<string, CircuitState>;
  rates: ReadonlyMap<string, SuccessRate>;
}

/** The health of `ids` at `now` from circuits read ahead, if the read covers them all and is recent enough; else undefined. */
function healthAhead(ahead: Extract<CircuitsAhead, { kind: 'read' }>, ids: readonly string[], now: number): Signals | undefined {
  if (now - ahead.sentAt > READ_AHEAD_MAX_AGE_MS || !ids.every((id) => ahead.openUntil.has(id))) return undefined;
  const circuits = circuitsAt(
    ids,
    now,
    ids.map((id) => ahead.openUntil.get(id) ?? null),
  );
  return { health: new Map([...circuits].map(([id, circuit]) => [id, circuit.state])), rates: new Map() };
}

/** A payment's decision, with its candidates as accounts in order and the facts its outcomes are recorded under. */
export interface RoutedPayment {
  decision: RoutingDecision;
  accounts: ConnectorAccount[];
  facts: RoutingFacts;
}

/** What an authorization at one account came to: the processor's answer, or the error that stood for one. */
export type AuthorizationOutcome = { answer: ProcessorPayment } | { error: ConnectorError };

/** The signals every process shares in Redis (createRoutingSignals). */
export interface RoutingSignals {
  health: ConnectorHealth;
  successRates: SuccessRates;
  /** Commands queued to go to Redis in one round trip (the health's and rates' queue* methods). */
  batch: () => ChainableCommander;
}

/**
 * Whether an error says the processor is unwell: it timed out, could not be reached, or failed with a 5xx. Not
 * a 429 or 409 (rate limiting, a conflict) nor a body we could not read: the processor answered, and opening
 * its circuit for those would send every payment elsewhere because of one merchant's traffic.
 */
export function processorFailed(error: ConnectorError): boolean {
  if (error.kind === 'timeout' || error.kind === 'unreachable') return true;
  return error.kind === 'server_error' && error.httpStatus !== undefined && error.httpStatus >= 500;
}

/** Whether an answer counts for the success rate as authorized (true) or not (false); null for one not settled yet (pending, 3DS). */
export function authorizedOf(status: ProcessorPayment['status']): boolean | null {
  if (SETTLED_AUTHORIZED.has(status)) return true;
  return status === 'failed' || status === 'authentication_failed' ? false : null;
}
const SETTLED_AUTHORIZED: ReadonlySet<ProcessorPayment['status']> = new Set(['authorized', 'captured', 'partially_authorized', 'partially_captured']);

/** The replies of `commands` once sent; the first command's error, if any, is thrown. */
async function sent(commands: ChainableCommander): Promise<unknown[]> {
  const replies = (await commands.exec()) ?? [];
  for (const [error] of replies) if (error) throw error;
  return replies.map(([, reply]) => reply);
}

/** Algorithms the history keeps on show. */
const HISTORY_LIMIT = 20;

/** A payment's draw in [0, 1): stable for the payment, so its volume split and exploration do not change when it is confirmed again. */
export function drawOf(paymentId: string): number {
  return createHash('sha256').update(paymentId).digest().readUIntBE(0, 6) / 2 ** 48;
}

/** The card network routing facts name (visa, mastercard, …), or null for a method that is not a card or a brand not known. */
function cardNetworkOf(method: PaymentMethod, saved: SavedPaymentMethod | null): string | null {
  const brand = method.type === 'card' ? cardBrand(method.card.number) : method.type === 'saved_card' ? saved?.cardBrand : null;
  return brand && brand !== 'UNKNOWN' ? brand.toLowerCase() : null;
}

/** The payment's metadata as string pairs (what createPayment accepts; anything else is left out). */
function metadataOf(metadata: unknown): Record<string, string> {
  if (metadata === null || typeof metadata !== 'object') return {};
  return Object.fromEntries(Object.entries(metadata).filter((entry): entry is [string, string] => typeof entry[1] === 'string'));
}

/** What routing knows of a payment paid with `method`. */
function factsOf(payment: Omit<RoutablePayment, 'id'>, method: PaymentMethod, saved: SavedPaymentMethod | null): RoutingFacts {
  return {
    amount: payment.amount,
    currency: payment.currency,
    paymentMethodType: methodTypeOf(method),
    cardNetwork: cardNetworkOf(method, saved),
    billingCountry: payment.country,
    metadata: metadataOf(payment.metadata),
  };
}

/** The refusal of a payment none of whose eligible accounts the algorithm names. */
const unroutable = (decision: RoutingDecision) =>
  invalidInput('paymentMethodData', `no connector account the routing algorithm names can take this payment: ${decision.reason}`);

/** A saved card's decision: the account that issued its token, the only one that can charge it. */
function savedCardDecision(algorithm: RoutingAlgorithm | null, issuer: ConnectorAccount): RoutingDecision {
  return {
    algorithm: algorithm?.type ?? 'priority',
    candidates: [issuer.id],
    chosen: issuer.id,
    reason: `A saved card goes to the account that issued its token, ${issuer.connectorName} ${issuer.id}, whatever the routing algorithm.`,
  };
}

/** The read cache's tag of a profile's active routing algorithms: invalidated when one is set. */
const routingAlgorithmTag = (profileId: string) => `routingAlgorithm:${profileId}`;

export class RoutingService {
  private readonly store: RoutingAlgorithmStore;

  constructor(
    private readonly context: ServiceContext,
    private readonly connectorAccounts: ConnectorAccountService,
    private readonly signals: RoutingSignals,
    /** Milliseconds since the epoch: the circuits' clock (tests inject theirs to pass a cool-down without waiting). */
    private readonly now: () => number = Date.now,
  ) {
    this.store = new RoutingAlgorithmStore(context.db);
  }

  /**
   * Checks every account the algorithm names (the merchant's, or its platform's for a connected merchant, in
   * the key's mode: those its payments may be routed to) and makes it the profile's
   * active algorithm of that mode; the one it replaces joins the history.
   */
  async setAlgorithm(principal: MerchantPrincipal, rawInput: unknown): Promise<StoredAlgorithm> {
    const input = parseInput(setRoutingAlgorithmInput, rawInput);
    await this.profileOf(principal, input.profileId);
    const references = accountReferences(input.algorithm);
    const accounts = await this.connectorAccounts.routableAmong(
      principal.merchantId,
      references.map((reference) => reference.id),
    );
    const modes = new Map(accounts.map((account) => [account.id, account.mode]));
    for (const { path, id } of references) {
      const mode = modes.get(id);
      // Another merchant's account is as unknown as one that does not exist: its existence is not ours to tell.
      if (mode === undefined) throw invalidInput(path, `no connector account ${id} for this merchant`);
      if (mode !== principal.mode)
        throw invalidInput(
          path,
          `${id} is a ${mode.toLowerCase()} connector account; a ${principal.mode.toLowerCase()} key routes to ${principal.mode.toLowerCase()} accounts`,
        );
    }
    const stored = await this.store.setActive(input.profileId, principal.mode, algorithmOf(input.algorithm), principal.keyId);
    await this.context.cache.invalidate([routingAlgorithmTag(input.profileId)]);
    return stored;
  }

  /**
   * The profile's active algorithm of `mode` (null: none), from the read cache (docs/architecture.md, "Read
   * cache"): every confirm reads it, and it changes only through setAlgorithm. Never mutate it.
   */
  async activeAlgorithm(profileId: string, mode: Mode): Promise<StoredAlgorithm | null> {
    return this.context.cache.read(`${routingAlgorithmTag(profileId)}:${mode}`, async () => ({
      value: await this.store.active(profileId, mode),
      tags: [routingAlgorithmTag(profileId)],
    }));
  }

  async algorithmHistory(profileId: string, mode: Mode): Promise<StoredAlgorithm[]> {
    return this.store.history(profileId, mode, HISTORY_LIMIT);
  }

  /**
   * Where a payment goes: the accounts eligible for it, ordered by the profile's active algorithm, open circuits
   * skipped; a half-open account goes first only for the payment that claims its probe. A saved card (a mandate's
   * too) goes to the account that issued its token whatever the algorithm: no other can charge the token.
   * `algorithm`: the profile's active one (activeAlgorithm), read by the caller with the profile; `circuitsAhead`, the
   * circuits the caller had read while it read the payment (circuitsAhead). INVALID_INPUT naming the method when none
   * accepts it.
   */
  async decideForPayment(
    payment: RoutablePayment,
    profileRouting: readonly string[],
    algorithm: RoutingAlgorithm | null,
    method: PaymentMethod,
    saved: SavedPaymentMethod | null,
    circuitsAhead?: Promise<CircuitsAhead>,
  ): Promise<RoutedPayment> {
    const facts = factsOf(payment, method, saved);
    const candidates = await this.eligibleAccounts(payment, facts.paymentMethodType, profileRouting, saved);
    if (saved) return { decision: savedCardDecision(algorithm, candidates[0]!), accounts: candidates, facts };
    const decision = await this.decide(algorithm, facts, candidates, drawOf(payment.id), { claimProbe: true, circuitsAhead });
    const byId = new Map(candidates.map((account) => [account.id, account]));
    const accounts = decision.candidates.map((id) => byId.get(id)!);
    if (accounts.length === 0) throw unroutable(decision);
    return { decision, accounts, facts };
  }

  /**
   * Refuses, as confirming would, a payment that no connector account can take: none eligible, or none the
   * active algorithm names (that depends on neither health, rates nor the draw). Claims and records nothing:
   * createPayment asks before it writes anything.
   */
  async refuseUnroutable(payment: Omit<RoutablePayment, 'id'>, profileRouting: readonly string[], method: PaymentMethod, saved: SavedPaymentMethod | null) {
    const facts = factsOf(payment, method, saved);
    const candidates = await this.eligibleAccounts(payment, facts.paymentMethodType, profileRouting, saved);
    if (saved) return;
    const algorithm = (await this.activeAlgorithm(payment.profileId, payment.mode))?.algorithm ?? null;
    const decision = decideRoute(algorithm, { facts, eligible: candidates.map((account) => account.id), health: new Map(), rates: new Map(), draw: 0 });
    if (decision.candidates.length === 0) throw unroutable(decision);
  }

  /** The decision a payment with these facts would get now: nothing is recorded and no probe is claimed. */
  async preview(principal: MerchantPrincipal, rawInput: unknown): Promise<RoutingDecision> {
    const input = parseInput(routingPreviewInput, rawInput);
    const profile = await this.profileOf(principal, input.profileId);
    const facts: RoutingFacts = {
      amount: input.amount,
      currency: input.currency,
      paymentMethodType: input.paymentMethodType,
      cardNetwork: input.cardNetwork ?? null,
      billingCountry: input.billingCountry ?? null,
      metadata: input.metadata,
    };
    const payment = { merchantId: principal.merchantId, mode: principal.mode, currency: input.currency, country: facts.billingCountry, connectors: [] };
    // None eligible is an answer here, not an error: the decision says so.
    const eligible = await this.eligible(payment, facts.paymentMethodType, profile.routing);
    const algorithm = (await this.activeAlgorithm(profile.id, principal.mode))?.algorithm ?? null;
    // A preview has no payment id to draw from: a fresh draw, as the next payment would get one.
    return this.decide(algorithm, facts, eligible, Math.random(), { claimProbe: false });
  }

  /**
   * Records one authorization's outcome while the payment saves it (outside any transaction), in one round
   * trip: any processor answer says the processor is up, a timeout, connection failure or 5xx that it is not;
   * a settled answer counts for the success rate (a decline as not authorized), an error or a pending answer
   * does not. Never rejects (confirm starts it before it awaits it): a Redis failure or a Redis that does not
   * answer within ROUTING_REDIS_TIMEOUT_MS is logged.
   */
  async recordAuthorization(facts: RoutingFacts, accountId: string, outcome: AuthorizationOutcome): Promise<void> {
    const health = 'error' in outcome && processorFailed(outcome.error) ? 'failure' : 'success';
    const authorized = 'answer' in outcome ? authorizedOf(outcome.answer.status) : null;
    await this.signal('record the authorization', undefined, async () => {
      const commands = this.signals.batch();
      this.signals.health.queueRecord(commands, accountId, health, this.now());
      if (authorized !== null) this.signals.successRates.queueRecord(commands, accountId, rateKeyOf(facts), authorized);
      await sent(commands);
    });
  }

  /**
   * The circuits of every enabled account the merchant's payments of `mode` may be routed to, read now so that the
   * round trip overlaps the caller's own reads or writes of the payment, and decideForPayment, given them, needs no
   * read of its own unless it is a success-rate decision (which needs rates too) or comes more than
   * READ_AHEAD_MAX_AGE_MS later (docs/routing.md, "Connector health"). What is read is when each cool-down ends, so
   * states are taken at the decision's moment. Not read for a merchant with more than MAX_ACCOUNTS_READ_AHEAD enabled
   * accounts, or whose accounts could not be listed (the decision lists them again, and says why if it cannot). Never
   * rejects: a confirm refused before its decision leaves it unawaited.
   */
  async circuitsAhead(merchantId: string, mode: Mode): Promise<CircuitsAhead> {
    try {
      const accounts = (await this.connectorAccounts.routable(merchantId, mode)).filter((account) => !account.disabled);
      if (accounts.length === 0 || accounts.length > MAX_ACCOUNTS_READ_AHEAD) return { kind: 'not_read' };
      const ids = accounts.map((account) => account.id);
      const sentAt = this.now();
      const openUntil = await this.signal('read connector health', null, () => this.signals.health.openUntil(ids));
      if (openUntil === null) return { kind: 'unreadable' };
      return { kind: 'read', sentAt, openUntil: new Map(ids.map((id, index) => [id, openUntil[index] ?? null])) };
    } catch {
      return { kind: 'not_read' };
    }
  }

  /** Accounts' circuits as every process sees them, and when an open one's cool-down ends, in one round trip; null when Redis cannot be reached. */
  async circuitsOf(accountIds: readonly string[]): Promise<Map<string, { state: CircuitState; reopensAt: Date | null }> | null> {
    const circuits = await this.signal('read connector health', null, () => this.signals.health.circuits(accountIds, this.now()));
    if (circuits === null) return null;
    return new Map([...circuits].map(([id, { state, openUntil }]) => [id, { state, reopensAt: openUntil === null ? null : new Date(openUntil) }]));
  }

  /** The accounts of `ids`, in that order (a decision's candidates). */
  async accountsByIds(ids: readonly string[]): Promise<ConnectorAccount[]> {
    const accounts = await this.context.db.connectorAccount.findMany({ where: { id: { in: [...ids] } } });
    const byId = new Map(accounts.map((account) => [account.id, account]));
    return ids.flatMap((id) => byId.get(id) ?? []);
  }

  private async profileOf(principal: MerchantPrincipal, profileId: string) {
    const profile = await this.context.db.businessProfile.findFirst({ where: { id: profileId, merchantId: principal.merchantId } });
    if (profile === null) throw invalidInput('profileId', `no business profile ${profileId} for this merchant`);
    return { id: profile.id, routing: profileSettings(profile, principal.mode).routing };
  }

  /**
   * The accounts that may take a payment of this method, in the default order (the payment's connectors, the
   * profile's, then age); a saved card only at the account that issued its token. INVALID_INPUT naming the
   * method when none does.
   */
  private async eligibleAccounts(
    payment: Pick<RoutablePayment, 'merchantId' | 'mode' | 'currency' | 'country' | 'connectors'>,
    paymentMethodType: PaymentMethodType,
    profileRouting: readonly string[],
    saved: Pick<SavedPaymentMethod, 'connectorAccountId'> | null,
  ): Promise<ConnectorAccount[]> {
    const eligible = await this.eligible(payment, paymentMethodType, profileRouting);
    const accounts = saved ? eligible.filter((account) => account.id === saved.connectorAccountId) : eligible;
    if (accounts.length === 0) {
      const field = saved ? 'paymentMethodId' : 'paymentMethodData';
      const where = `${payment.currency}${payment.country ? ` from ${payment.country}` : ''} in ${payment.mode.toLowerCase()} mode`;
      throw invalidInput(
        field,
        `no connector account of this merchant accepts ${paymentMethodType} payments in ${where}${saved ? ' at the account that saved this card' : ''}; see paymentMethods, or createConnectorAccount`,
      );
    }
    return accounts;
  }

  private eligible(
    payment: Pick<RoutablePayment, 'merchantId' | 'mode' | 'currency' | 'country' | 'connectors'>,
    paymentMethodType: PaymentMethodType,
    profileRouting: readonly string[],
  ): Promise<ConnectorAccount[]> {
    return this.connectorAccounts.eligible({
      merchantId: payment.merchantId,
      mode: payment.mode,
      paymentMethodType,
      currency: payment.currency,
      country: payment.country,
      paymentConnectors: payment.connectors,
      profileRouting,
    });
  }

  /** The machine's decision over the eligible accounts, with the signals Redis holds (none when it cannot be reached). */
  private async decide(
    algorithm: RoutingAlgorithm | null,
    facts: RoutingFacts,
    eligible: readonly ConnectorAccount[],
    draw: number,
    options: { claimProbe: boolean; circuitsAhead?: Promise<CircuitsAhead> },
  ): Promise<RoutingDecision> {
    const ids = eligible.map((account) => account.id);
    // A success-rate decision needs the rates read anyway: it neither waits for the circuits read ahead nor uses them.
    const ahead = options.circuitsAhead && algorithm?.type !== 'successRate' ? await options.circuitsAhead : { kind: 'not_read' as const };
    const now = this.now();
    const signals =
      ahead.kind === 'unreadable'
        ? null
        : ((ahead.kind === 'read' ? healthAhead(ahead, ids, now) : undefined) ??
          (await this.signal('read connector health and success rates', null, () => this.readSignals(algorithm, ids, facts, now))));
    const rates = signals?.rates ?? new Map<string, SuccessRate>();
    const connectorOf = new Map(eligible.map((account) => [account.id, account.connectorName]));
    const decideWith = (health: ReadonlyMap<string, CircuitState>) =>
      decideRoute(algorithm, { facts, eligible: ids, health, rates, draw }, (id) => `${connectorOf.get(id) ?? 'account'} ${id}`);
    if (signals === null) {
      const decision = decideWith(new Map());
      return { ...decision, reason: `${decision.reason} Connector health and success rates could not be read, so none counted.` };
    }
    return options.claimProbe ? this.decideClaimingProbe(signals.health, now, decideWith) : decideWith(signals.health);
  }

  /** The accounts' circuits and, for success-rate routing, their rates: one round trip. */
  private async readSignals(algorithm: RoutingAlgorithm | null, ids: readonly string[], facts: RoutingFacts, now: number): Promise<Signals> {
    if (ids.length === 0) return { health: new Map<string, CircuitState>(), rates: new Map<string, SuccessRate>() };
    const commands = this.signals.batch();
    const circuitsOf = this.signals.health.queueCircuits(commands, ids, now);
    const ratesOf = algorithm?.type === 'successRate' ? this.signals.successRates.queueRates(commands, ids, rateKeyOf(facts), algorithm.windowSize) : null;
    const [circuits, rates] = await sent(commands);
    return {
      health: new Map([...circuitsOf(circuits)].map(([id, circuit]) => [id, circuit.state])),
      rates: ratesOf ? ratesOf(rates) : new Map<string, SuccessRate>(),
    };
  }

  /**
   * One payment at a time probes a half-open account: decided as if it were closed, a payment sent to it first
   * claims its probe; if another claimed it, the payment is decided again with that account open. Half-open
   * accounts it does not go to first stay open to it (a retry never probes), and their probes stay unclaimed for
   * the payments the algorithm sends to them.
   */
  private async decideClaimingProbe(
    states: ReadonlyMap<string, CircuitState>,
    now: number,
    decideWith: (health: ReadonlyMap<string, CircuitState>) => RoutingDecision,
  ): Promise<RoutingDecision> {
    const health = new Map(states);
    for (;;) {
      const { chosen } = decideWith(health);
      const probing = chosen !== null && health.get(chosen) === 'half_open';
      if (probing && !(await this.signal('claim a probe', false, () => this.signals.health.claimProbe(chosen, now)))) {
        health.set(chosen, 'open');
        continue;
      }
      for (const [id, state] of health) if (state === 'half_open' && !(probing && id === chosen)) health.set(id, 'open');
      return decideWith(health);
    }
  }

  /** A Redis call whose failure must not fail the payment: logged, and `fallback` stands for its result. */
  private async signal<T>(what: string, fallback: T, call: () => Promise<T>): Promise<T> {
    try {
      return await call();
    } catch (error) {
      this.context.logger.warn({ err: error }, `routing could not ${what}; routing without it`);
      return fallback;
    }
  }
}
