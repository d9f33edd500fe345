import { describe, expect, it } from 'vitest';
import { AppError, ERROR_CODES, invalidInput, type ErrorCode } from '../../src/kernel/errors.ts';

const codes = Object.keys(ERROR_CODES) as ErrorCode[];

describe('ERROR_CODES', () => {
  it.each(codes)('%s has a 4xx/5xx status and a description', (code) => {
    const { httpStatus, description } = ERROR_CODES[code];
    expect(Number.isInteger(httpStatus)).toBe(true);
    expect(httpStatus).toBeGreaterThanOrEqual(400);
    expect(httpStatus).toBeLessThan(600);
    expect(description.trim().length).toBeGreaterThan(0);
  });

  it.each([
    'UNAUTHENTICATED',
    'FORBIDDEN',
    'NOT_FOUND',
    'INVALID_INPUT',
    'INVALID_STATE',
    'CONFLICT',
    'IDEMPOTENCY_MISMATCH',
    'RATE_LIMITED',
    'CONNECTOR_ERROR',
    'PAYMENT_DECLINED',
    'INTERNAL',
  ])('includes %s, required by docs/api.md (the public contract)', (code) => {
    expect(codes).toContain(code);
  });

  it('maps the auth and internal codes to their HTTP statuses', () => {
    expect(ERROR_CODES.UNAUTHENTICATED.httpStatus).toBe(401);
    expect(ERROR_CODES.FORBIDDEN.httpStatus).toBe(403);
    expect(ERROR_CODES.NOT_FOUND.httpStatus).toBe(404);
    expect(ERROR_CODES.INTERNAL.httpStatus).toBe(500);
  });
});

describe('invalidInput', () => {
  it.each(['webhookUrl', 'card.number'])('names the field %s in code, details and message', (field) => {
    const error = invalidInput(field, 'is not acceptable');
    expect(error).toBeInstanceOf(AppError);
    expect(error).toBeInstanceOf(Error);
    expect(error.code).toBe('INVALID_INPUT');
    expect(error.details.field).toBe(field);
    expect(error.message.startsWith(field)).toBe(true);
    expect(error.message).toContain('is not acceptable');
  });
});
