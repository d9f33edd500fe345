// A span per GraphQL operation (docs/operations.md, "Tracing"), named as OpenTelemetry's GraphQL conventions
// say ("mutation createPayment"): the parent of everything its resolvers do (SQL, processor calls, the
// outbox's enqueue), under the HTTP server's span of the request. Added only when tracing is on.
import { getOperationAST, type GraphQLError } from 'graphql';
import { isAsyncIterable, type Plugin } from 'graphql-yoga';
import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { inSpan } from '../platform/tracing.ts';
import { codeOf } from './operation-metrics.ts';

export function useOperationSpans(): Plugin {
  return {
    onExecute({ args, executeFn, setExecuteFn }) {
      const operation = getOperationAST(args.document, args.operationName);
      const type = operation?.operation ?? 'query';
      const name = operation?.name?.value;
      setExecuteFn((executeArgs) =>
        inSpan(
          name === undefined ? type : `${type} ${name}`,
          { kind: SpanKind.INTERNAL, attributes: { 'graphql.operation.type': type, ...(name === undefined ? {} : { 'graphql.operation.name': name }) } },
          async (span) => {
            const result = await executeFn(executeArgs);
            if (!isAsyncIterable(result) && result.errors?.length) {
              const codes = [...new Set((result.errors as readonly GraphQLError[]).map(codeOf))];
              span.setAttribute('graphql.error.codes', codes);
              span.setStatus({ code: SpanStatusCode.ERROR, message: codes.join(', ') });
            }
            return result;
          },
        ),
      );
    },
  };
}
