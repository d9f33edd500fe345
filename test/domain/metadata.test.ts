import { describe, expect, it } from 'vitest';
import { MAX_METADATA_KEYS, MAX_METADATA_KEY_LENGTH, MAX_METADATA_VALUE_LENGTH, metadataProblem } from '../../src/kernel/metadata.ts';

function withKeys(count: number): Record<string, string> {
  return Object.fromEntries(Array.from({ length: count }, (_, index) => [`key${index}`, 'value']));
}

describe('metadata limits', () => {
  it("are Stripe's", () => {
    expect(MAX_METADATA_KEYS).toBe(50);
    expect(MAX_METADATA_KEY_LENGTH).toBe(40);
    expect(MAX_METADATA_VALUE_LENGTH).toBe(500);
  });
});

describe('metadataProblem', () => {
  it.each<[string, unknown]>([
    ['an empty object', {}],
    ['one pair', { orderId: '1234' }],
    ['50 keys', withKeys(50)],
    ['a 1-character key', { k: 'v' }],
    ['a 40-character key', { ['k'.repeat(40)]: 'v' }],
    ['an empty value', { note: '' }],
    ['a 500-character value', { note: 'v'.repeat(500) }],
    ['a null-prototype object', Object.assign(Object.create(null) as object, { orderId: '1' })],
    ['parsed JSON', JSON.parse('{"orderId":"1","customer.ref":"x y"}')],
    ['keys with dots, spaces and unicode', { 'a.b c': 'v', ключ: 'значение' }],
  ])('accepts %s', (_, value) => {
    expect(metadataProblem(value)).toBeNull();
  });

  const notObject = { field: 'metadata', message: 'must be a JSON object of string values' };
  it.each<[string, unknown]>([
    ['null', null],
    ['undefined', undefined],
    ['an array', [['key', 'value']]],
    ['an empty array', []],
    ['a string', '{"a":"b"}'],
    ['a number', 1],
    ['a boolean', true],
    ['a Date', new Date()],
    ['a Map', new Map([['key', 'value']])],
    [
      'a class instance',
      new (class Metadata {
        key = 'value';
      })(),
    ],
  ])('rejects %s as not a plain object', (_, value) => {
    expect(metadataProblem(value)).toEqual(notObject);
  });

  it('rejects 51 keys', () => {
    expect(metadataProblem(withKeys(51))).toEqual({ field: 'metadata', message: 'must have at most 50 keys' });
  });

  it.each<[string, Record<string, unknown>, { field: string; message: string }]>([
    ['an empty key', { '': 'v' }, { field: 'metadata.', message: 'keys must be 1 to 40 characters' }],
    ['a 41-character key', { ['k'.repeat(41)]: 'v' }, { field: `metadata.${'k'.repeat(41)}`, message: 'keys must be 1 to 40 characters' }],
    ['a key with [', { 'a[b': 'v' }, { field: 'metadata.a[b', message: "keys must not contain '[' or ']'" }],
    ['a key with ]', { 'ab]': 'v' }, { field: 'metadata.ab]', message: "keys must not contain '[' or ']'" }],
    [
      'a __proto__ key (as JSON.parse makes it)',
      JSON.parse('{"orderId":"1","__proto__":"x"}') as Record<string, unknown>,
      { field: 'metadata.__proto__', message: 'keys must not be __proto__ (reserved in JavaScript objects)' },
    ],
    ['a nested-looking key', { 'a[b]': 'v' }, { field: 'metadata.a[b]', message: "keys must not contain '[' or ']'" }],
    ['a 501-character value', { note: 'v'.repeat(501) }, { field: 'metadata.note', message: 'must be at most 500 characters' }],
    ['a number value', { count: 1 }, { field: 'metadata.count', message: 'must be a string' }],
    ['a boolean value', { paid: true }, { field: 'metadata.paid', message: 'must be a string' }],
    ['a null value', { note: null }, { field: 'metadata.note', message: 'must be a string' }],
    ['an object value', { nested: { a: 'b' } }, { field: 'metadata.nested', message: 'must be a string' }],
    ['an array value', { tags: ['a'] }, { field: 'metadata.tags', message: 'must be a string' }],
  ])('rejects %s', (_, value, problem) => {
    expect(metadataProblem(value)).toEqual(problem);
  });

  // JSON may hold it, but the payment's own copy of the metadata lost it (the fuzzer found the key dropped on
  // the way to the database), and a receiver merging the webhook's metadata would take it as a prototype.
  it('refuses a "__proto__" key from JSON whatever its value, rather than lose it', () => {
    const reserved = { field: 'metadata.__proto__', message: 'keys must not be __proto__ (reserved in JavaScript objects)' };
    expect(metadataProblem(JSON.parse('{"__proto__":"x"}'))).toEqual(reserved);
    expect(metadataProblem(JSON.parse('{"__proto__":1}'))).toEqual(reserved);
  });

  it('counts lengths in UTF-16 code units, so astral characters count twice', () => {
    expect(metadataProblem({ note: '😀'.repeat(250) })).toBeNull();
    expect(metadataProblem({ note: `${'😀'.repeat(250)}a` })).toEqual({ field: 'metadata.note', message: 'must be at most 500 characters' });
    expect(metadataProblem({ ['😀'.repeat(20)]: 'v' })).toBeNull();
    expect(metadataProblem({ ['😀'.repeat(21)]: 'v' })?.message).toBe('keys must be 1 to 40 characters');
  });

  it('reports the first bad entry', () => {
    expect(metadataProblem({ good: 'v', bad: 1, 'also[bad]': 'v' })).toEqual({ field: 'metadata.bad', message: 'must be a string' });
  });

  it('checks the key count before the entries', () => {
    const value: Record<string, unknown> = withKeys(51);
    value.key0 = 1;
    expect(metadataProblem(value)?.field).toBe('metadata');
  });
});
