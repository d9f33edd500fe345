// The HTTP call of the connectors whose processors speak plain JSON over HTTP (the sandbox's, Adyen's; Stripe's
// goes through its official library). undici's request API, not fetch: a call costs about a quarter of fetch's CPU
// (docs/benchmarks.md, "Reading it"), on undici's keep-alive connection pool. Redirects are answers, never followed.
import { request } from 'undici';
import { ConnectorError } from './port.ts';

/** A processor's answer: its HTTP status, and its body as JSON (undefined when it is not JSON or did not all come in time). */
export interface JsonAnswer {
  status: number;
  ok: boolean;
  payload: unknown;
}

/**
 * Sends `body` (as JSON, when given) to `url` and reads the JSON answer, all within `timeoutMs`. No answer is a
 * ConnectorError naming `processor`: a timeout or a failed connection may have reached it (retryable, its state
 * unknown); a refused connection did not.
 */
export async function callJson(
  processor: string,
  url: string,
  options: { method: string; headers: Record<string, string>; body?: unknown; timeoutMs: number },
): Promise<JsonAnswer> {
  const { method, headers, body, timeoutMs } = options;
  const signal = AbortSignal.timeout(timeoutMs);
  let response: Awaited<ReturnType<typeof request>>;
  try {
    response = await request(url, {
      method,
      headers: body === undefined ? headers : { ...headers, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal,
    });
  } catch (error) {
    if ((error as Error).name === 'TimeoutError') throw new ConnectorError(`${processor} did not answer within ${timeoutMs} ms`, 'timeout', true);
    if ((error as { code?: string }).code === 'ECONNREFUSED') throw new ConnectorError(`${processor} refused the connection`, 'unreachable', false);
    throw new ConnectorError(`${processor} request failed: ${(error as Error).message}`, 'unreachable', true);
  }
  // Read to its end (or the timeout), so the connection goes back to the pool.
  const payload = await response.body.json().catch(() => undefined);
  return { status: response.statusCode, ok: response.statusCode >= 200 && response.statusCode < 300, payload };
}
