import { CONNECTORS } from '../../connectors/registry.ts';
import { requireMerchant } from '../../services/principal.ts';
import { builder } from '../builder.ts';
import { ModeEnum } from './scalars.ts';

export const ConnectorAccountRef = builder.prismaObject('ConnectorAccount', {
  description: "A merchant's account at a processor. Credentials and the webhook secret are never returned.",
  fields: (t) => ({
    id: t.exposeID('id'),
    connectorName: t.exposeString('connectorName'),
    mode: t.expose('mode', { type: ModeEnum }),
    paymentMethods: t.exposeStringList('paymentMethods'),
    currencies: t.exposeStringList('currencies', { description: 'Accepted currencies; empty accepts all.' }),
    countries: t.exposeStringList('countries', { description: 'Accepted customer countries; empty accepts all.' }),
    disabled: t.exposeBoolean('disabled'),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
  }),
});

builder.queryField('connectorAccounts', (t) =>
  t.field({
    type: [ConnectorAccountRef],
    description: "The merchant's connector accounts in the key's mode.",
    authScopes: { secretKey: true },
    resolve: (_root, _args, { principal, services }) => services.connectorAccounts.list(requireMerchant(principal)),
  }),
);

const CreateConnectorAccountInput = builder.inputType('CreateConnectorAccountInput', {
  fields: (t) => ({
    connectorName: t.string({ required: true, description: `One of: ${Object.keys(CONNECTORS).join(', ')}.` }),
    credentials: t.field({ type: 'JSON', required: true, description: 'The connector’s credentials, e.g. { "apiKey": "sk_sandbox_…" } for the sandbox.' }),
    webhookSecret: t.string({ description: 'The secret the connector signs its callbacks with.' }),
    paymentMethods: t.stringList({ description: 'Enabled payment method types (card, bank_debit, wallet, ...); defaults to all the connector supports.' }),
    currencies: t.stringList({ description: 'ISO 4217 codes the account accepts; all when omitted.' }),
    countries: t.stringList({ description: 'ISO 3166-1 alpha-2 codes of customers the account accepts; all when omitted.' }),
    mode: t.field({ type: ModeEnum, description: "Defaults to the key's mode (and must equal it)." }),
  }),
});

builder.mutationField('createConnectorAccount', (t) =>
  t.field({
    type: ConnectorAccountRef,
    authScopes: { secretKey: true },
    args: { input: t.arg({ type: CreateConnectorAccountInput, required: true }) },
    resolve: (_root, { input }, { principal, services }) => services.connectorAccounts.create(requireMerchant(principal), input),
  }),
);
