// The HTTP surface around GraphQL: operational routes, body limits, malformed requests and query limits.
// Every rejection carries a catalog code and an HTTP 4xx, exposes no internals, and writes nothing.
import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_ADMIN_KEY, startTestApi, startTestApiWithDatabase, type TestApiWithDatabase } from '../support/api.ts';

let api: TestApiWithDatabase;

beforeAll(async () => {
  api = await startTestApiWithDatabase({ MAX_BODY_BYTES: '4096', GRAPHQL_MAX_ALIASES: '5' });
});
afterAll(() => api.close());

// Other test files create merchants in parallel, so "nothing written" counts only the names these requests use.
const PROBE = 'http-probe';
const merchantCount = async () =>
  (await api.sql.query('SELECT count(*)::int AS n FROM merchant_accounts WHERE name LIKE $1', [`${PROBE}%`])).rows[0].n as number;

async function post(body: string, headers: Record<string, string> = {}) {
  const response = await fetch(`${api.url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'api-key': TEST_ADMIN_KEY, ...headers },
    body,
  });
  const text = await response.text();
  return { status: response.status, text, json: JSON.parse(text) as { errors?: { message: string; extensions: Record<string, unknown> }[] } };
}

/** Sends a body with chunked transfer encoding (no Content-Length), as a streaming client would. */
function postChunked(chunks: string[]): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(`${api.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'transfer-encoding': 'chunked', 'api-key': TEST_ADMIN_KEY },
    });
    request.on('response', (response) => {
      let body = '';
      response.on('data', (chunk: Buffer) => (body += chunk.toString()));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
    });
    request.on('error', reject);
    for (const chunk of chunks) request.write(chunk);
    request.end();
  });
}

const createMerchant = (name: string) =>
  JSON.stringify({ query: `mutation { createMerchantAccount(input: { name: ${JSON.stringify(name)} }) { merchant { id } } }` });

describe('operational routes', () => {
  it('GET /health answers while the process is up', async () => {
    const response = await fetch(`${api.url}/health`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ status: 'ok' });
  });

  it('GET /ready answers when PostgreSQL and Redis are reachable', async () => {
    const response = await fetch(`${api.url}/ready`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ status: 'ready' });
  });

  it('GET /metrics serves Prometheus text with request counts', async () => {
    await fetch(`${api.url}/health`);
    const response = await fetch(`${api.url}/metrics`);
    expect(response.headers.get('content-type')).toContain('text/plain');
    const text = await response.text();
    expect(text).toMatch(/http_requests_total\{route="\/health",method="GET",status="200"\} \d+/);
    expect(text).toContain('process_cpu_user_seconds_total');
  });

  it('an unknown route is a JSON 404 with a code', async () => {
    const response = await fetch(`${api.url}/nope`);
    expect(response.status).toBe(404);
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe('NOT_FOUND');
  });

  it('echoes a request id, or makes one', async () => {
    const given = await fetch(`${api.url}/health`, { headers: { 'x-request-id': 'abc-123' } });
    expect(given.headers.get('x-request-id')).toBe('abc-123');
    const made = await fetch(`${api.url}/health`);
    expect(made.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('serves GraphiQL to a browser at /graphql, from this service: no script, style or link from another host', async () => {
    const response = await fetch(`${api.url}/graphql`, { headers: { accept: 'text/html' } });
    expect(response.status).toBe(200);
    const html = await response.text();
    expect(html).toContain('GraphiQL');
    // What the markup loads (the inlined bundle mentions URLs, such as XML namespaces, that it never fetches).
    const markup = html.replace(/<(script|style)>[\s\S]*?<\/\1>/g, '');
    expect(markup).not.toMatch(/(src|href)\s*=\s*["']?(https?:)?\/\//i);
    const policy = response.headers.get('content-security-policy')!;
    expect(policy).toContain("default-src 'none'");
    expect(policy).toMatch(/script-src 'sha256-[^']+'(;|$)/);
    expect(policy).toContain("connect-src 'self'");
    expect(policy).not.toMatch(/https?:|\*/);
  });
});

describe('bad requests', () => {
  it('rejects an oversized body with 413 PAYLOAD_TOO_LARGE and writes nothing', async () => {
    const before = await merchantCount();
    const response = await post(createMerchant(PROBE + 'x'.repeat(5000)));
    expect(response.status).toBe(413);
    expect(response.json.errors?.[0]?.extensions.code).toBe('PAYLOAD_TOO_LARGE');
    expect(await merchantCount()).toBe(before);
  });

  it('rejects an oversized chunked body (no Content-Length) the same way', async () => {
    const before = await merchantCount();
    const body = createMerchant(PROBE + 'y'.repeat(6000));
    const response = await postChunked([body.slice(0, 3000), body.slice(3000)]);
    expect(response.status).toBe(413);
    expect(JSON.parse(response.body).errors[0].extensions.code).toBe('PAYLOAD_TOO_LARGE');
    expect(await merchantCount()).toBe(before);
  });

  it.each([
    ['malformed JSON', '{"query": "mutation { createMerchantAccount(input: { name: \\"http-probe\\" }) { merchant { id '],
    ['a JSON array of garbage', '[1, 2, 3]'],
    ['no query', '{"variables": {}}'],
    ['a syntax error', '{"query": "mutation { createMerchantAccount(input: { name: \\"http-probe\\" } }"}'],
    ['an unknown field', '{"query": "{ merchant { idx } }"}'],
    ['a wrong argument type', '{"query": "mutation { createMerchantAccount(input: { name: 5, x: \\"http-probe\\" }) { merchant { id } } }"}'],
    [
      'an unknown input field',
      '{"query": "mutation($i: CreateMerchantAccountInput!) { createMerchantAccount(input: $i) { merchant { id } } }", "variables": {"i": {"name": "http-probe", "evil": true}}}',
    ],
    ['a missing required variable', '{"query": "mutation($i: CreateMerchantAccountInput!) { createMerchantAccount(input: $i) { merchant { id } } }"}'],
  ])('rejects %s with 400 INVALID_INPUT, no internals, and writes nothing', async (_label, body) => {
    const before = await merchantCount();
    const response = await post(body);
    expect(response.status).toBe(400);
    expect(response.json.errors?.length).toBeGreaterThan(0);
    for (const error of response.json.errors!) {
      expect(error.extensions.code).toBe('INVALID_INPUT');
      expect(error.message.length).toBeGreaterThan(0);
    }
    expect(response.text).not.toMatch(/originalError|stack|\.ts:\d+|node_modules/);
    expect(await merchantCount()).toBe(before);
  });

  it('names the input field that has the wrong type', async () => {
    const response = await post(
      JSON.stringify({
        query: 'mutation($i: CreateMerchantAccountInput!) { createMerchantAccount(input: $i) { merchant { id } } }',
        variables: { i: { name: 42 } },
      }),
    );
    expect(response.json.errors?.[0]?.extensions).toMatchObject({ code: 'INVALID_INPUT', field: 'name' });
  });

  it('rejects a query deeper than GRAPHQL_MAX_DEPTH with QUERY_TOO_COMPLEX', async () => {
    const shallow = await startTestApi({ GRAPHQL_MAX_DEPTH: '2' });
    try {
      const response = await fetch(`${shallow.url}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'api-key': TEST_ADMIN_KEY },
        body: JSON.stringify({ query: '{ merchant { businessProfiles { id } } }' }),
      });
      expect(response.status).toBe(400);
      expect(((await response.json()) as { errors: { extensions: { code: string } }[] }).errors[0]!.extensions.code).toBe('QUERY_TOO_COMPLEX');
    } finally {
      await shallow.close();
    }
  });

  it('rejects more aliases than GRAPHQL_MAX_ALIASES with QUERY_TOO_COMPLEX', async () => {
    const aliases = Array.from({ length: 8 }, (_, index) => `a${index}: merchant { id }`).join(' ');
    const response = await post(JSON.stringify({ query: `{ ${aliases} }` }));
    expect(response.json.errors?.[0]?.extensions.code).toBe('QUERY_TOO_COMPLEX');
  });
});

describe('CORS', () => {
  // Keys travel in headers, never cookies: a page on any origin may call with its own key, and nothing
  // a browser holds for this origin rides along.
  const origin = 'https://shop.example';

  it('a preflight allows the origin and the key header, without credentials', async () => {
    const response = await fetch(`${api.url}/graphql`, {
      method: 'OPTIONS',
      headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'api-key, content-type, idempotency-key' },
    });
    expect(response.status).toBe(204);
    expect(response.headers.get('access-control-allow-origin')).toBe(origin);
    expect(response.headers.get('access-control-allow-headers')).toContain('api-key');
    expect(response.headers.get('access-control-allow-credentials')).toBeNull();
  });

  it('a POST from another origin is answered without credentials', async () => {
    const response = await fetch(`${api.url}/graphql`, {
      method: 'POST',
      headers: { origin, 'content-type': 'application/json', 'api-key': TEST_ADMIN_KEY },
      body: JSON.stringify({ query: '{ __typename }' }),
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('access-control-allow-origin')).toBe(origin);
    expect(response.headers.get('access-control-allow-credentials')).toBeNull();
  });
});

describe('introspection', () => {
  const introspect = (url: string, query: string) =>
    fetch(`${url}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json', 'api-key': TEST_ADMIN_KEY }, body: JSON.stringify({ query }) });

  it('is answered when GRAPHQL_INTROSPECTION is on (the default outside production)', async () => {
    const response = await introspect(api.url, '{ __schema { queryType { name } } }');
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ data: { __schema: { queryType: { name: 'Query' } } } });
  });

  it('is refused with INVALID_INPUT when GRAPHQL_INTROSPECTION is off (the default in production); __typename still answers', async () => {
    const closed = await startTestApi({ GRAPHQL_INTROSPECTION: 'false' });
    try {
      for (const query of ['{ __schema { queryType { name } } }', '{ __type(name: "Payment") { name } }']) {
        const response = await introspect(closed.url, query);
        expect(response.status).toBe(400);
        const body = (await response.json()) as { data?: unknown; errors: { message: string; extensions: { code: string } }[] };
        expect(body.data).toBeUndefined();
        expect(body.errors[0]!.extensions.code).toBe('INVALID_INPUT');
        expect(body.errors[0]!.message).toContain('introspection has been disabled');
      }
      expect(await (await introspect(closed.url, '{ __typename }')).json()).toEqual({ data: { __typename: 'Query' } });
    } finally {
      await closed.close();
    }
  });
});
