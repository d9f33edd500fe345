// When a keyed request's answer frees its key: only when it shows nothing ran. The answers are the shapes
// GraphQL gives; the requests that produce them go through the API in test/api/idempotency.test.ts. And the
// keyed request's parse, whose document Yoga reuses, and which requests take their key with their first write.
import { describe, expect, it } from 'vitest';
import { parse } from 'graphql';
import { classifyKeyedRequest, fieldsClaimingOnFirstWrite, mayHaveActed } from '../../src/api/idempotent-graphql.ts';
import { schema } from '../../src/api/schema.ts';
import { createDocumentCache } from '../../src/api/yoga.ts';

const answer = (body: unknown) => ({ status: 200, headers: {}, body: JSON.stringify(body) });
const error = (code: string, path?: string[]) => ({ message: code, ...(path ? { path } : {}), extensions: { code } });

describe('mayHaveActed', () => {
  it.each([
    ['a request refused as a whole (no data)', { errors: [error('INVALID_INPUT')] }, 1],
    ['its one root field refused by its resolver', { data: null, errors: [error('INVALID_INPUT', ['refund'])] }, 1],
    ['each of two root fields refused', { data: null, errors: [error('NOT_FOUND', ['a']), error('INVALID_INPUT', ['b'])] }, 2],
  ])('frees the key for %s', (_name, body, rootFields) => {
    expect(mayHaveActed(answer(body), rootFields)).toBe(false);
  });

  it.each([
    ['one of two root fields refused, the other hidden by a null data (the double refund)', { data: null, errors: [error('INVALID_INPUT', ['b'])] }, 2],
    ['a root field with a value beside a refused one', { data: { a: { id: 're_1' }, b: null }, errors: [error('INVALID_INPUT', ['b'])] }, 2],
    ['a refusal below a root field (it ran first)', { data: null, errors: [error('FORBIDDEN', ['refund', 'payment'])] }, 1],
    ['an error that is no refusal', { data: null, errors: [error('CONNECTOR_ERROR', ['refund'])] }, 1],
    ['a request-level error that is no refusal', { errors: [error('INTERNAL')] }, 1],
    ['no errors', { data: { refund: { id: 're_1' } } }, 1],
  ])('keeps the key for %s', (_name, body, rootFields) => {
    expect(mayHaveActed(answer(body), rootFields)).toBe(true);
  });

  it('keeps the key for an answer that is not GraphQL', () => {
    expect(mayHaveActed({ status: 500, headers: {}, body: 'Internal Server Error' }, 1)).toBe(true);
  });
});

describe('classifyKeyedRequest and the document cache it shares with Yoga', () => {
  const keyed = (query: string) => Buffer.from(JSON.stringify({ query }));

  it('keeps the document it parsed, so Yoga parses it no more', () => {
    const documents = createDocumentCache();
    expect(classifyKeyedRequest(keyed('mutation { a }'), 100, documents, new Set())).toMatchObject({ kind: 'mutation', rootFields: 1 });
    expect(documents.get('mutation { a }')).toEqual(parse('mutation { a }'));
  });

  it('reads a document Yoga (or an earlier request) parsed instead of parsing it again', () => {
    const documents = createDocumentCache();
    // Kept under another text: only a read of the cache can see two root fields in "mutation { a }".
    documents.set('mutation { a }', parse('mutation { a b }'));
    expect(classifyKeyedRequest(keyed('mutation { a }'), 100, documents, new Set())).toMatchObject({ kind: 'refused' });
  });

  it('keeps nothing that did not parse within the token limit', () => {
    const documents = createDocumentCache();
    const query = 'mutation { a b c d e f }';
    expect(classifyKeyedRequest(keyed(query), 4, documents, new Set())).toMatchObject({ kind: 'refused', response: { status: 400 } });
    expect(documents.get(query)).toBeUndefined();
  });
});

describe('which keyed requests take their key with their first write', () => {
  const classify = (query: string) => classifyKeyedRequest(Buffer.from(JSON.stringify({ query })), 100, createDocumentCache(), new Set(['a']));

  it.each([
    ['mutation { a }', true],
    ['mutation { renamed: a }', true],
    ['mutation { ...F } fragment F on Mutation { a }', true],
    ['mutation { b }', false],
    ['mutation { a __typename }', true],
  ])('%s: %s', (query, claimOnFirstWrite) => {
    expect(classify(query)).toMatchObject({ kind: 'mutation', claimOnFirstWrite });
  });

  it('createPayment is the only field of the schema marked so: every other mutation takes its key before it runs', () => {
    expect([...fieldsClaimingOnFirstWrite(schema)]).toEqual(['createPayment']);
  });
});
