// What the routing API accepts (setRoutingAlgorithm, routingPreview): validated by the service, and the shape of
// their GraphQL inputs. Conditions are one flat input (a field and its operators); which operators fit which
// field is checked here, each problem naming its path (docs/routing.md).
import { z } from 'zod';
import { isCountry } from '../../kernel/countries.ts';
import { isCurrency } from '../../kernel/money.ts';
import { metadataProblem } from '../../kernel/metadata.ts';
import { currencyCode } from '../../kernel/validation.ts';
import { PAYMENT_METHOD_TYPES } from '../payments/methods.ts';
import type { CardBrand } from '../../kernel/cards.ts';
import { ROUTING_LIMITS, SUCCESS_RATE_DEFAULTS, type RoutingAlgorithm, type RoutingCondition } from './algorithm.ts';

/** The card networks rules and previews name: the card brands (src/kernel/cards.ts) in lower case, as routing facts hold them. */
export const CARD_NETWORKS = ['visa', 'mastercard', 'amex', 'discover', 'diners', 'jcb', 'unionpay'] as const satisfies readonly Lowercase<CardBrand>[];

export const CONDITION_FIELDS = ['AMOUNT', 'CURRENCY', 'PAYMENT_METHOD_TYPE', 'CARD_NETWORK', 'BILLING_COUNTRY', 'METADATA'] as const;
export type ConditionField = (typeof CONDITION_FIELDS)[number];

const accountId = z.string().trim().min(1, 'must not be empty');
const accountIds = z
  .array(accountId)
  .min(1, 'must name at least one connector account')
  .max(ROUTING_LIMITS.accounts, `at most ${ROUTING_LIMITS.accounts} connector accounts`)
  .superRefine((ids, context) => {
    const twice = ids.findIndex((id, index) => ids.indexOf(id) !== index);
    if (twice !== -1) context.addIssue({ code: 'custom', path: [twice], message: `names ${ids[twice]} twice` });
  });
const minorUnits = z.number().int('must be a whole number of minor units').min(0, 'must be at least 0');
const values = z
  .array(z.string().trim().min(1, 'must not be empty').max(100, 'must be at most 100 characters'))
  .max(ROUTING_LIMITS.listValues, `at most ${ROUTING_LIMITS.listValues} values`);

export const conditionInput = z
  .object({
    field: z.enum(CONDITION_FIELDS, `must be one of ${CONDITION_FIELDS.join(', ')}`),
    metadataKey: z.string().nullish(),
    gt: minorUnits.nullish(),
    gte: minorUnits.nullish(),
    lt: minorUnits.nullish(),
    lte: minorUnits.nullish(),
    between: z.array(minorUnits).nullish(),
    in: values.nullish(),
    notIn: values.nullish(),
  })
  .superRefine((condition, context) => {
    const problem = conditionProblem(condition);
    if (problem) context.addIssue({ code: 'custom', path: problem.path, message: problem.message });
  });

type ConditionInput = z.infer<typeof conditionInput>;
const NUMERIC_OPERATORS = ['gt', 'gte', 'lt', 'lte', 'between'] as const;
const LIST_OPERATORS = ['in', 'notIn'] as const;
const given = <Operator extends keyof ConditionInput>(condition: ConditionInput, operators: readonly Operator[]) =>
  operators.filter((operator) => condition[operator] != null);

/** What a list value of `field` must be, or null when it is one. */
function valueProblem(field: ConditionField, value: string): string | null {
  switch (field) {
    case 'CURRENCY':
      return isCurrency(normaliseList(field, value)) ? null : `${value} is not an ISO 4217 currency code`;
    case 'PAYMENT_METHOD_TYPE':
      return (PAYMENT_METHOD_TYPES as readonly string[]).includes(normaliseList(field, value))
        ? null
        : `${value} is not one of ${PAYMENT_METHOD_TYPES.join(', ')}`;
    case 'CARD_NETWORK':
      return (CARD_NETWORKS as readonly string[]).includes(normaliseList(field, value)) ? null : `${value} is not one of ${CARD_NETWORKS.join(', ')}`;
    case 'BILLING_COUNTRY':
      return isCountry(normaliseList(field, value)) ? null : `${value} is not an ISO 3166-1 alpha-2 country code`;
    default:
      return null;
  }
}

/** A list value as the facts hold it: currencies and countries upper case, method types and card networks lower case. */
function normaliseList(field: ConditionField, value: string): string {
  if (field === 'CURRENCY') return currencyCode.parse(value);
  if (field === 'BILLING_COUNTRY') return value.toUpperCase();
  if (field === 'PAYMENT_METHOD_TYPE' || field === 'CARD_NETWORK') return value.toLowerCase();
  return value;
}

/** The first rule a condition breaks: the operators its field takes, their values, metadataKey with METADATA only. */
function conditionProblem(condition: ConditionInput): { path: (string | number)[]; message: string } | null {
  const numeric = given(condition, NUMERIC_OPERATORS);
  const lists = given(condition, LIST_OPERATORS);
  if (condition.field === 'AMOUNT') {
    if (lists.length > 0) return { path: [lists[0]!], message: 'AMOUNT takes gt, gte, lt, lte or between, not lists' };
    if (numeric.length === 0) return { path: ['field'], message: 'AMOUNT needs at least one of gt, gte, lt, lte, between' };
    if (condition.between != null) {
      if (condition.between.length !== 2) return { path: ['between'], message: 'must be two amounts: [from, to]' };
      if (condition.between[0]! > condition.between[1]!) return { path: ['between'], message: 'must be [from, to] with from at most to' };
      if (condition.gte != null || condition.lte != null) return { path: ['between'], message: 'cannot be combined with gte or lte' };
    }
  } else {
    if (numeric.length > 0) return { path: [numeric[0]!], message: `${condition.field} takes in or notIn, not amount comparisons` };
    if (lists.length === 0) return { path: ['field'], message: `${condition.field} needs in or notIn` };
    for (const operator of lists) {
      const list = condition[operator]!;
      if (list.length === 0) return { path: [operator], message: 'must hold at least one value' };
      for (const [index, value] of list.entries()) {
        const problem = valueProblem(condition.field, value);
        if (problem) return { path: [operator, index], message: problem };
      }
    }
  }
  if (condition.field === 'METADATA') {
    if (!condition.metadataKey) return { path: ['metadataKey'], message: 'METADATA needs the metadata key to test' };
    const problem = metadataProblem({ [condition.metadataKey]: '' });
    if (problem) return { path: ['metadataKey'], message: problem.message };
  } else if (condition.metadataKey != null) {
    return { path: ['metadataKey'], message: 'is for METADATA conditions only' };
  }
  return null;
}

export const routingAlgorithmInput = z
  .object({
    priority: accountIds.nullish(),
    volumeSplit: z
      .array(
        z.object({ connectorAccountId: accountId, percent: z.number().int('must be a whole percent').min(1, 'must be 1 to 100').max(100, 'must be 1 to 100') }),
      )
      .min(1, 'must name at least one connector account')
      .max(ROUTING_LIMITS.accounts, `at most ${ROUTING_LIMITS.accounts} connector accounts`)
      .superRefine((splits, context) => {
        const ids = splits.map((split) => split.connectorAccountId);
        const twice = ids.findIndex((id, index) => ids.indexOf(id) !== index);
        if (twice !== -1) context.addIssue({ code: 'custom', path: [twice, 'connectorAccountId'], message: `names ${ids[twice]} twice` });
        const total = splits.reduce((sum, split) => sum + split.percent, 0);
        if (total !== 100) context.addIssue({ code: 'custom', message: `percents must add up to 100 (they add up to ${total})` });
      })
      .nullish(),
    rules: z
      .object({
        rules: z
          .array(
            z.object({
              name: z.string().trim().min(1, 'must not be empty').max(100, 'must be at most 100 characters'),
              conditions: z.array(conditionInput).max(ROUTING_LIMITS.conditionsPerRule, `at most ${ROUTING_LIMITS.conditionsPerRule} conditions`),
              connectorAccountIds: accountIds,
            }),
          )
          .max(ROUTING_LIMITS.rules, `at most ${ROUTING_LIMITS.rules} rules`),
        defaultConnectorAccountIds: accountIds,
      })
      .nullish(),
    successRate: z
      .object({
        connectorAccountIds: accountIds,
        windowSize: z
          .number()
          .int('must be a whole number of payments')
          .min(ROUTING_LIMITS.windowSize.min, `must be ${ROUTING_LIMITS.windowSize.min} to ${ROUTING_LIMITS.windowSize.max}`)
          .max(ROUTING_LIMITS.windowSize.max, `must be ${ROUTING_LIMITS.windowSize.min} to ${ROUTING_LIMITS.windowSize.max}`)
          .nullish(),
        explorationPercent: z
          .number()
          .int('must be a whole percent')
          .min(0, `must be 0 to ${ROUTING_LIMITS.explorationPercent.max}`)
          .max(ROUTING_LIMITS.explorationPercent.max, `must be 0 to ${ROUTING_LIMITS.explorationPercent.max}`)
          .nullish(),
      })
      .nullish(),
  })
  .superRefine((algorithm, context) => {
    const chosen = ALGORITHM_KEYS.filter((key) => algorithm[key] != null);
    if (chosen.length !== 1) context.addIssue({ code: 'custom', message: `must give exactly one of ${ALGORITHM_KEYS.join(', ')} (got ${chosen.length})` });
  });

const ALGORITHM_KEYS = ['priority', 'volumeSplit', 'rules', 'successRate'] as const;
export type RoutingAlgorithmInput = z.infer<typeof routingAlgorithmInput>;

export const setRoutingAlgorithmInput = z.object({ profileId: z.string(), algorithm: routingAlgorithmInput });

export const routingPreviewInput = z.object({
  profileId: z.string(),
  amount: minorUnits,
  currency: currencyCode.refine(isCurrency, 'must be an ISO 4217 currency code'),
  paymentMethodType: z
    .string()
    .transform((type) => type.toLowerCase())
    .pipe(z.enum(PAYMENT_METHOD_TYPES, `must be one of ${PAYMENT_METHOD_TYPES.join(', ')}`)),
  cardNetwork: z
    .string()
    .transform((network) => network.toLowerCase())
    .pipe(z.enum(CARD_NETWORKS, `must be one of ${CARD_NETWORKS.join(', ')}`))
    .nullish(),
  billingCountry: z
    .string()
    .transform((country) => country.toUpperCase())
    .refine(isCountry, 'must be an ISO 3166-1 alpha-2 country code')
    .nullish(),
  metadata: z
    .unknown()
    .optional()
    .superRefine((metadata, context) => {
      const problem = metadata == null ? null : metadataProblem(metadata);
      if (problem) context.addIssue({ code: 'custom', path: problem.field.split('.').slice(1), message: problem.message });
    })
    .transform((metadata) => (metadata ?? {}) as Record<string, string>),
});

function conditionOf(condition: ConditionInput): RoutingCondition {
  const list = (values: string[] | null | undefined) => values?.map((value) => normaliseList(condition.field, value));
  const lists = { ...(condition.in != null ? { in: list(condition.in) } : {}), ...(condition.notIn != null ? { notIn: list(condition.notIn) } : {}) };
  switch (condition.field) {
    case 'AMOUNT': {
      const [from, to] = condition.between ?? [];
      const bounds = { gt: condition.gt, gte: condition.gte ?? from, lt: condition.lt, lte: condition.lte ?? to };
      return { field: 'amount', ...Object.fromEntries(Object.entries(bounds).filter(([, value]) => value != null)) };
    }
    case 'METADATA':
      return { field: 'metadata', key: condition.metadataKey!, ...lists };
    case 'CURRENCY':
      return { field: 'currency', ...lists };
    case 'PAYMENT_METHOD_TYPE':
      return { field: 'paymentMethodType', ...lists };
    case 'CARD_NETWORK':
      return { field: 'cardNetwork', ...lists };
    case 'BILLING_COUNTRY':
      return { field: 'billingCountry', ...lists };
  }
}

/** The algorithm an input describes, as routing stores and decides with it. */
export function algorithmOf(input: RoutingAlgorithmInput): RoutingAlgorithm {
  if (input.priority) return { type: 'priority', connectorAccountIds: input.priority };
  if (input.volumeSplit) return { type: 'volumeSplit', splits: input.volumeSplit };
  if (input.rules) {
    return {
      type: 'rules',
      rules: input.rules.rules.map((rule) => ({
        name: rule.name,
        conditions: rule.conditions.map(conditionOf),
        connectorAccountIds: rule.connectorAccountIds,
      })),
      defaultConnectorAccountIds: input.rules.defaultConnectorAccountIds,
    };
  }
  const successRate = input.successRate!;
  return {
    type: 'successRate',
    connectorAccountIds: successRate.connectorAccountIds,
    windowSize: successRate.windowSize ?? SUCCESS_RATE_DEFAULTS.windowSize,
    explorationPercent: successRate.explorationPercent ?? SUCCESS_RATE_DEFAULTS.explorationPercent,
  };
}

/** Every connector account the input names, with the path of the field naming it (for INVALID_INPUT). */
export function accountReferences(input: RoutingAlgorithmInput): { path: string; id: string }[] {
  const listed = (path: string, ids: string[]) => ids.map((id, index) => ({ path: `${path}.${index}`, id }));
  if (input.priority) return listed('algorithm.priority', input.priority);
  if (input.volumeSplit)
    return input.volumeSplit.map((split, index) => ({ path: `algorithm.volumeSplit.${index}.connectorAccountId`, id: split.connectorAccountId }));
  if (input.rules) {
    return [
      ...input.rules.rules.flatMap((rule, index) => listed(`algorithm.rules.rules.${index}.connectorAccountIds`, rule.connectorAccountIds)),
      ...listed('algorithm.rules.defaultConnectorAccountIds', input.rules.defaultConnectorAccountIds),
    ];
  }
  return listed('algorithm.successRate.connectorAccountIds', input.successRate!.connectorAccountIds);
}
