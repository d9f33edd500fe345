// Generators (fast-check arbitraries) for the fuzzing scenario (test/faults/fuzz.test.ts): GraphQL inputs
// that are valid, broken in exactly one known way, or plain chaos; raw HTTP bodies and GraphQL documents;
// processor callbacks. Each case is plain data, so a failing one prints as it was sent and fast-check can
// replay it from the seed.
import fc from 'fast-check';
import { CURRENCY_EXPONENTS, MAX_AMOUNT_MINOR } from '../../src/kernel/money.ts';

export const CURRENCIES = Object.keys(CURRENCY_EXPONENTS);
const NOW_YEAR = new Date().getUTCFullYear();

// ---------------------------------------------------------------------------------------------- strings

/** One or more UTF-16 code units a string may hold that PostgreSQL or a parser may choke on. */
const NASTY = [
  '\u0000',
  '\ud800',
  '\udfff',
  '\ud83d',
  '\u202e',
  '\ufeff',
  '\u2028',
  '\u0085',
  '\u00a0',
  '\t',
  '\n',
  '\r\n',
  '\u001b[31m',
  '"',
  '\\',
  "'",
  '`',
  '\\u0000',
  '\\ud800',
  '%00',
  '%s%n',
  '{{7*7}}',
  '${x}',
  '<script>',
  "'; DROP TABLE payment_intents; --",
  '💳',
  '👩‍👩‍👧',
  'é',
  'ﬀ',
  'ſ',
  'ı',
  'İ',
  'Ａ',
  '𝒜',
  '\u0301',
  '\u200b',
];

const hasLoneSurrogate = (value: string) => /\p{Cs}/u.test(value);
/** Text PostgreSQL stores exactly: well-formed UTF-16 without NUL. */
export const isStorableText = (value: string) => !value.includes('\u0000') && !hasLoneSurrogate(value);

/** Any string: ASCII, any Unicode, lone surrogates, NUL and friends. */
export const anyString = (maxLength = 40): fc.Arbitrary<string> =>
  fc.oneof(
    fc.string({ maxLength }),
    fc.string({ unit: 'grapheme', maxLength }),
    fc.string({ unit: 'binary', maxLength }),
    fc.array(fc.oneof(fc.constantFrom(...NASTY), fc.string({ maxLength: 3 })), { maxLength: 6 }).map((parts) => parts.join('')),
  );

/** Storable strings of `minLength` to `maxLength` UTF-16 code units. */
export const storableString = (minLength: number, maxLength: number): fc.Arbitrary<string> =>
  fc
    .oneof(fc.string({ minLength, maxLength }), fc.string({ unit: 'grapheme', minLength, maxLength }), fc.string({ unit: 'binary', minLength, maxLength }))
    // eslint-disable-next-line no-control-regex -- the NUL is one of the two things made storable here
    .map((value) => value.replace(/\u0000|\p{Cs}/gu, '_'))
    .filter((value) => value.length >= minLength && value.length <= maxLength);

/** A long string: `length` UTF-16 code units of a repeated piece (cheap to generate at a megabyte). */
export const longString = (minLength: number, maxLength: number, pieces: string[] = ['a', 'é', '💳', 'x\u0000', '\ud800', 'ſ']): fc.Arbitrary<string> =>
  fc
    .tuple(fc.constantFrom(...pieces), fc.integer({ min: minLength, max: maxLength }))
    .map(([piece, length]) => piece.repeat(Math.ceil(length / piece.length)).slice(0, length));

/** A value of any JSON type, with nasty strings in it. */
export const anyJson: fc.Arbitrary<unknown> = fc.oneof(
  { arbitrary: fc.jsonValue({ maxDepth: 3 }), weight: 3 },
  { arbitrary: anyString(), weight: 2 },
  { arbitrary: fc.constantFrom<unknown>(null, true, false, 0, -1, 1.5, 2 ** 31, 2 ** 53, -(2 ** 63), 1e308, -1e-308, [], {}, [null], { '': '' }), weight: 2 },
  { arbitrary: fc.dictionary(anyString(8), fc.jsonValue({ maxDepth: 1 }), { maxKeys: 4 }), weight: 1 },
);

// --------------------------------------------------------------------------------------- money fields

export const validAmount = fc.oneof(fc.integer({ min: 1, max: MAX_AMOUNT_MINOR }), fc.constantFrom(1, 2, 99, 100, 1050, MAX_AMOUNT_MINOR));

/** Amounts that break the rules (type or range), all refused as INVALID_INPUT naming the field. */
export const badAmount: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom(0, -1, -0, MAX_AMOUNT_MINOR + 1, 2 ** 31 - 1, -(2 ** 31)),
  fc.integer({ min: -(2 ** 31), max: 0 }),
  fc.integer({ min: MAX_AMOUNT_MINOR + 1, max: 2 ** 31 - 1 }),
  fc.constantFrom(2 ** 31, 2 ** 32, 2 ** 53, 2 ** 53 + 2, 1e21, -1e21, 1e308, 0.5, 10.5, 1050.000001, -0.1, 4.9e-324),
  fc.double({ noNaN: true, noDefaultInfinity: true }).filter((value) => !Number.isInteger(value)),
  fc.constantFrom('100', '1e3', '', ' 1', '0x10', 'NaN', 'Infinity', '١٠٠', true, false, [], [100], {}, { value: 100 }),
);

/** Any amount at all, for operations where a valid one may also be refused (capture, refund). */
export const anyAmount: fc.Arbitrary<unknown> = fc.oneof(
  { arbitrary: validAmount, weight: 3 },
  { arbitrary: badAmount, weight: 2 },
  { arbitrary: fc.integer(), weight: 1 },
);

/** Valid codes as merchants send them: upper case, lower case (accepted, stored upper case), mixed. */
export const validCurrency = fc
  .tuple(fc.constantFrom(...CURRENCIES), fc.constantFrom('upper', 'lower', 'mixed'))
  .map(([code, form]) => (form === 'upper' ? code : form === 'lower' ? code.toLowerCase() : code[0]!.toLowerCase() + code.slice(1)));

/** Codes that are not ISO 4217, including Unicode that upper-cases to a real code (ſ → S, ı → I). */
export const badCurrency: fc.Arbitrary<unknown> = fc.oneof(
  fc.stringMatching(/^[A-Z]{3}$/).filter((code) => !CURRENCIES.includes(code)),
  fc.constantFrom(
    'uſd',
    'ınr',
    'ıdr',
    'chſ',
    'ＵＳＤ',
    'US',
    'USDD',
    ' USD',
    'USD ',
    'U\u200bSD',
    'XTS',
    'XXX',
    'XAU',
    'EU€',
    '€',
    '$',
    '',
    '\u0000SD',
    'US\ud800',
    '🇺🇸',
  ),
  anyString(8).filter((code) => !/^[A-Za-z]{3}$/.test(code) || !CURRENCIES.includes(code.toUpperCase())),
  fc.constantFrom(840, null, true, ['USD'], { code: 'USD' }),
);

// ----------------------------------------------------------------------------------- payment methods

/** Card numbers the sandbox knows, with what a confirm leads to. */
export const SANDBOX_CARDS = {
  approved: '4242424242424242',
  approvedMastercard: '5555555555554444',
  declined: '4000000000000002',
  insufficientFunds: '4000000000009995',
  challenge: '4000002500003155',
  retryable: '4000000000000119',
  halfFunds: '4000000000001976',
} as const;

export const validCard = fc.record({
  number: fc.constantFrom(SANDBOX_CARDS.approved, SANDBOX_CARDS.approvedMastercard, '4242 4242 4242 4242', '4242-4242-4242-4242'),
  expiryMonth: fc.integer({ min: 1, max: 12 }),
  expiryYear: fc.integer({ min: NOW_YEAR + 1, max: NOW_YEAR + 20 }),
  cvc: fc.constant('123'),
  holderName: fc.option(storableString(0, 100), { nil: undefined }),
});

const validBankDebit = fc.record({
  accountHolderName: storableString(1, 100).filter((name) => name.trim().length > 0),
  iban: fc.constantFrom('DE89370400440532013000', 'DE89 3704 0044 0532 0130 00', 'GB33BUKB20201555555555', 'FR1420041010050500013M02606'),
});

const providerName = fc.stringMatching(/^[a-z0-9_]{1,40}$/);

export const validPaymentMethodData: fc.Arbitrary<Record<string, unknown>> = fc.oneof(
  { arbitrary: validCard.map((card) => ({ card })), weight: 4 },
  { arbitrary: validBankDebit.map((bankDebit) => ({ bankDebit })), weight: 1 },
  { arbitrary: fc.record({ type: providerName, paymentToken: storableString(1, 512) }).map((wallet) => ({ wallet })), weight: 1 },
  { arbitrary: fc.record({ type: providerName, paymentToken: storableString(1, 512) }).map((payLater) => ({ payLater })), weight: 1 },
  { arbitrary: providerName.map((bank) => ({ bankRedirect: { bank } })), weight: 1 },
  { arbitrary: fc.constant({ bankTransfer: { type: 'sepa' } }), weight: 1 },
  { arbitrary: providerName.map((network) => ({ crypto: { network } })), weight: 1 },
);

/** Payment method data of every shape: sandbox cards with each outcome, broken cards, several kinds at once. */
export const anyPaymentMethodData: fc.Arbitrary<unknown> = fc.oneof(
  { arbitrary: validPaymentMethodData, weight: 3 },
  {
    arbitrary: fc
      .record({
        number: fc.constantFrom(...Object.values(SANDBOX_CARDS)),
        expiryMonth: fc.constant(12),
        expiryYear: fc.constant(NOW_YEAR + 2),
        cvc: fc.constant('123'),
      })
      .map((card) => ({ card })),
    weight: 4,
  },
  {
    arbitrary: fc
      .record(
        {
          number: fc.oneof(anyString(24), fc.stringMatching(/^\d{0,25}$/), fc.constant('4242424242424241')),
          expiryMonth: fc.oneof(fc.integer({ min: -5, max: 20 }), anyJson),
          expiryYear: fc.oneof(fc.integer({ min: 0, max: 10_000 }), anyJson),
          cvc: fc.oneof(fc.stringMatching(/^\d{0,9}$/), anyJson),
          holderName: fc.oneof(anyString(120), longString(90, 200)),
        },
        { requiredKeys: [] },
      )
      .map((card) => ({ card })),
    weight: 2,
  },
  { arbitrary: fc.tuple(validPaymentMethodData, validPaymentMethodData).map(([one, two]) => ({ ...one, ...two })), weight: 1 },
  {
    arbitrary: fc.dictionary(fc.constantFrom('card', 'bankDebit', 'wallet', 'payLater', 'bankRedirect', 'bankTransfer', 'crypto', 'paypal', ''), anyJson, {
      maxKeys: 3,
    }),
    weight: 2,
  },
  { arbitrary: anyJson, weight: 1 },
);

// ------------------------------------------------------------------------------------ createPayment

const GRAPHQL_NAME = /^[_A-Za-z][_0-9A-Za-z]*$/;

const metadataKey = storableString(1, 40).filter((key) => !key.includes('[') && !key.includes(']') && key !== '__proto__');
const validMetadata = fc.dictionary(metadataKey, storableString(0, 500), { maxKeys: 50 });

const validReturnUrl = fc
  .webUrl({ withQueryParameters: true, withFragments: true, validSchemes: ['http', 'https'] })
  .filter((url) => url.length <= 2048 && /^https?:\/\//i.test(url) && URL.canParse(url));

export const validCustomerId = fc.stringMatching(/^[A-Za-z0-9_-]{1,60}$/).map((rest) => `cus_${rest}`);

/** Country codes Node's ICU names (what isCountry accepts). */
const COUNTRIES = ['US', 'DE', 'FR', 'GB', 'JP', 'IN', 'BR', 'NG', 'KW', 'CH', 'SE', 'AU'];

export interface CreateCase {
  kind: 'create';
  /** What the input is meant to be: accepted, refused for one known reason, or anything. */
  expect: 'ok' | 'defect' | 'chaos';
  /** For a defect: what it is, and the field the error must name (undefined: any or none). */
  defect?: string;
  field?: string;
  /** Whether the field must be named even when the input is sent as a literal in the document. */
  ruleLevel?: boolean;
  variables: Record<string, unknown>;
  /** Send the input as a literal in the document instead of a variable, where it can be written as one. */
  literal: boolean;
  key: 'secret' | 'publishable' | 'none' | 'bogus';
  idempotencyKey?: string;
}

/** A valid createPayment input; when it confirms, only with a card the sandbox approves or a bank debit. */
export const validCreateInput: fc.Arbitrary<Record<string, unknown>> = fc
  .record(
    {
      amount: validAmount,
      currency: validCurrency,
      captureMethod: fc.constantFrom('AUTOMATIC', 'MANUAL', null),
      authenticationType: fc.constantFrom('NO_THREE_DS', 'THREE_DS', null),
      customerId: validCustomerId,
      description: fc.oneof(storableString(0, 1000), fc.constant(null)),
      metadata: fc.oneof(validMetadata, fc.constant(null)),
      returnUrl: validReturnUrl,
      country: fc.constantFrom(...COUNTRIES),
      setupFutureUsage: fc.constantFrom('ON_SESSION', null),
      paymentMethodData: validPaymentMethodData,
      confirm: fc.boolean(),
      connectors: fc.constantFrom(['sandbox'], [], ['fauxpay', 'sandbox']),
    },
    { requiredKeys: ['amount', 'currency'] },
  )
  .map((input) => {
    const methods = input.paymentMethodData ? Object.keys(input.paymentMethodData) : [];
    // Methods that settle later cannot be captured manually.
    if (input.captureMethod === 'MANUAL' && methods.some((method) => method !== 'card')) delete input.captureMethod;
    // Confirm only what the sandbox answers predictably: an approved card, a bank debit.
    if (input.confirm && !(methods[0] === 'card' || methods[0] === 'bankDebit')) input.confirm = false;
    if (input.confirm && methods.length === 0) delete input.confirm;
    return input;
  });

interface Defect {
  name: string;
  field?: string;
  /** Raised by the service's own rules (named in either form) rather than by GraphQL's type coercion. */
  ruleLevel?: boolean;
  apply: (input: Record<string, unknown>) => Record<string, unknown>;
}

const set = (key: string, value: unknown) => (input: Record<string, unknown>) => ({ ...input, [key]: value });

/** One defect each: the input it makes is refused as INVALID_INPUT naming `field`. */
const createDefect: fc.Arbitrary<Defect> = fc.oneof(
  badAmount.map((amount): Defect => ({
    name: `amount ${JSON.stringify(amount)}`,
    field: 'amount',
    ruleLevel: Number.isInteger(amount) && Math.abs(amount as number) < 2 ** 31,
    apply: set('amount', amount),
  })),
  fc.constant<Defect>({ name: 'no amount', apply: ({ amount: _amount, ...rest }) => rest }),
  fc.constant<Defect>({ name: 'amount null', field: 'amount', apply: set('amount', null) }),
  badCurrency.map((currency): Defect => ({
    name: `currency ${JSON.stringify(currency)}`,
    field: 'currency',
    ruleLevel: typeof currency === 'string',
    apply: set('currency', currency),
  })),
  fc.constant<Defect>({ name: 'no currency', apply: ({ currency: _currency, ...rest }) => rest }),
  fc.oneof(storableString(1001, 1400), longString(1001, 100_000, ['a', 'é', '💳'])).map((description): Defect => ({
    name: `description of ${description.length}`,
    field: 'description',
    ruleLevel: true,
    apply: set('description', description),
  })),
  fc.tuple(storableString(0, 20), fc.constantFrom('\u0000', '\ud800', '\udc00', '\ud83d')).map(([text, bad]): Defect => ({
    name: `description with ${JSON.stringify(bad)}`,
    field: 'description',
    apply: set('description', `${text}${bad}${text}`),
  })),
  fc
    .constantFrom<unknown>(['a'], 'text', 5, true)
    .map((metadata): Defect => ({ name: `metadata ${JSON.stringify(metadata)}`, field: 'metadata', ruleLevel: true, apply: set('metadata', metadata) })),
  fc
    .dictionary(metadataKey, storableString(0, 5), { minKeys: 51, maxKeys: 60 })
    .filter((metadata) => Object.keys(metadata).length > 50)
    .map((metadata): Defect => ({ name: 'metadata with 51+ keys', field: 'metadata', ruleLevel: true, apply: set('metadata', metadata) })),
  fc
    .tuple(metadataKey, fc.oneof(storableString(501, 700), fc.integer(), fc.constant(null), fc.constant({ nested: 'x' }), fc.constant(['x'])))
    .map(([key, value]): Defect => ({
      name: `metadata.${key} = ${typeof value}`,
      field: `metadata.${key}`,
      ruleLevel: true,
      apply: set('metadata', { [key]: value }),
    })),
  fc
    .constantFrom('k'.repeat(41), 'a[b]', '[', ']', '__proto__')
    .map((key): Defect => ({ name: `metadata key ${key}`, field: `metadata.${key}`, ruleLevel: true, apply: set('metadata', { [key]: 'v' }) })),
  fc.tuple(metadataKey, fc.constantFrom('\u0000', '\ud800', '\udfff')).map(([key, bad]): Defect => ({
    name: `metadata.${key} holds ${JSON.stringify(bad)}`,
    field: `metadata.${key}`,
    apply: set('metadata', { [key]: `v${bad}` }),
  })),
  fc
    .tuple(metadataKey, fc.constantFrom('\u0000', '\ud800', '\udfff'))
    .map(([key, bad]): Defect => ({ name: `metadata key with ${JSON.stringify(bad)}`, field: 'metadata', apply: set('metadata', { [`${key}${bad}`]: 'v' }) })),
  anyString(70)
    .filter((id) => !/^cus_[A-Za-z0-9_-]{1,60}$/.test(id))
    .map((customerId): Defect => ({
      name: `customerId ${JSON.stringify(customerId)}`,
      field: 'customerId',
      ruleLevel: isStorableText(customerId),
      apply: set('customerId', customerId),
    })),
  fc
    .oneof(
      anyString(30),
      fc.constantFrom('ftp://x.example', 'javascript:alert(1)', '//example.com', 'https://', 'example.com', `https://e.example/${'a'.repeat(2048)}`),
    )
    .filter((url) => !(/^https?:\/\//i.test(url) && URL.canParse(url) && url.length <= 2048))
    .map((returnUrl): Defect => ({
      name: `returnUrl ${JSON.stringify(returnUrl.slice(0, 40))}`,
      field: 'returnUrl',
      ruleLevel: isStorableText(returnUrl),
      apply: set('returnUrl', returnUrl),
    })),
  fc.constantFrom('us', 'USA', 'ZZ', 'XX', 'U', '', 'ＵＳ', 'u\u0000').map((country): Defect => ({
    name: `country ${JSON.stringify(country)}`,
    field: 'country',
    ruleLevel: isStorableText(country),
    apply: set('country', country),
  })),
  fc.constantFrom('manual', 'Manual', 'NONE', '', 'AUTOMATIC ', 1, true).map((captureMethod): Defect => ({
    name: `captureMethod ${JSON.stringify(captureMethod)}`,
    field: 'captureMethod',
    apply: set('captureMethod', captureMethod),
  })),
  fc.constantFrom('three_ds', '3DS', 0).map((authenticationType): Defect => ({
    name: `authenticationType ${JSON.stringify(authenticationType)}`,
    field: 'authenticationType',
    apply: set('authenticationType', authenticationType),
  })),
  fc
    .constantFrom('true', 1, 'yes', [true])
    .map((confirm): Defect => ({ name: `confirm ${JSON.stringify(confirm)}`, field: 'confirm', apply: set('confirm', confirm) })),
  fc
    .constantFrom<[unknown, string]>([['paypal'], 'connectors.0'], [['SANDBOX'], 'connectors.0'], [Array(11).fill('sandbox'), 'connectors'])
    .map(([connectors, field]): Defect => ({ name: `connectors ${JSON.stringify(connectors)}`, field, ruleLevel: true, apply: set('connectors', connectors) })),
  fc.constant<Defect>({
    name: 'confirm without a payment method',
    field: 'paymentMethodData',
    ruleLevel: true,
    apply: ({ paymentMethodData: _pmd, ...rest }) => ({ ...rest, confirm: true }),
  }),
  fc.constant<Defect>({
    name: 'OFF_SESSION without a customer',
    field: 'customerId',
    ruleLevel: true,
    apply: ({ customerId: _customer, ...rest }) => ({ ...rest, setupFutureUsage: 'OFF_SESSION' }),
  }),
  fc.constant<Defect>({
    name: 'MANUAL capture of a bank debit',
    field: 'captureMethod',
    ruleLevel: true,
    apply: (input) => ({ ...input, captureMethod: 'MANUAL', paymentMethodData: { bankDebit: { accountHolderName: 'Ada', iban: 'DE89370400440532013000' } } }),
  }),
  fc
    .constantFrom('pro_DoesNotExist000000000000', 'pro_\u00e9', 'x')
    .map((profileId): Defect => ({ name: `profileId ${profileId}`, field: 'profileId', ruleLevel: true, apply: set('profileId', profileId) })),
  fc
    .constantFrom<[Record<string, unknown>, string]>(
      [{ card: { number: '4242424242424241', expiryMonth: 12, expiryYear: NOW_YEAR + 2, cvc: '123' } }, 'paymentMethodData.card.number'],
      [{ card: { number: '4242 4242 4242 424x', expiryMonth: 12, expiryYear: NOW_YEAR + 2, cvc: '123' } }, 'paymentMethodData.card.number'],
      [{ card: { number: '4242424242424242', expiryMonth: 13, expiryYear: NOW_YEAR + 2, cvc: '123' } }, 'paymentMethodData.card.expiryMonth'],
      [{ card: { number: '4242424242424242', expiryMonth: 1, expiryYear: NOW_YEAR - 1, cvc: '123' } }, 'paymentMethodData.card.expiryYear'],
      [{ card: { number: '4242424242424242', expiryMonth: 12, expiryYear: NOW_YEAR + 2, cvc: '12' } }, 'paymentMethodData.card.cvc'],
      [
        { card: { number: '4242424242424242', expiryMonth: 12, expiryYear: NOW_YEAR + 2, cvc: '123', holderName: 'h'.repeat(101) } },
        'paymentMethodData.card.holderName',
      ],
      [{ bankDebit: { accountHolderName: 'Ada', iban: 'DE00370400440532013000' } }, 'paymentMethodData.bankDebit.iban'],
      [{ bankDebit: { accountHolderName: '   ', iban: 'DE89370400440532013000' } }, 'paymentMethodData.bankDebit.accountHolderName'],
      [{ wallet: { type: 'Apple Pay', paymentToken: 't' } }, 'paymentMethodData.wallet.type'],
      [{ crypto: { network: '' } }, 'paymentMethodData.crypto.network'],
      [{ bankTransfer: { type: 'ach' } }, 'paymentMethodData.bankTransfer.type'],
    )
    .map(([paymentMethodData, field]): Defect => ({
      name: `paymentMethodData ${field}`,
      field,
      ruleLevel: true,
      apply: (input) => ({ ...input, paymentMethodData, captureMethod: null }),
    })),
  fc
    .constantFrom<[unknown, string]>(
      [{ card: { number: '4242424242424242', expiryMonth: 12, expiryYear: NOW_YEAR + 2, cvc: '123' }, bankTransfer: { type: 'sepa' } }, 'paymentMethodData'],
      [{}, 'paymentMethodData'],
      [{ card: null }, 'paymentMethodData.card'],
      [{ card: { number: 4242424242424242, expiryMonth: 12, expiryYear: NOW_YEAR + 2, cvc: '123' } }, 'paymentMethodData.card.number'],
      [{ card: { number: '4242424242424242', expiryMonth: '12', expiryYear: NOW_YEAR + 2, cvc: '123' } }, 'paymentMethodData.card.expiryMonth'],
      [{ card: { number: '4242424242424242', expiryYear: NOW_YEAR + 2, cvc: '123' } }, 'paymentMethodData.card'],
      [{ paypal: { email: 'a@b.c' } }, 'paymentMethodData'],
      ['card', 'paymentMethodData'],
    )
    .map(([paymentMethodData, field]): Defect => ({
      name: `paymentMethodData shape ${field}`,
      field,
      apply: (input) => ({ ...input, paymentMethodData, captureMethod: null }),
    })),
  fc
    .tuple(
      fc.string({ minLength: 1, maxLength: 12 }).filter((name) => GRAPHQL_NAME.test(name) && !VALID_CREATE_FIELDS.has(name)),
      anyJson,
    )
    .map(([name, value]): Defect => ({ name: `unknown field ${name}`, field: name, apply: set(name, value) })),
);

const VALID_CREATE_FIELDS = new Set([
  'amount',
  'currency',
  'captureMethod',
  'authenticationType',
  'confirm',
  'connectors',
  'country',
  'customerId',
  'description',
  'mandateId',
  'metadata',
  'paymentMethodData',
  'profileId',
  'returnUrl',
  'setupFutureUsage',
]);

const createKey = fc.oneof(
  { arbitrary: fc.constant('secret' as const), weight: 12 },
  { arbitrary: fc.constantFrom('publishable' as const, 'none' as const, 'bogus' as const), weight: 1 },
);

/** A small set of keys, so some requests replay or mismatch an earlier one; mostly none. */
export const idempotencyKey: fc.Arbitrary<string | undefined> = fc.oneof(
  { arbitrary: fc.constant(undefined), weight: 9 },
  {
    arbitrary: fc.oneof(
      fc.constantFrom('fuzz-key-1', 'fuzz-key-2', 'fuzz-key-3', ''),
      fc.stringMatching(/^[\x21-\x7e]{1,300}$/),
      fc
        .string({ minLength: 1, maxLength: 40 })
        .map((key) => `fuzz-${key}`)
        .filter((key) => /^[\x20-\x7e]+$/.test(key.trim()) && key === key.trim()),
    ),
    weight: 1,
  },
);

/** Whether every key of every object in `value` can be written as a GraphQL name (so the value as a literal). */
export function literalPrintable(value: unknown): boolean {
  if (Array.isArray(value)) return value.every(literalPrintable);
  if (value !== null && typeof value === 'object') return Object.entries(value).every(([key, child]) => GRAPHQL_NAME.test(key) && literalPrintable(child));
  if (typeof value === 'number') return Number.isFinite(value);
  return true;
}

export const createCase: fc.Arbitrary<CreateCase> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({ input: validCreateInput, literal: fc.boolean(), idempotencyKey }).map(({ input, literal, idempotencyKey }): CreateCase => ({
      kind: 'create',
      expect: 'ok',
      variables: { input },
      literal,
      key: 'secret',
      idempotencyKey,
    })),
  },
  {
    weight: 5,
    arbitrary: fc.record({ input: validCreateInput, defect: createDefect, literal: fc.boolean() }).map(({ input, defect, literal }): CreateCase => {
      const broken = defect.apply({ ...input });
      // The defect may have removed what made confirm valid: keep confirm only where the defect set it.
      // Keep confirm only where the defect is about it: elsewhere it could add a second problem.
      if (defect.field !== 'confirm' && defect.field !== 'paymentMethodData') delete broken.confirm;
      if (defect.name.startsWith('paymentMethodData')) delete broken.confirm;
      return {
        kind: 'create',
        expect: 'defect',
        defect: defect.name,
        field: defect.field,
        ruleLevel: defect.ruleLevel,
        variables: { input: broken },
        literal,
        key: 'secret',
      };
    }),
  },
  {
    weight: 3,
    arbitrary: fc
      .record({
        base: fc.oneof(validCreateInput, fc.constant({})),
        junk: fc.dictionary(
          fc.oneof(fc.constantFrom(...VALID_CREATE_FIELDS), anyString(12)),
          fc.oneof(anyJson, anyAmount, anyPaymentMethodData, badCurrency, longString(0, 3000)),
          { maxKeys: 4 },
        ),
        literal: fc.boolean(),
        key: createKey,
        wrap: fc.constantFrom('input', 'input', 'input', 'null', 'string', 'array', 'none', 'extra'),
        idempotencyKey,
      })
      .map(({ base, junk, literal, key, wrap, idempotencyKey }): CreateCase => {
        const input = { ...base, ...junk };
        const variables: Record<string, unknown> =
          wrap === 'input'
            ? { input }
            : wrap === 'null'
              ? { input: null }
              : wrap === 'string'
                ? { input: JSON.stringify(input) }
                : wrap === 'array'
                  ? { input: [input] }
                  : wrap === 'none'
                    ? {}
                    : { input, extra: junk };
        return { kind: 'create', expect: 'chaos', variables, literal: literal && wrap === 'input', key, idempotencyKey };
      }),
  },
);

// ------------------------------------------------------------------------ operations on existing payments

/** Which existing payments an operation aims at; resolved to ids by the test when it runs. */
export type Pool = 'fresh' | 'authorized' | 'succeeded' | 'debit' | 'created' | 'other';
export interface Target {
  pool: Pool | 'garbage';
  index: number;
  /** For "garbage": the id itself. */
  id?: unknown;
}

/** A payment to aim at: mostly from `preferred` pools, else any pool, another merchant's, or garbage. */
export const targetIn = (...preferred: Pool[]): fc.Arbitrary<Target> =>
  fc.oneof(
    { arbitrary: fc.record({ pool: fc.constantFrom<Pool>(...preferred), index: fc.nat() }), weight: 6 },
    { arbitrary: fc.record({ pool: fc.constantFrom<Pool>('fresh', 'authorized', 'succeeded', 'debit', 'created'), index: fc.nat() }), weight: 3 },
    { arbitrary: fc.record({ pool: fc.constant('other' as const), index: fc.nat() }), weight: 1 },
    {
      arbitrary: fc.record({
        pool: fc.constant('garbage' as const),
        index: fc.constant(0),
        id: fc.oneof(
          anyString(40),
          fc.constantFrom('pay_000000000000000000000000', 'pay_', 'ref_000000000000000000000000', `pay_${'A'.repeat(10_000)}`),
          longString(1, 200_000),
          anyJson,
        ),
      }),
      weight: 2,
    },
  );
export const target = targetIn('fresh', 'authorized', 'succeeded', 'debit', 'created');

/** What a confirm most often sends: a sandbox card (each outcome) or a bank debit, and nothing else. */
const cleanConfirm = fc.record({
  paymentMethodData: fc.oneof(
    fc.constantFrom(...Object.values(SANDBOX_CARDS)).map((number) => ({ card: { number, expiryMonth: 12, expiryYear: NOW_YEAR + 2, cvc: '123' } })),
    validPaymentMethodData,
  ),
});

const cancellation = fc.record({ cancellationReason: fc.oneof(anyString(40), longString(250, 300)) }, { requiredKeys: [] });

export type OperationCase =
  | {
      kind: 'confirm';
      target: Target;
      secret: 'valid' | 'tampered' | 'garbage';
      garbage?: unknown;
      key: 'publishable' | 'secret' | 'otherPublishable' | 'none';
      extra: Record<string, unknown>;
      idempotencyKey?: string;
    }
  | { kind: 'capture'; target: Target; extra: Record<string, unknown>; idempotencyKey?: string }
  | { kind: 'refund'; target: Target; extra: Record<string, unknown>; idempotencyKey?: string }
  | { kind: 'cancel'; target: Target; extra: Record<string, unknown>; idempotencyKey?: string }
  | { kind: 'cancelPostCapture'; target: Target; extra: Record<string, unknown>; idempotencyKey?: string }
  | { kind: 'sync'; target: Target; extra: Record<string, unknown> };

export const operationCase: fc.Arbitrary<OperationCase> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant('confirm' as const),
      target: targetIn('fresh', 'created'),
      secret: fc.constantFrom('valid', 'valid', 'valid', 'tampered', 'garbage') as fc.Arbitrary<'valid' | 'tampered' | 'garbage'>,
      garbage: anyJson,
      key: fc.constantFrom('publishable', 'publishable', 'publishable', 'secret', 'otherPublishable', 'none') as fc.Arbitrary<
        'publishable' | 'secret' | 'otherPublishable' | 'none'
      >,
      extra: fc.oneof(
        cleanConfirm,
        fc.record(
          {
            paymentMethodData: anyPaymentMethodData,
            returnUrl: fc.oneof(validReturnUrl, anyString(30)),
            savePaymentMethod: fc.oneof(fc.boolean(), anyJson),
            paymentMethodId: fc.oneof(anyString(20), fc.constant('spm_000000000000000000000000')),
            cardCvc: fc.oneof(fc.stringMatching(/^\d{3,4}$/), anyString(6)),
          },
          { requiredKeys: [] },
        ),
      ),
      idempotencyKey,
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('capture' as const),
      target: targetIn('authorized'),
      extra: fc.record({ amountToCapture: anyAmount }, { requiredKeys: [] }),
      idempotencyKey,
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant('refund' as const),
      target: targetIn('succeeded'),
      extra: fc.record(
        { amount: fc.oneof(fc.integer({ min: 1, max: 3000 }), anyAmount), reason: fc.oneof(anyString(40), longString(200, 300)) },
        { requiredKeys: [] },
      ),
      idempotencyKey,
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({ kind: fc.constant('cancel' as const), target: targetIn('authorized', 'fresh', 'succeeded'), extra: cancellation, idempotencyKey }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('cancelPostCapture' as const),
      target: targetIn('succeeded', 'authorized', 'fresh'),
      extra: cancellation,
      idempotencyKey,
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('sync' as const), target: targetIn('debit', 'authorized'), extra: fc.constant({}) }) },
);

// ------------------------------------------------------------------------------------------ queries

export interface QueryCase {
  kind: 'query';
  query: string;
  variables: unknown;
  target?: Target;
}

export const queryCase: fc.Arbitrary<QueryCase> = fc.oneof(
  fc.record({ target }).map(({ target }): QueryCase => ({
    kind: 'query',
    query: 'query($id: String!) { payment(id: $id) { id status amount amountReceived refunds { id amount status } } }',
    variables: {},
    target,
  })),
  fc
    .record(
      {
        first: fc.oneof(fc.integer({ min: -5, max: 150 }), anyJson),
        after: fc.oneof(anyString(40), fc.base64String({ maxLength: 80 })),
        status: fc.oneof(fc.constantFrom('SUCCEEDED', 'succeeded', 'NOPE'), anyJson),
        customerId: fc.oneof(validCustomerId, anyString()),
        createdAfter: fc.oneof(
          fc.date({ noInvalidDate: true }).map((date) => date.toISOString()),
          anyString(30),
        ),
        createdBefore: anyJson,
      },
      { requiredKeys: [] },
    )
    .map((variables): QueryCase => ({
      kind: 'query',
      query:
        'query($first: Int, $after: String, $status: PaymentStatus, $customerId: String, $createdAfter: DateTime, $createdBefore: DateTime) { payments(first: $first, after: $after, status: $status, customerId: $customerId, createdAfter: $createdAfter, createdBefore: $createdBefore) { pageInfo { hasNextPage endCursor } edges { node { id amount } } } }',
      variables,
    })),
  fc.record({ objectId: fc.oneof(anyString(30), fc.constant(null)), first: anyJson, delivered: anyJson }, { requiredKeys: [] }).map((variables): QueryCase => ({
    kind: 'query',
    query:
      'query($objectId: String, $first: Int, $delivered: Boolean) { events(objectId: $objectId, first: $first, delivered: $delivered) { edges { node { id eventType } } } }',
    variables,
  })),
  fc.record({ clientSecret: anyString(80) }).map((variables): QueryCase => ({
    kind: 'query',
    query: 'query($clientSecret: String!) { paymentMethods(clientSecret: $clientSecret) { __typename } }',
    variables,
  })),
);

// ------------------------------------------------------------------------------ raw HTTP and documents

export interface RawCase {
  kind: 'raw';
  what: string;
  method: string;
  contentType?: string;
  accept?: string;
  /** The body: text, bytes, or a size to fill (generated when sent, so a megabyte is not printed). */
  body?: string | Uint8Array | { fill: number; piece: string; wrap: 'variable' | 'query' | 'plain' };
  search?: string;
  idempotencyKey?: string;
}

const TOKENS = [
  '{',
  '}',
  '(',
  ')',
  '[',
  ']',
  ':',
  '$',
  '!',
  '=',
  '@',
  '...',
  '|',
  '&',
  'query',
  'mutation',
  'subscription',
  'fragment',
  'on',
  'payment',
  'createPayment',
  'input',
  'id',
  'amount',
  '"x"',
  '"""b"""',
  '1',
  '-1.5e3',
  'true',
  'null',
  '__typename',
  '__schema',
  'types',
  'name',
  '#c\n',
  ',',
  ' ',
  '\n',
  '\u00a0',
  '\u0000',
  '"\\u0000"',
  '"\\ud800"',
  '"\\u{D800}"',
  '\ud800',
];

/** GraphQL documents that are broken, hostile or beyond the limits. */
const badDocument: fc.Arbitrary<string> = fc.oneof(
  fc.array(fc.constantFrom(...TOKENS), { minLength: 1, maxLength: 40 }).map((tokens) => tokens.join(' ')),
  anyString(200),
  fc
    .integer({ min: 1, max: 3000 })
    .map((depth) => `{ ${'payment(id: "x") { refunds { payment '.repeat(Math.min(depth, 200))}id${' } }'.repeat(Math.min(depth, 200))} }`),
  fc.integer({ min: 1, max: 5000 }).map((depth) => `${'{'.repeat(depth)}${'}'.repeat(depth)}`),
  fc.integer({ min: 10, max: 2000 }).map((count) => `{ ${Array.from({ length: count }, (_, index) => `a${index}: __typename`).join(' ')} }`),
  fc.integer({ min: 10, max: 6000 }).map((count) => `{ merchant { ${'id '.repeat(count)}} }`),
  fc.constantFrom(
    'fragment A on Query { ...B } fragment B on Query { ...A } { ...A }',
    'query Q { merchant { id } } query Q { merchant { id } }',
    'query A { merchant { id } } query B { merchant { id } }',
    '{ merchant { id @skip(if: "yes") } }',
    'query($x: Int) { merchant { id } }',
    'query { payment(id: $undefined) { id } }',
    'mutation { createPayment(input: { amount: 1, currency: "USD" }) }',
    'subscription { paymentUpdated(paymentId: "pay_x") { id } }',
    '{ __schema { types { name fields { name type { name ofType { name ofType { name } } } } } } }',
    '{ nope }',
    'mutation { createPayment(input: { amount: 99999999999999999999, currency: "USD" }) { id } }',
    'mutation { createPayment(input: { amount: 1.0, currency: "USD" }) { id } }',
    'mutation { createPayment(input: { amount: 100, currency: USD }) { id } }',
    'mutation { createPayment(input: { amount: 100, currency: "USD", metadata: { a: { b: [1, { c: null }] } } }) { id } }',
    'mutation { createPayment(input: { amount: 100, currency: "USD", paymentMethodData: { card: null, wallet: null } }) { id } }',
    'mutation { createPayment(input: { amount: 100, currency: """USD""" }) { id } }',
    '{ merchant { id } } # \u0000',
    '',
  ),
);

export const rawCase: fc.Arbitrary<RawCase> = fc.oneof(
  // Bodies that are not JSON, or not a GraphQL request.
  fc
    .record({
      body: fc.oneof(
        fc.uint8Array({ maxLength: 2000 }),
        anyString(200),
        fc.constantFrom(
          '',
          'null',
          '[]',
          '[{}]',
          '1',
          '"query"',
          'true',
          '{',
          '{"query":',
          '{"query": "{ merchant { id } }"} trailing',
          '{"query": "{ merchant { id } }", "query": 5}',
          '\ufeff{"query":"{ merchant { id } }"}',
        ),
      ),
      contentType: fc.constantFrom(
        'application/json',
        'application/json; charset=utf-8',
        'application/graphql',
        'text/plain',
        'application/x-www-form-urlencoded',
        'multipart/form-data; boundary=x',
        'application/json; charset=latin1',
        '',
      ),
    })
    .map(({ body, contentType }): RawCase => ({ kind: 'raw', what: 'not a GraphQL JSON body', method: 'POST', contentType, body })),
  // A JSON object with the GraphQL request's members of the wrong types, or unknown members.
  fc
    .dictionary(fc.oneof(fc.constantFrom('query', 'variables', 'operationName', 'extensions', 'id', 'documentId'), anyString(10)), anyJson, { maxKeys: 5 })
    .map((object): RawCase => ({ kind: 'raw', what: 'wrong member types', method: 'POST', contentType: 'application/json', body: JSON.stringify(object) })),
  fc
    .record({
      query: badDocument,
      variables: fc.option(anyJson, { nil: undefined }),
      operationName: fc.option(fc.oneof(anyString(10), fc.constantFrom('A', 'B', 'Q')), { nil: undefined }),
    })
    .map((request): RawCase => ({
      kind: 'raw',
      what: 'bad document',
      method: 'POST',
      contentType: 'application/json',
      accept: 'application/graphql-response+json',
      body: JSON.stringify(request),
    })),
  // Deeply nested JSON (a parser that recurses could overflow its stack).
  fc.integer({ min: 1000, max: 200_000 }).map((depth): RawCase => ({
    kind: 'raw',
    what: `JSON nested ${depth} deep`,
    method: 'POST',
    contentType: 'application/json',
    body: `{"query":"{ merchant { id } }","variables":{"x":${'['.repeat(depth)}${']'.repeat(depth)}}}`,
  })),
  // The same with an Idempotency-Key on a mutation: the key's request must be serialised, however deep.
  fc.integer({ min: 1000, max: 150_000 }).map((depth): RawCase => ({
    kind: 'raw',
    what: `keyed mutation, variables nested ${depth} deep`,
    method: 'POST',
    contentType: 'application/json',
    idempotencyKey: `fuzz-deep-${depth}`,
    body: `{"query":"mutation($input: SyncPaymentInput!) { syncPayment(input: $input) { id } }","variables":{"input":{"paymentId":"pay_000000000000000000000000"},"x":${'['.repeat(depth)}${']'.repeat(depth)}}}`,
  })),
  // Around the body limit (1 MiB): a megabyte string in a variable or the query, or just bytes.
  fc
    .record({
      fill: fc.oneof(fc.integer({ min: 900_000, max: 1_100_000 }), fc.constantFrom(1_048_576 - 200, 1_048_576 - 60, 1_048_577, 1_048_576 + 10, 3_000_000)),
      piece: fc.constantFrom('a', 'é', '💳', '\\u0000', '\\ud800'),
      wrap: fc.constantFrom('variable', 'query', 'plain') as fc.Arbitrary<'variable' | 'query' | 'plain'>,
    })
    .map((body): RawCase => ({ kind: 'raw', what: `${body.fill} bytes (${body.wrap})`, method: 'POST', contentType: 'application/json', body })),
  // Other methods and GET with a query string.
  fc
    .record({
      method: fc.constantFrom('GET', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'HEAD'),
      query: fc.oneof(badDocument, fc.constant('{ merchant { id } }'), fc.constant('mutation { syncPayment(input: { paymentId: "pay_x" }) { id } }')),
      variables: anyJson,
    })
    .map(({ method, query, variables }): RawCase => ({
      kind: 'raw',
      what: `${method} with a query string`,
      method,
      search: `?query=${encodeURIComponent(query.replace(/\p{Cs}/gu, ''))}&variables=${encodeURIComponent(JSON.stringify(variables) ?? '')}`,
    })),
  // An Idempotency-Key on what cannot be keyed.
  fc
    .record({
      body: fc.oneof(anyString(50), fc.constant('{"query":"mutation { syncPayment(input: { paymentId: \\"pay_x\\" }) { id } }"}')),
      idempotencyKey: fc.stringMatching(/^[\x21-\x7e]{0,300}$/),
    })
    .map(({ body, idempotencyKey }): RawCase => ({
      kind: 'raw',
      what: 'keyed odd body',
      method: 'POST',
      contentType: 'application/json',
      body,
      idempotencyKey,
    })),
);

/** The raw body of a RawCase (fills are made here, not generated character by character). */
export function rawBodyOf(body: RawCase['body']): string | Uint8Array | undefined {
  if (body === undefined || typeof body === 'string' || body instanceof Uint8Array) return body;
  const filler = (bytes: number) => body.piece.repeat(Math.max(0, Math.floor(bytes / Buffer.byteLength(body.piece))));
  if (body.wrap === 'plain') return filler(body.fill);
  if (body.wrap === 'query') return JSON.stringify({ query: `{ merchant { id } } #${filler(body.fill - 40)}` });
  return `{"query":"mutation($input: CreatePaymentInput!) { createPayment(input: $input) { id } }","variables":{"input":{"amount":100,"currency":"USD","description":"${filler(body.fill - 150)}"}}}`;
}

// ---------------------------------------------------------------------------------------- callbacks

export interface CallbackCase {
  kind: 'callback';
  path: 'valid' | 'unknownMerchant' | 'unknownAccount' | 'otherAccount' | 'garbage';
  garbagePath?: string;
  signature: 'valid' | 'none' | 'garbage' | 'wrongSecret' | 'stale' | 'otherBody' | 'future';
  garbageSignature?: string;
  body:
    | { type: 'bytes'; bytes: Uint8Array }
    | { type: 'json'; value: unknown }
    | { type: 'event'; event: Record<string, unknown>; about?: { pool: Pool; index: number; kind: 'payment' | 'refund' } }
    | { type: 'huge'; size: number };
  contentType: string;
  extraHeaders: Record<string, string>;
}

const SANDBOX_PAYMENT_STATUSES = [
  'requires_device_data',
  'requires_authentication',
  'requires_customer_action',
  'requires_capture',
  'processing',
  'succeeded',
  'failed',
  'canceled',
];

/** A sandbox payment object with every field of the right type but arbitrary values, or of the wrong type. */
const paymentObject = fc.record(
  {
    id: fc.oneof(fc.constantFrom('py_NotOurs', 'py_'), anyString(30), longString(99, 120)),
    object: fc.constantFrom('payment', 'refund', 'dispute', undefined),
    status: fc.oneof(fc.constantFrom(...SANDBOX_PAYMENT_STATUSES), anyJson),
    amount: fc.oneof(validAmount, anyAmount),
    amount_capturable: fc.oneof(fc.integer({ min: 0, max: 200_000_000 }), anyAmount),
    amount_captured: fc.oneof(fc.integer({ min: 0, max: 200_000_000 }), anyAmount, fc.constant(2 ** 40)),
    next_action: fc.oneof(
      fc.constant(null),
      fc.record({ type: fc.constant('redirect'), redirect_url: fc.oneof(fc.webUrl(), anyString(30)) }),
      fc.record({
        type: fc.constant('display_instructions'),
        redirect_url: fc.oneof(fc.webUrl(), anyString(30)),
        instructions: fc.dictionary(anyString(10), fc.oneof(anyString(20), fc.integer()), { maxKeys: 3 }),
      }),
      anyJson,
    ),
    payment_method_token: fc.oneof(fc.constant(null), anyString(30)),
    error: fc.oneof(
      fc.constant(null),
      fc.record({ code: anyString(20), message: fc.oneof(anyString(60), longString(900, 1100)), retryable: fc.oneof(fc.boolean(), anyJson) }),
      anyJson,
    ),
    canceled_after_capture: fc.oneof(fc.boolean(), anyJson),
    reference: fc.oneof(fc.constant(null), anyString(30), fc.constant('att_000000000000000000000000')),
  },
  { requiredKeys: [] },
);

/** A sandbox payment object the connector reads (every field present, of its type) with arbitrary values. */
const wellFormedPaymentObject = fc.record(
  {
    id: fc.constant('py_NotOurs'),
    status: fc.constantFrom(...SANDBOX_PAYMENT_STATUSES),
    amount: fc.oneof(validAmount, fc.constantFrom(0, 2_147_483_647)),
    amount_capturable: fc.oneof(fc.nat({ max: 2_147_483_647 }), fc.constant(0)),
    amount_captured: fc.oneof(fc.nat({ max: 2_147_483_647 }), fc.constant(0)),
    next_action: fc.oneof(
      fc.constant(null),
      fc.record({ type: fc.constant('redirect'), redirect_url: fc.oneof(fc.webUrl(), anyString(30)) }),
      fc.record({
        type: fc.constant('display_instructions'),
        redirect_url: fc.oneof(fc.webUrl(), anyString(30)),
        instructions: fc.dictionary(anyString(10), fc.oneof(anyString(20), fc.integer()), { maxKeys: 3 }),
      }),
    ),
    payment_method_token: fc.oneof(fc.constant(null), anyString(30)),
    error: fc.oneof(fc.constant(null), fc.record({ code: anyString(20), message: anyString(60), retryable: fc.boolean() })),
    canceled_after_capture: fc.boolean(),
    reference: fc.oneof(fc.constant(null), fc.constant('att_000000000000000000000000')),
  },
  { requiredKeys: ['id', 'status', 'amount', 'amount_capturable', 'amount_captured', 'next_action', 'error'] },
);

const refundObject = fc.record(
  {
    id: fc.oneof(fc.constantFrom('re_NotOurs'), anyString(30)),
    object: fc.constant('refund'),
    status: fc.oneof(fc.constantFrom('pending', 'succeeded', 'failed', 'requires_review'), anyJson),
    amount: fc.oneof(validAmount, anyAmount),
    reference: fc.oneof(fc.constant(null), anyString(30), fc.constant('ref_000000000000000000000000')),
    error: fc.oneof(fc.constant(null), fc.record({ code: anyString(20), message: anyString(60) })),
  },
  { requiredKeys: [] },
);

const eventEnvelope = (object: fc.Arbitrary<unknown>, typePrefix: string) =>
  fc.record(
    {
      id: fc.oneof(fc.constantFrom('evt_sbx_fuzz'), fc.stringMatching(/^[\x21-\x7e]{1,100}$/), anyString(30), fc.stringMatching(/^[\x21-\x7e]{1,120}$/)),
      type: fc.oneof(
        fc.constantFrom(
          ...SANDBOX_PAYMENT_STATUSES.map((status) => `${typePrefix}.${status}`),
          `${typePrefix}.succeeded`,
          'refund.succeeded',
          'payment.succeeded',
          'dispute.created',
          'payout.paid',
          'payment_method.revoked',
        ),
        anyString(20),
      ),
      created: fc.oneof(fc.integer({ min: 0, max: 2 ** 40 }), anyJson),
      data: fc.oneof({ arbitrary: fc.record({ object }), weight: 8 }, { arbitrary: anyJson, weight: 1 }),
    },
    { requiredKeys: ['id', 'type', 'data'] },
  );

/** An envelope the connector reads, around `object`: only the object's values are arbitrary. */
const wellFormedEnvelope = (object: fc.Arbitrary<unknown>, typePrefix: string) =>
  fc.record({
    id: fc.stringMatching(/^evt_[\x21-\x7e]{1,90}$/),
    type: fc.constantFrom(`${typePrefix}.succeeded`, `${typePrefix}.failed`, `${typePrefix}.processing`, `${typePrefix}.updated`),
    created: fc.integer({ min: 0, max: 2 ** 40 }),
    data: fc.record({ object }),
  });

/** A sandbox refund object the connector reads, with arbitrary values. */
const wellFormedRefundObject = fc.record(
  {
    id: fc.constant('re_NotOurs'),
    object: fc.constant('refund'),
    status: fc.constantFrom('pending', 'succeeded', 'failed', 'requires_review'),
    amount: fc.oneof(validAmount, fc.constantFrom(0, 2_147_483_647)),
    reference: fc.oneof(fc.constant(null), fc.constant('ref_000000000000000000000000')),
    error: fc.oneof(fc.constant(null), fc.record({ code: anyString(20), message: anyString(60) })),
  },
  { requiredKeys: ['id', 'object', 'status', 'amount', 'error'] },
);

export const callbackCase: fc.Arbitrary<CallbackCase> = fc.record({
  kind: fc.constant('callback' as const),
  path: fc.oneof(
    { arbitrary: fc.constant('valid' as const), weight: 10 },
    { arbitrary: fc.constantFrom('unknownMerchant' as const, 'unknownAccount' as const, 'otherAccount' as const, 'garbage' as const), weight: 2 },
  ),
  garbagePath: fc.oneof(anyString(30), fc.constantFrom('mer_x/mca_y', '..', '%2e%2e', 'mer_%00', '%E0%A4%A', 'x'.repeat(5000))),
  signature: fc.oneof(
    { arbitrary: fc.constant('valid' as const), weight: 6 },
    {
      arbitrary: fc.constantFrom('none' as const, 'garbage' as const, 'wrongSecret' as const, 'stale' as const, 'otherBody' as const, 'future' as const),
      weight: 4,
    },
  ),
  garbageSignature: fc.oneof(
    fc.stringMatching(/^[\x20-\x7e]{0,200}$/),
    fc.constantFrom('t=1,v1=', 't=99999999999999,v1=00', `t=${Math.floor(Date.now() / 1000)},v1=${'0'.repeat(64)}`, 'v1=abc,t=1'),
  ),
  body: fc.oneof(
    { arbitrary: fc.uint8Array({ maxLength: 3000 }).map((bytes) => ({ type: 'bytes' as const, bytes })), weight: 2 },
    { arbitrary: anyJson.map((value) => ({ type: 'json' as const, value })), weight: 2 },
    { arbitrary: eventEnvelope(paymentObject, 'payment').map((event) => ({ type: 'event' as const, event })), weight: 3 },
    {
      arbitrary: fc
        .record({
          event: fc.oneof(
            { arbitrary: wellFormedEnvelope(wellFormedPaymentObject, 'payment'), weight: 3 },
            { arbitrary: eventEnvelope(paymentObject, 'payment'), weight: 1 },
          ),
          pool: fc.constantFrom<Pool>('debit', 'debit', 'authorized', 'succeeded', 'fresh', 'created', 'other'),
          index: fc.nat(),
        })
        .map(({ event, pool, index }) => ({ type: 'event' as const, event, about: { pool, index, kind: 'payment' as const } })),
      weight: 5,
    },
    {
      arbitrary: fc
        .record({
          event: fc.oneof(
            { arbitrary: wellFormedEnvelope(wellFormedRefundObject, 'refund'), weight: 3 },
            { arbitrary: eventEnvelope(refundObject, 'refund'), weight: 1 },
          ),
          pool: fc.constantFrom<Pool>('succeeded'),
          index: fc.nat(),
        })
        .map(({ event, pool, index }) => ({ type: 'event' as const, event, about: { pool, index, kind: 'refund' as const } })),
      weight: 2,
    },
    {
      arbitrary: fc
        .oneof(fc.integer({ min: 200_000, max: 300_000 }), fc.constantFrom(256 * 1024, 256 * 1024 + 1, 2_000_000))
        .map((size) => ({ type: 'huge' as const, size })),
      weight: 1,
    },
  ),
  contentType: fc.constantFrom('application/json', 'text/plain', 'application/octet-stream', ''),
  extraHeaders: fc.dictionary(
    fc.stringMatching(/^x-[a-z0-9-]{1,20}$/),
    fc.stringMatching(/^[\x20-\x7e]{0,100}$/).map((value) => value.trim()),
    { maxKeys: 3 },
  ),
});

export type FuzzCase = CreateCase | OperationCase | QueryCase | RawCase | CallbackCase;

/** Every kind, weighted so the whole run is a few thousand requests of each family. */
export const fuzzCase: fc.Arbitrary<FuzzCase> = fc.oneof(
  { arbitrary: createCase, weight: 10 },
  { arbitrary: operationCase, weight: 6 },
  { arbitrary: queryCase, weight: 2 },
  { arbitrary: rawCase, weight: 3 },
  { arbitrary: callbackCase, weight: 6 },
);

/** The GraphQL literal of a JSON value (object keys must be names: see literalPrintable); enums bare. */
export function toLiteral(value: unknown, enumKeys: ReadonlySet<string>, key?: string): string {
  if (value === null || value === undefined) return 'null';
  if (typeof value === 'string') return key !== undefined && enumKeys.has(key) && GRAPHQL_NAME.test(value) ? value : JSON.stringify(value);
  if (typeof value === 'number' || typeof value === 'boolean') return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map((item) => toLiteral(item, enumKeys, key)).join(', ')}]`;
  return `{ ${Object.entries(value as Record<string, unknown>)
    .map(([name, child]) => `${name}: ${toLiteral(child, enumKeys, name)}`)
    .join(', ')} }`;
}
