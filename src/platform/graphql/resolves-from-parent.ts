// Whether a field's answer can be worked out from the value its resolver returns alone, before that value is
// stored: createPayment then writes the payment and keeps its answer in one statement (docs/architecture.md,
// "Idempotency").
import {
  getNamedType,
  isObjectType,
  Kind,
  type FieldNode,
  type GraphQLField,
  type GraphQLObjectType,
  type GraphQLResolveInfo,
  type SelectionSetNode,
} from 'graphql';

/**
 * The field extension marking a field whose resolver reads nothing stored: its value comes from its parent as the
 * service hands it over (a payment with its active attempt: a payment intent read bare would have its attempt read) and
 * from the request (its principal, the service's keys).
 * A field without a resolver of its own (`t.expose…`, a simple object's field) reads its parent's property: no mark needed.
 */
export const RESOLVES_FROM_PARENT = 'resolvesFromParent';

const resolvesFromParent = (field: GraphQLField<unknown, unknown>) => field.resolve === undefined || field.extensions[RESOLVES_FROM_PARENT] === true;

/**
 * Whether every field `info`'s field selects below it, at any depth, resolves from its parent (RESOLVES_FROM_PARENT), so
 * that the answer is the same whether the value it returns is stored yet or not. Abstract types and unknown fields answer
 * false: nothing then says that they read nothing.
 */
export function selectionResolvesFromValue(info: GraphQLResolveInfo): boolean {
  // A field of a document Yoga keeps parsed has the same node, and the same verdict, on every request.
  const [only, ...more] = info.fieldNodes;
  const cacheable = info.path.prev === undefined && only !== undefined && more.length === 0;
  const known = cacheable ? verdicts.get(only) : undefined;
  if (known !== undefined) return known;
  const type = getNamedType(info.returnType);
  const verdict =
    isObjectType(type) && info.fieldNodes.every((node) => node.selectionSet === undefined || allResolveFromParents(info, type, node.selectionSet));
  if (cacheable) verdicts.set(only, verdict);
  return verdict;
}

/** selectionResolvesFromValue's verdicts for root fields, by the field's node where it has one (no selections merged into it). */
const verdicts = new WeakMap<FieldNode, boolean>();

function allResolveFromParents(info: GraphQLResolveInfo, type: GraphQLObjectType, selectionSet: SelectionSetNode): boolean {
  return selectionSet.selections.every((selection) => {
    switch (selection.kind) {
      case Kind.FIELD: {
        if (selection.name.value === '__typename') return true;
        const field = type.getFields()[selection.name.value];
        if (field === undefined || !resolvesFromParent(field)) return false;
        if (selection.selectionSet === undefined) return true;
        const fieldType = getNamedType(field.type);
        return isObjectType(fieldType) && allResolveFromParents(info, fieldType, selection.selectionSet);
      }
      case Kind.INLINE_FRAGMENT:
        // Validation has checked that the fragment's type condition applies to `type`: on an object type, it is `type`.
        return allResolveFromParents(info, type, selection.selectionSet);
      case Kind.FRAGMENT_SPREAD: {
        const fragment = info.fragments[selection.name.value];
        return fragment !== undefined && allResolveFromParents(info, type, fragment.selectionSet);
      }
    }
  });
}
