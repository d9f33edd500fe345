// The scrubbing of a processor's error body before it is kept on an attempt (src/kernel/processor-error-body.ts):
// random nested JSON with card numbers and card or secret fields planted anywhere never comes out with a Luhn-valid
// card number or one of those fields, and what comes out is always a bounded JSON object PostgreSQL stores as JSONB.
// fast-check with a fixed seed, as test/faults/fuzz.test.ts, so a failure replays.
import fc from 'fast-check';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { MAX_BODY_BYTES, processorErrorBody, type JsonValue } from '../../src/kernel/processor-error-body.ts';

const SEED = 20261127;

/** Fields a body may never keep, as processors and careless payloads name them. */
const FORBIDDEN_FIELDS = [
  'number',
  'card_number',
  'cardNumber',
  'cvc',
  'cvv',
  'cvc_check',
  'exp_month',
  'exp_year',
  'expiryDate',
  'expiry_month',
  'encryptedCardNumber',
  'encryptedSecurityCode',
  'iban',
  'account_number',
  'api_key',
  'x-api-key',
  'client_secret',
  'secret',
  'token',
  'payment_method_token',
  'password',
  'hmacSignature',
  'holderName',
  'payment_method',
];
const normalised = (key: string) => key.toLowerCase().replace(/[-_.]/g, '');
const FORBIDDEN = new Set(FORBIDDEN_FIELDS.map(normalised));

const luhnValid = (digits: string): boolean => {
  let sum = 0;
  for (let index = 0; index < digits.length; index += 1) {
    let digit = Number(digits[digits.length - 1 - index]);
    if (index % 2 === 1) digit = digit * 2 > 9 ? digit * 2 - 9 : digit * 2;
    sum += digit;
  }
  return sum % 10 === 0;
};

/** A Luhn-valid card number of 12 to 19 digits. */
const pan = fc.integer({ min: 11, max: 18 }).chain((length) =>
  fc.array(fc.integer({ min: 0, max: 9 }), { minLength: length, maxLength: length }).map((digits) => {
    const body = digits.join('');
    const check = [...'0123456789'].find((candidate) => luhnValid(body + candidate))!;
    return body + check;
  }),
);
/** A card number as text: bare, or grouped by four with spaces or dashes. */
const writtenPan = fc.tuple(pan, fc.constantFrom('', ' ', '-')).map(([number, separator]) => number.replace(/(\d{4})(?=\d)/g, `$1${separator}`));
const textWithPan = fc.tuple(fc.string({ maxLength: 30 }), writtenPan, fc.string({ maxLength: 30 })).map((parts) => parts.join(''));
/** Text of every kind: Unicode with lone surrogates, NUL and other control characters. */
const anyText = fc.oneof(fc.string({ unit: 'binary', maxLength: 60 }), fc.constantFrom('\u0000', 'a\u0000b', '\ud800', 'x\udfffy', '\u0001123'));

const planted: fc.Arbitrary<JsonValue> = fc.letrec<{ value: JsonValue }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.oneof(anyText, textWithPan, fc.double(), fc.integer(), fc.boolean(), fc.constant(null)),
    // A card number as a JSON number, where it is exact.
    pan.filter((number) => number.length <= 15).map(Number),
    fc.array(tie('value'), { maxLength: 8 }),
    fc.dictionary(fc.oneof(anyText, fc.constantFrom(...FORBIDDEN_FIELDS), writtenPan), tie('value'), { maxKeys: 8 }),
    fc.record({ card: fc.record({ number: writtenPan, cvc: fc.constantFrom('123', '7373'), exp_month: fc.constant(12) }), message: textWithPan }),
  ),
})).value;

const digitRuns = (text: string): string[] => text.match(/\d(?:[ -]?\d)*/g)?.map((run) => run.replace(/[ -]/g, '')) ?? [];
/** Whether any 12 to 19 digits in a row of `text` (spaces and dashes between them ignored) read as a card number. */
function holdsCardNumber(text: string): boolean {
  return digitRuns(text).some((run) => {
    for (let start = 0; start < run.length; start += 1)
      for (let length = 12; length <= 19 && start + length <= run.length; length += 1) if (luhnValid(run.slice(start, start + length))) return true;
    return false;
  });
}

/** Every key, string and number of `value`, as text. */
function* textsOf(value: JsonValue): Generator<string> {
  if (value === null || typeof value === 'boolean') return;
  if (typeof value !== 'object') return yield String(value);
  for (const [key, inner] of Object.entries(value)) {
    if (!Array.isArray(value)) yield key;
    yield* textsOf(inner);
  }
}

function* keysOf(value: JsonValue): Generator<string> {
  if (value === null || typeof value !== 'object') return;
  for (const [key, inner] of Object.entries(value)) {
    if (!Array.isArray(value)) yield key;
    yield* keysOf(inner);
  }
}

const plainAllTheWay = (value: JsonValue): boolean =>
  value === null ||
  typeof value !== 'object' ||
  ((Array.isArray(value) || Object.getPrototypeOf(value) === Object.prototype) && Object.values(value).every(plainAllTheWay));

describe('processorErrorBody', () => {
  it('keeps no card number, no card or secret field, and stays a bounded, well-formed JSON object', () => {
    fc.assert(
      fc.property(planted, (body) => {
        const kept = processorErrorBody(body);
        if (kept === null) return;
        const json = JSON.stringify(kept);
        expect([...textsOf(kept)].filter(holdsCardNumber)).toEqual([]);
        expect(holdsCardNumber(json)).toBe(false);
        expect([...keysOf(kept)].filter((key) => FORBIDDEN.has(normalised(key)))).toEqual([]);
        expect(new TextEncoder().encode(json).length).toBeLessThanOrEqual(MAX_BODY_BYTES);
        expect(json.isWellFormed() && !json.includes('\\u0000')).toBe(true);
        expect(!Array.isArray(kept) && plainAllTheWay(kept)).toBe(true);
      }),
      { seed: SEED, numRuns: 2000 },
    );
  });

  it("keeps what says why it failed: Stripe's error object without the card, numbers masked in its message", () => {
    const stripe = {
      type: 'card_error',
      code: 'card_declined',
      decline_code: 'insufficient_funds',
      message: 'Your card 4000 0000 0000 9995 has insufficient funds.',
      doc_url: 'https://stripe.com/docs/error-codes/card-declined',
      request_log_url: 'https://dashboard.stripe.com/test/logs/req_1',
      advice_code: 'try_again_later',
      payment_method: { id: 'pm_1', card: { last4: '9995', exp_month: 12, fingerprint: 'f' }, billing_details: { email: 'a@b.c' } },
      payment_intent: { id: 'pi_1', client_secret: 'pi_1_secret_2', amount: 1500 },
    };
    expect(processorErrorBody(stripe)).toEqual({
      type: 'card_error',
      code: 'card_declined',
      decline_code: 'insufficient_funds',
      message: 'Your card [number masked] has insufficient funds.',
      doc_url: 'https://stripe.com/docs/error-codes/card-declined',
      request_log_url: 'https://dashboard.stripe.com/test/logs/req_1',
      advice_code: 'try_again_later',
      payment_intent: { id: 'pi_1', amount: 1500 },
    });
  });

  it('keeps no body as null, and a body that is not an object under "body"; bounds a huge one', () => {
    expect(processorErrorBody(undefined)).toBeNull();
    expect(processorErrorBody(null)).toBeNull();
    expect(processorErrorBody('Bad Gateway')).toEqual({ body: 'Bad Gateway' });
    expect(processorErrorBody([1, 2])).toEqual({ body: [1, 2] });
    const huge = processorErrorBody({ errorCode: '702', items: Array.from({ length: 10_000 }, (_, index) => ({ index, text: 'x'.repeat(500) })) });
    expect(huge).toMatchObject({ errorCode: '702' });
    expect(new TextEncoder().encode(JSON.stringify(huge)).length).toBeLessThanOrEqual(MAX_BODY_BYTES);
  });

  describe('in PostgreSQL', () => {
    let sql: pg.Client;
    beforeAll(async () => {
      sql = new pg.Client({ connectionString: inject('databaseUrl') });
      await sql.connect();
    });
    afterAll(() => sql?.end());

    it('every kept body is stored as JSONB as it is', async () => {
      const kept = fc.sample(planted, { seed: SEED, numRuns: 500 }).map((body) => JSON.stringify(processorErrorBody(body)));
      const { rows } = await sql.query<{ body: unknown }>('SELECT body::jsonb AS body FROM unnest($1::text[]) AS body', [kept]);
      expect(rows.map((row) => JSON.stringify(row.body))).toHaveLength(kept.length);
      expect(rows.map((row) => row.body)).toEqual(kept.map((text) => JSON.parse(text)));
    });
  });
});
