// A small typed GraphQL-over-HTTP client for the tests: real fetch to the real server.
import { expect } from 'vitest';
import type { TypedDocumentString } from '../gql/graphql.ts';

export interface GraphQLErrorShape {
  message: string;
  path?: (string | number)[];
  extensions?: { code?: string; field?: string; status?: string; [key: string]: unknown };
}

export interface GraphQLResult<Data> {
  status: number;
  data?: Data | null;
  errors?: GraphQLErrorShape[];
}

export type Execute = <Data, Variables>(
  document: TypedDocumentString<Data, Variables>,
  variables?: Variables,
  headers?: Record<string, string>,
) => Promise<GraphQLResult<Data>>;

export function graphqlClient(baseUrl: string, key?: string): Execute {
  return async (document, variables, headers = {}) => {
    const response = await fetch(`${baseUrl}/graphql`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/graphql-response+json',
        ...(key ? { 'api-key': key } : {}),
        ...headers,
      },
      body: JSON.stringify({ query: document.toString(), variables }),
    });
    const body = (await response.json()) as Omit<GraphQLResult<never>, 'status'>;
    return { status: response.status, ...body } as GraphQLResult<never>;
  };
}

/** The data of a result that must have succeeded (the errors are shown when it did not). */
export function dataOf<Data>(result: GraphQLResult<Data>): Data {
  expect(result.errors, JSON.stringify(result.errors)).toBeUndefined();
  return result.data as Data;
}

/** The one error of a result that must have failed with `code`. */
export function errorOf(result: GraphQLResult<unknown>, code: string): GraphQLErrorShape {
  expect(
    result.errors?.map((error) => error.extensions?.code),
    JSON.stringify(result.errors),
  ).toEqual([code]);
  return result.errors![0]!;
}
