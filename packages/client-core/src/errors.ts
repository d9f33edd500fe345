// The API's errors as the SDKs raise them: `code` from the API's catalog (docs/api.md, "Errors").

/** An error the API answered with: `code` is from the API's catalog (PAYMENT_DECLINED, INVALID_INPUT, ...). */
export class ApiError extends Error {
  readonly code: string;
  /** The input field at fault, for INVALID_INPUT. */
  readonly field: string | undefined;
  /** Every extension the API sent (declineCode, declineMessage, status, ...). */
  readonly extensions: Readonly<Record<string, unknown>>;

  constructor(message: string, extensions: Record<string, unknown>) {
    super(message);
    this.name = 'ApiError';
    this.code = typeof extensions['code'] === 'string' ? extensions['code'] : 'INTERNAL';
    this.field = typeof extensions['field'] === 'string' ? extensions['field'] : undefined;
    this.extensions = extensions;
  }
}

export interface GraphQLErrorShape {
  message: string;
  extensions?: Record<string, unknown>;
}

export function errorOf(errors: readonly GraphQLErrorShape[]): ApiError {
  const [first] = errors;
  return new ApiError(first?.message ?? 'The API answered with an error.', first?.extensions ?? {});
}
