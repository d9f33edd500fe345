// The HTTP call of the connectors whose processors speak plain JSON over HTTP (the sandbox's, Adyen's; Stripe's
// goes through its official library). undici's request API, not fetch: a call costs about a quarter of fetch's
// CPU (docs/benchmarks.md, "Reading it"). Redirects are answers, never followed (undici follows none unless told).
import { Agent, request } from 'undici';
import { ConnectorError } from './port.ts';

/**
 * The connectors' own keep-alive pool: not undici's global dispatcher, which Node's fetch shares and anything may
 * replace (setGlobalDispatcher), so calls that move money go where they were sent. Idle sockets keep no process alive.
 */
const processors = new Agent({ keepAliveTimeout: 10_000 });

const HEADERS = { accept: 'application/json', 'user-agent': 'payments-orchestrator-connectors/1' };

/** A processor's answer: its HTTP status, and its body as JSON (undefined when it is not JSON or did not all come in time). */
export interface JsonAnswer {
  status: number;
  ok: boolean;
  payload: unknown;
}

/**
 * Sends `body` (as JSON, when given) to `url` and reads the JSON answer, all within `timeoutMs`. No answer is a
 * ConnectorError naming `processor`: after a timeout or a failed connection what it did is unknown; a refused
 * connection reached nothing. Its message names the failure's code, never the address it was sent to.
 */
export async function callJson(
  processor: string,
  url: string,
  options: { method: string; headers: Record<string, string>; body?: unknown; timeoutMs: number },
): Promise<JsonAnswer> {
  const { method, headers, body, timeoutMs } = options;
  let response: Awaited<ReturnType<typeof request>>;
  try {
    response = await request(url, {
      dispatcher: processors,
      method,
      headers: { ...HEADERS, ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(timeoutMs),
    });
  } catch (error) {
    if ((error as Error).name === 'TimeoutError') throw new ConnectorError(`${processor} did not answer within ${timeoutMs} ms`, 'timeout', true);
    const code = (error as { code?: string }).code;
    if (code === 'ECONNREFUSED') throw new ConnectorError(`${processor} refused the connection`, 'unreachable', false);
    throw new ConnectorError(`${processor} request failed (${code ?? (error as Error).name})`, 'unreachable', true);
  }
  // Read to its end (or the timeout), so the connection goes back to the pool.
  const payload = await response.body.json().catch(() => undefined);
  return { status: response.statusCode, ok: response.statusCode >= 200 && response.statusCode < 300, payload };
}
