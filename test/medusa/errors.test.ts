// Our API's errors as the provider hands them to Medusa (packages/medusa/src/errors.ts): MedusaErrors of the
// type Medusa's error handler answers with the right status, our message and code kept.
import { MedusaError } from '@medusajs/framework/utils';
import { describe, expect, it } from 'vitest';
import { ApiError, ConnectionError, ERROR_CLASSES, WebhookVerificationError } from '../../packages/node/src/index.ts';
import { medusaErrorOf } from '../../packages/medusa/src/errors.ts';

describe('our API’s errors as MedusaErrors', () => {
  it.each([
    ['INVALID_INPUT', 'invalid_data'],
    ['NOT_FOUND', 'not_found'],
    ['INVALID_STATE', 'not_allowed'],
    ['PAYMENT_DECLINED', 'payment_authorization_error'],
    ['CONFLICT', 'conflict'],
    ['IDEMPOTENCY_MISMATCH', 'conflict'],
    ['SERVICE_UNAVAILABLE', 'unexpected_state'],
    ['UNAUTHENTICATED', 'unexpected_state'],
    ['INTERNAL', 'unexpected_state'],
  ])('%s is %s', (code, type) => {
    const ErrorClass = ERROR_CLASSES[code] ?? ApiError;
    const error = new ErrorClass(`refused: ${code}`, { code });
    const translated = medusaErrorOf(error);
    expect(MedusaError.isMedusaError(translated)).toBe(true);
    expect(translated).toMatchObject({ type, code, message: `refused: ${code}`, cause: error });
  });

  it('a connection error and a webhook signature refusal keep their codes', () => {
    expect(medusaErrorOf(new ConnectionError('no answer'))).toMatchObject({ type: 'unexpected_state', code: 'CONNECTION_ERROR' });
    expect(medusaErrorOf(new WebhookVerificationError('WEBHOOK_SIGNATURE_INVALID', 'bad signature'))).toMatchObject({
      type: 'invalid_data',
      code: 'WEBHOOK_SIGNATURE_INVALID',
    });
  });

  it('anything else passes unchanged', () => {
    const medusa = new MedusaError(MedusaError.Types.NOT_ALLOWED, 'ours');
    const plain = new TypeError('a bug');
    expect(medusaErrorOf(medusa)).toBe(medusa);
    expect(medusaErrorOf(plain)).toBe(plain);
  });
});
