// What the connectors API accepts: validated by the service, and the shape of its GraphQL input (schema.ts).
import { z } from 'zod';
import { CONNECTORS, isConnectorName } from './registry.ts';
import { isCountry } from '../../kernel/countries.ts';
import { isCurrency } from '../../kernel/money.ts';
import { isPaymentMethodType, PAYMENT_METHOD_TYPES } from '../payments/methods.ts';
import { currencyCode } from '../../kernel/validation.ts';

export const createConnectorAccountInput = z.object({
  connectorName: z.string().refine(isConnectorName, { message: `must be one of: ${Object.keys(CONNECTORS).join(', ')}` }),
  credentials: z.record(z.string(), z.unknown()),
  webhookSecret: z.string().min(16, 'must be at least 16 characters').max(256).nullish(),
  paymentMethods: z
    .array(z.string().refine(isPaymentMethodType, `must be one of: ${PAYMENT_METHOD_TYPES.join(', ')}`))
    .max(20)
    .nullish(),
  currencies: z.array(currencyCode.refine(isCurrency, 'must be an ISO 4217 currency code')).max(200).nullish(),
  countries: z.array(z.string().refine(isCountry, 'must be an ISO 3166-1 alpha-2 country code (upper case)')).max(250).nullish(),
  mode: z.enum(['TEST', 'LIVE']).nullish(),
});

export const updateConnectorAccountInput = z.object({
  id: z.string().max(64, 'must be at most 64 characters'),
  disabled: z.boolean(),
});
