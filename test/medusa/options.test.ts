// The provider's refusals that need no running service: options Medusa would start it with, and amounts.
import { describe, expect, it } from 'vitest';
import { PaymentsOrchestratorProviderService, fromMinorUnits, toMinorUnits } from '../../packages/medusa/src/index.ts';

const valid = { apiKey: 'sk_test_abc', baseUrl: 'https://payments.example', webhookKey: 'whk' };

describe('options', () => {
  it.each([
    [{ ...valid, apiKey: undefined }, 'payments-orchestrator option apiKey: required, a non-empty string'],
    [{ ...valid, webhookKey: '' }, 'payments-orchestrator option webhookKey: required, a non-empty string'],
    [{ ...valid, apiKey: 'pk_test_abc' }, 'payments-orchestrator option apiKey: must be a secret key (sk_test_… or sk_live_…)'],
    [{ ...valid, baseUrl: 'payments.example' }, 'payments-orchestrator option baseUrl: must be an absolute URL'],
    [{ ...valid, capture: 'yes' }, 'payments-orchestrator option capture: must be true or false'],
    [{ ...valid, profileId: 'mer_1' }, 'payments-orchestrator option profileId: must be a business profile id (pro_…)'],
  ])('%o is refused: %s', (options, message) => {
    expect(() => PaymentsOrchestratorProviderService.validateOptions(options)).toThrow(message);
  });

  it('takes a secret key, a URL, a signing key, capture and a profile', () => {
    expect(() => PaymentsOrchestratorProviderService.validateOptions({ ...valid, capture: true, profileId: 'pro_1' })).not.toThrow();
  });
});

describe('amounts', () => {
  it('converts by the ISO 4217 exponent, in decimal', () => {
    expect(toMinorUnits('19.99', 'usd')).toBe(1999);
    expect(toMinorUnits(1.005, 'usd')).toBe(101);
    expect(toMinorUnits(1999, 'jpy')).toBe(1999);
    expect(toMinorUnits({ value: '1.2345', precision: 20 }, 'kwd')).toBe(1235);
    expect(fromMinorUnits(1999, 'usd')).toBe(19.99);
    expect(fromMinorUnits(1234, 'KWD')).toBe(1.234);
    expect(fromMinorUnits(1999, 'jpy')).toBe(1999);
  });

  it('refuses a currency the API does not accept, and a negative amount, naming the field', () => {
    expect(() => toMinorUnits(1, 'xts')).toThrow('currency_code: xts is not an ISO 4217 currency the payments API accepts');
    expect(() => toMinorUnits(-1, 'usd', 'amount')).toThrow('amount: must be a non-negative amount, got -1');
  });
});
