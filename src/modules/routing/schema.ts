// Routing's GraphQL (docs/routing.md): setRoutingAlgorithm, routingPreview, and the fields it adds to other
// modules' types: Payment.routing, BusinessProfile.routingAlgorithm and its history, ConnectorAccount.health.
import type { Principal } from '../../kernel/principal.ts';
import { builder } from '../../platform/graphql/builder.ts';
import { inputTypeFor } from '../../platform/graphql/inputs.ts';
import { requestLoader } from '../../platform/graphql/request-loader.ts';
import { ConnectorAccountRef } from '../connectors/schema.ts';
import { BusinessProfileRef } from '../merchants/profile-schema.ts';
import { PaymentMethodTypeEnum } from '../payments/methods-schema.ts';
import { PaymentRef } from '../payments/schema.ts';
import type { RoutingAlgorithmType, RoutingDecision } from './algorithm.ts';
import { CARD_NETWORKS, CONDITION_FIELDS, conditionInput, routingAlgorithmInput, routingPreviewInput, setRoutingAlgorithmInput } from './inputs.ts';
import type { StoredAlgorithm } from './store.ts';

const ALGORITHM_TYPES = { priority: 'PRIORITY', volumeSplit: 'VOLUME_SPLIT', rules: 'RULES', successRate: 'SUCCESS_RATE' } as const;

const RoutingAlgorithmTypeEnum = builder.enumType('RoutingAlgorithmType', { values: Object.values(ALGORITHM_TYPES) });
const algorithmTypeOf = (type: RoutingAlgorithmType) => ALGORITHM_TYPES[type];

const CircuitStateEnum = builder.enumType('CircuitState', {
  description: 'A connector account’s circuit breaker: CLOSED takes payments; OPEN is skipped for a cool-down; HALF_OPEN lets one payment probe it.',
  values: ['CLOSED', 'OPEN', 'HALF_OPEN'] as const,
});

const RoutingConditionFieldEnum = builder.enumType('RoutingConditionField', { values: CONDITION_FIELDS });

/** The calling key's mode (the admin key, which has none, sees test mode's), as the profile's other settings. */
const modeOf = (principal: Principal) => ('mode' in principal ? principal.mode : 'TEST');

const RoutingRateRef = builder.simpleObject('RoutingRate', {
  description: 'A connector account’s recent authorizations for the payment’s method, card network and currency: successes out of total.',
  fields: (t) => ({ connectorAccountId: t.string(), successes: t.int(), total: t.int() }),
});

/** Connector accounts by id, one query per request: a list of payments asks for its decisions' accounts at once. */
const connectorAccount = requestLoader(
  async ({ services }, ids) => new Map((await services.routing.accountsByIds(ids)).map((account) => [account.id, account])),
);

/** Circuits by account id, one Redis round trip per request; none while Redis cannot be reached. */
const circuit = requestLoader(async ({ services }, ids) => (await services.routing.circuitsOf(ids)) ?? new Map());

const RoutingDecisionRef = builder.objectRef<RoutingDecision>('RoutingDecision').implement({
  description: 'Where a payment goes and why: the algorithm, the connector accounts in the order they are tried (retries follow it), the first of them.',
  fields: (t) => ({
    algorithm: t.field({ type: RoutingAlgorithmTypeEnum, resolve: (decision) => algorithmTypeOf(decision.algorithm) }),
    candidates: t.field({
      type: [ConnectorAccountRef],
      description: 'In the order they are tried: the first attempt goes to the first, each retry to the next.',
      resolve: async (decision, _args, context) =>
        (await Promise.all(decision.candidates.map((id) => connectorAccount(context, id)))).filter((account) => account !== null),
    }),
    chosen: t.field({
      type: ConnectorAccountRef,
      nullable: true,
      description: 'Where the first attempt goes; null when no account can take the payment.',
      // The first candidate: loaded with them.
      resolve: (decision, _args, context) => (decision.chosen ? connectorAccount(context, decision.chosen) : null),
    }),
    reason: t.exposeString('reason', { description: 'Why, in a sentence: the rule that matched, the draw, the rates compared, the accounts skipped and why.' }),
    rates: t.field({
      type: [RoutingRateRef],
      nullable: true,
      description: 'For success-rate routing, the rates it compared, best first.',
      resolve: (decision) => decision.rates ?? null,
    }),
  }),
});

const ProfileRoutingAlgorithmRef = builder.objectRef<StoredAlgorithm>('ProfileRoutingAlgorithm').implement({
  description: 'A routing algorithm a business profile had or has in one mode.',
  fields: (t) => ({
    id: t.exposeID('id'),
    type: t.field({ type: RoutingAlgorithmTypeEnum, resolve: (stored) => algorithmTypeOf(stored.algorithm.type) }),
    definition: t.field({
      type: 'JSON',
      description: 'The algorithm as data (docs/routing.md): its accounts, splits, rules or success-rate settings.',
      resolve: (stored) => stored.algorithm,
    }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    supersededAt: t.expose('supersededAt', { type: 'DateTime', nullable: true, description: 'When a newer one replaced it; null for the active one.' }),
  }),
});

const ConnectorHealthRef = builder.simpleObject('ConnectorHealth', {
  description: 'The account’s circuit breaker, as every API process sees it (docs/routing.md, Connector health).',
  fields: (t) => ({
    state: t.field({ type: CircuitStateEnum }),
    reopensAt: t.field({
      type: 'DateTime',
      nullable: true,
      description: 'For an OPEN circuit, when its cool-down ends and one payment may probe the account; null otherwise.',
    }),
  }),
});

builder.objectField(PaymentRef, 'routing', (t) =>
  t.field({
    type: RoutingDecisionRef,
    nullable: true,
    description: 'The routing decision of the payment’s last confirm; null before it is confirmed, and for a publishable key.',
    resolve: (payment, _args, { principal }) => (principal.kind === 'secretKey' ? (payment.routing as unknown as RoutingDecision | null) : null),
  }),
);

builder.objectFields(BusinessProfileRef, (t) => ({
  routingAlgorithm: t.field({
    type: ProfileRoutingAlgorithmRef,
    nullable: true,
    description: 'The active routing algorithm of the calling key’s mode; null: the connector order of `routing` (priority by default).',
    resolve: (profile, _args, { principal, services }) => services.routing.activeAlgorithm(profile.id, modeOf(principal)),
  }),
  routingAlgorithmHistory: t.field({
    type: [ProfileRoutingAlgorithmRef],
    description: 'The algorithms the active one replaced in the calling key’s mode, newest first (the last 20).',
    resolve: (profile, _args, { principal, services }) => services.routing.algorithmHistory(profile.id, modeOf(principal)),
  }),
}));

builder.objectField(ConnectorAccountRef, 'health', (t) =>
  t.field({
    type: ConnectorHealthRef,
    nullable: true,
    description: 'The account’s circuit breaker; null when it cannot be read (Redis unreachable: payments then route as if every circuit were closed).',
    resolve: async (account, _args, context) => {
      const health = await circuit(context, account.id);
      return health && { state: health.state.toUpperCase() as Uppercase<typeof health.state>, reopensAt: health.reopensAt };
    },
  }),
);

const RoutingConditionInput = inputTypeFor('RoutingConditionInput', conditionInput, {
  description:
    'One condition of a rule: `field` and its operators. AMOUNT takes gt, gte, lt, lte or between (minor units); the others take in and notIn lists; METADATA names its metadataKey.',
  fields: (t) => ({
    field: t.field({ type: RoutingConditionFieldEnum, required: true }),
    metadataKey: t.string({ description: 'For METADATA: the key whose value is tested (a missing key is in no list).' }),
    gt: t.int(),
    gte: t.int(),
    lt: t.int(),
    lte: t.int(),
    between: t.intList({ description: '[from, to], both included.' }),
    in: t.stringList({ description: `Holds when the value is one of these. Card networks: ${CARD_NETWORKS.join(', ')}.` }),
    notIn: t.stringList({ description: 'Holds when the value is none of these (a missing value is in none).' }),
  }),
});

const VolumeSplitInput = builder.inputType('VolumeSplitInput', {
  fields: (t) => ({ connectorAccountId: t.id({ required: true }), percent: t.int({ required: true }) }),
});

const RoutingRuleInput = builder.inputType('RoutingRuleInput', {
  fields: (t) => ({
    name: t.string({ required: true }),
    conditions: t.field({ type: [RoutingConditionInput], required: true, description: 'All must hold; [] always holds.' }),
    connectorAccountIds: t.idList({ required: true }),
  }),
});

const RoutingRulesInput = builder.inputType('RoutingRulesInput', {
  fields: (t) => ({
    rules: t.field({ type: [RoutingRuleInput], required: true, description: 'The first rule whose conditions all hold decides.' }),
    defaultConnectorAccountIds: t.idList({ required: true, description: 'Where payments go when no rule holds.' }),
  }),
});

const SuccessRateRoutingInput = builder.inputType('SuccessRateRoutingInput', {
  fields: (t) => ({
    connectorAccountIds: t.idList({ required: true }),
    windowSize: t.int({ description: 'The last answers counted per account, method, card network and currency: 10 to 1000 (100 by default).' }),
    explorationPercent: t.int({ description: 'The share of payments sent first to another account than the best, 0 to 50 (5 by default).' }),
  }),
});

const RoutingAlgorithmInput = inputTypeFor('RoutingAlgorithmInput', routingAlgorithmInput, {
  description: 'Exactly one of these.',
  fields: (t) => ({
    priority: t.idList({ description: 'Connector account ids in the order payments try them.' }),
    volumeSplit: t.field({ type: [VolumeSplitInput], description: 'Percents adding up to 100: each payment goes first to one account drawn by them.' }),
    rules: t.field({ type: RoutingRulesInput }),
    successRate: t.field({ type: SuccessRateRoutingInput }),
  }),
});

const SetRoutingAlgorithmInput = inputTypeFor('SetRoutingAlgorithmInput', setRoutingAlgorithmInput, {
  fields: (t) => ({
    profileId: t.id({ required: true }),
    algorithm: t.field({ type: RoutingAlgorithmInput, required: true }),
  }),
});

builder.mutationField('setRoutingAlgorithm', (t) =>
  t.withAuth({ secretKey: true }).field({
    type: ProfileRoutingAlgorithmRef,
    description:
      'Sets the profile’s routing algorithm in the key’s mode; the one it replaces joins routingAlgorithmHistory. Every account must be the merchant’s, of the key’s mode.',
    args: { input: t.arg({ type: SetRoutingAlgorithmInput, required: true }) },
    resolve: (_root, { input }, { principal, services }) => services.routing.setAlgorithm(principal, input),
  }),
);

const RoutingPreviewInput = inputTypeFor('RoutingPreviewInput', routingPreviewInput, {
  fields: (t) => ({
    profileId: t.id({ required: true }),
    amount: t.int({ required: true }),
    currency: t.string({ required: true }),
    paymentMethodType: t.field({ type: PaymentMethodTypeEnum, required: true }),
    cardNetwork: t.string({ description: `One of ${CARD_NETWORKS.join(', ')}.` }),
    billingCountry: t.string(),
    metadata: t.field({ type: 'JSON' }),
  }),
});

builder.queryField('routingPreview', (t) =>
  t.withAuth({ secretKey: true }).field({
    type: RoutingDecisionRef,
    description:
      'The decision a payment like this would get now, in the key’s mode: a dry run (nothing recorded, no probe taken). A volume split draws afresh each time.',
    args: { input: t.arg({ type: RoutingPreviewInput, required: true }) },
    resolve: (_root, { input }, { principal, services }) => services.routing.preview(principal, input),
  }),
);
