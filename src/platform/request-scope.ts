// What the code running for one request (or one worker job) knows about it without being handed it: the
// fields every log line it writes carries (createLogger's mixin reads them), and where its error answers
// link to. AsyncLocalStorage, so a service logging through the shared logger needs no per-request logger.
import { AsyncLocalStorage } from 'node:async_hooks';
import { ERROR_CODES } from '../kernel/errors.ts';

export interface RequestScope {
  /** Fields added to every log line: `requestId` for a request, `queue` and `jobId` for a worker job. */
  log: Readonly<Record<string, string | undefined>>;
  /** DOCS_BASE_URL (docs/configuration.md): where error answers' `docs` links point. */
  docsBaseUrl?: string | undefined;
  /** While a keyed mutation runs: its WriteWitness, told of each write it sends to the database (db/write-witness.ts). */
  writes?: object | undefined;
}

const storage = new AsyncLocalStorage<RequestScope>();
const NO_FIELDS: RequestScope['log'] = {};

/** Runs `work` (and everything it starts) inside `scope`. */
export const runInScope = <T>(scope: RequestScope, work: () => T): T => storage.run(scope, work);

/** The current request's or job's scope, if any. */
export const currentScope = (): RequestScope | undefined => storage.getStore();

/** The log fields of the current scope (the same object each call: no allocation per log line). */
export const scopeLogFields = (): RequestScope['log'] => storage.getStore()?.log ?? NO_FIELDS;

/**
 * The link to `code`'s row in docs/api.md's error table: under DOCS_BASE_URL when set, else the path in the
 * repository (docs/api.md, "Errors").
 */
export function errorDocsLink(code: string, docsBaseUrl: string | undefined): string {
  const page = docsBaseUrl === undefined ? 'docs/api.md' : `${docsBaseUrl.replace(/\/+$/, '')}/api.md`;
  return `${page}#error-${code.toLowerCase().replaceAll('_', '-')}`;
}

/**
 * What an error answer adds to its code (docs/api.md, "Errors"): the request's id, and the link to the code's
 * row for a code of the catalog (a REST route's own codes, such as METHOD_NOT_ALLOWED, have no row).
 */
export function errorReferences(code: string, scope: RequestScope | undefined): { requestId?: string; docs?: string } {
  const requestId = scope?.log['requestId'];
  return {
    ...(requestId === undefined ? {} : { requestId }),
    ...(code in ERROR_CODES ? { docs: errorDocsLink(code, scope?.docsBaseUrl) } : {}),
  };
}
