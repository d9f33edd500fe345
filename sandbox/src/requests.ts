// Reading a sandbox API request: its headers, its JSON body checked against a schema, and the refusals that
// become the error envelope `{ error: { code, message } }`. Every refusal of a field starts with its name.
import type { IncomingMessage } from 'node:http';
import { z } from 'zod';
import { BodyTooLargeError, readBody } from './http.ts';
import type { Processor } from './processors.ts';

/** The largest request body, but for the routes that say otherwise (a dispute's evidence). */
export const MAX_BODY_BYTES = 64 * 1024;
const MAX_IDEMPOTENCY_KEY_LENGTH = 255;

/** A refusal that becomes the error envelope `{ error: { code, message } }` with `status`. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

export interface JsonReply {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
}

/** `run`'s answer, or the error envelope of the refusal it threw. */
export async function answerOrRefusal(run: () => Promise<JsonReply> | JsonReply): Promise<JsonReply> {
  try {
    return await run();
  } catch (error) {
    if (!(error instanceof ApiError)) throw error;
    // After a 413, readBody reads the rest of the body (bounded), so the connection can carry another request.
    return { status: error.status, body: { error: { code: error.code, message: error.message } } };
  }
}

export function header(request: IncomingMessage, name: string): string | undefined {
  const value = request.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/** The caller's secret key, which must be one of `processor`'s. */
export function authenticate(request: IncomingMessage, processor: Processor): string {
  const key = /^Bearer (\S+)$/i.exec(header(request, 'authorization') ?? '')?.[1];
  if (key === undefined || !key.startsWith(processor.keyPrefix) || !/^[A-Za-z0-9]{8,64}$/.test(key.slice(processor.keyPrefix.length))) {
    throw new ApiError(401, 'invalid_api_key', `Send Authorization: Bearer ${processor.keyPrefix} followed by 8 to 64 letters or digits.`);
  }
  return key;
}

/** A header holding a whole number of milliseconds from 0 to `max`, or a 400 naming the header. */
export function millisecondsHeader(request: IncomingMessage, name: string, max: number): number | undefined {
  const value = header(request, name);
  if (value === undefined) return undefined;
  if (!/^\d{1,9}$/.test(value) || Number(value) > max) throw new ApiError(400, 'invalid_request', `${name} must be an integer from 0 to ${max}.`);
  return Number(value);
}

/** The `reference` of a lookup by reference (GET …/<collection>?reference=…), or a 400 naming it. */
export function referenceParameter(query: URLSearchParams, collection: string): string {
  const reference = query.get('reference');
  if (!reference) throw new ApiError(400, 'invalid_request', `reference is required as a query parameter (GET …/${collection}?reference=…).`);
  return reference;
}

export function idempotencyKey(request: IncomingMessage): string | undefined {
  const value = header(request, 'idempotency-key');
  if (value !== undefined && (value.length === 0 || value.length > MAX_IDEMPOTENCY_KEY_LENGTH)) {
    throw new ApiError(400, 'invalid_request', `Idempotency-Key must be 1 to ${MAX_IDEMPOTENCY_KEY_LENGTH} characters.`);
  }
  return value;
}

export async function readJson(request: IncomingMessage, maxBytes = MAX_BODY_BYTES): Promise<unknown> {
  let raw: Buffer;
  try {
    raw = await readBody(request, maxBytes);
  } catch (error) {
    if (error instanceof BodyTooLargeError) throw new ApiError(413, 'payload_too_large', `The request body is larger than ${maxBytes} bytes.`);
    throw error;
  }
  // A POST without a body (as `curl -X POST` sends) means "no parameters".
  if (raw.length === 0) return {};
  try {
    return JSON.parse(raw.toString('utf8'));
  } catch {
    throw new ApiError(400, 'invalid_request', 'The request body is not valid JSON.');
  }
}

/** The input, or a 400 whose message starts with the dotted field at fault ("card.number must be …"). */
export function parseInput<T>(schema: z.ZodType<T>, body: unknown): T {
  const parsed = schema.safeParse(body, {
    error: (issue) => {
      if (issue.code !== 'invalid_type') return undefined;
      if (issue.input === undefined) return 'is required';
      return issue.expected === 'object' ? 'must be a JSON object' : `must be a ${issue.expected}`;
    },
  });
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  const path = issue.path.map(String);
  if (issue.code === 'unrecognized_keys') throw new ApiError(400, 'invalid_request', `${[...path, issue.keys[0]].join('.')} is not a known field.`);
  throw new ApiError(400, 'invalid_request', `${path.join('.') || 'The request body'} ${issue.message}.`);
}
