// Turns whatever a resolver or the GraphQL machinery raised into an error with `extensions.code` from the
// catalog (src/kernel/errors.ts). AppErrors keep their message; anything unexpected is logged and masked.
import { GraphQLError } from 'graphql';
import { AppError, ERROR_CODES, headersOf, type ErrorCode } from '../../kernel/errors.ts';

// graphql-armor's limits, and the nesting the parser's stack allows (TOO_DEEP_TO_PARSE).
const QUERY_LIMIT = /^Syntax Error: (Query depth|Query Cost|Token|Aliases|Nesting) limit/i;
const VARIABLE_FIELD = /at "([^"]+)"/;
const UNDEFINED_FIELD = /Field "([^"]+)" is not defined by type/;
// A variable refused as a whole: an invalid value, or null or missing where its type is non-null.
const VARIABLE_NAME = /^Variable "\$([^"]+)" (?:got invalid value|of (?:non-null|required) type)/;

/** GraphQL's parser is recursive: nesting deep enough (2,000 `[` fit in the token limit) overflows the stack. */
export const TOO_DEEP_TO_PARSE = 'Syntax Error: Nesting limit exceeded: the operation is nested too deeply to parse.';

export function appErrorToGraphQL(error: AppError, original?: GraphQLError): GraphQLError {
  const headers = headersOf(error);
  const http = { status: ERROR_CODES[error.code].httpStatus, ...(Object.keys(headers).length > 0 ? { headers } : {}) };
  return new GraphQLError(error.message, {
    nodes: original?.nodes,
    path: original?.path,
    extensions: { code: error.code, ...error.details, http },
  });
}

/** The input field a variable-coercion message points at, relative to the input object (the variable's name dropped). */
function fieldOf(message: string): string | undefined {
  const at = VARIABLE_FIELD.exec(message)?.[1];
  if (at !== undefined) return at.includes('.') ? at.slice(at.indexOf('.') + 1) : at;
  // A scalar variable with no path inside it: the variable itself is the field.
  return UNDEFINED_FIELD.exec(message)?.[1] ?? VARIABLE_NAME.exec(message)?.[1];
}

/**
 * A variable-coercion message without the value it refused: that value may be a card number or a CVC
 * sent with the wrong type, and must not come back in an answer (or a client's error log).
 */
export function withoutInputValues(message: string): string {
  return message
    .replace(/ got invalid value [\s\S]*?( at "[^"]*")?; /, (_match, at: string | undefined) => ` got an invalid value${at ?? ''}; `)
    .replace(/(cannot represent [^:;]*?)(: [\s\S]*)$/, '$1.')
    .replace(/(Expected value of type "[^"]+"), found [\s\S]*$/, '$1.');
}

/**
 * A GraphQLError produced before execution (parse, validation, variable coercion, armor limits, Yoga's
 * request parsing) gets a catalog code. Errors that already carry a code are returned as they are.
 */
export function withErrorCode(error: GraphQLError): GraphQLError {
  if (typeof error.extensions?.code === 'string' && error.extensions.code in ERROR_CODES) return error;
  const status = (error.extensions?.http as { status?: number } | undefined)?.status;
  let code: ErrorCode = 'INVALID_INPUT';
  if (QUERY_LIMIT.test(error.message)) code = 'QUERY_TOO_COMPLEX';
  else if (status === 413) code = 'PAYLOAD_TOO_LARGE';
  else if (status !== undefined && status >= 500) code = 'INTERNAL';
  const field = code === 'INVALID_INPUT' ? fieldOf(error.message) : undefined;
  const { originalError: _internal, ...extensions } = error.extensions ?? {};
  return new GraphQLError(code === 'INVALID_INPUT' ? withoutInputValues(error.message) : error.message, {
    nodes: error.nodes,
    source: error.source,
    positions: error.positions,
    path: error.path,
    extensions: {
      ...extensions,
      code,
      ...(field ? { field } : {}),
      http: { status: status ?? ERROR_CODES[code].httpStatus },
    },
  });
}
