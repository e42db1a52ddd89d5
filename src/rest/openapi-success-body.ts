import {
  type FragmentDefinitionNode,
  type FragmentSpreadNode,
  type GraphQLOutputType,
  type GraphQLSchema,
  getNamedType,
  type InlineFragmentNode,
  isEnumType,
  isListType,
  isNonNullType,
  isObjectType,
  isScalarType,
  Kind,
  type SelectionSetNode,
} from 'graphql';
import { type JsonSchema, SCALARS } from './openapi-parts.js';
import type { Operation } from './operations.js';

// What a route of the document answers on success: the fields its operation selects, by their
// aliases, as JSON Schema.

/** The success body: the operation's fields, those left out when null no longer required, and `request`. */
export function withRequest(
  schema: JsonSchema,
  omitNull: readonly string[] = [],
  headers: Record<string, string> = {},
): JsonSchema {
  const properties = Object.fromEntries(
    Object.entries({
      ...(schema.properties as Record<string, JsonSchema>),
      request: { type: 'string' },
    }).filter(([name]) => !(name in headers)),
  );
  const required = ((schema.required as string[]) ?? []).filter(
    (name) => !omitNull.includes(name) && !(name in headers),
  );
  return { ...schema, properties, required: [...required, 'request'] };
}

/** The fields the operation selects of its root field's result, as JSON Schema, by their aliases. */
export function responseSchema(operation: Operation, schema: GraphQLSchema): JsonSchema {
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const definition of operation.document.definitions) {
    if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments.set(definition.name.value, definition);
  }
  const rootType =
    operation.definition.operation === 'query' ? schema.getQueryType() : schema.getMutationType();
  const [root] = operation.definition.selectionSet.selections;
  if (!rootType || root?.kind !== Kind.FIELD || !root.selectionSet) return { type: 'object' };
  const field = rootType.getFields()[root.name.value];
  if (!field) return { type: 'object' };
  // The success body is the non-error member of the field's result union.
  const named = getNamedType(field.type);
  const errorInterface = schema.getType('Error');
  const successType = isObjectType(named)
    ? named
    : schema
        .getPossibleTypes(named as never)
        .find((type) => !type.getInterfaces().some((i) => i === errorInterface));
  if (!successType) return { type: 'object' };
  return selectionSchema(successType, root.selectionSet, fragments, schema);
}

function selectionSchema(
  type: GraphQLOutputType,
  selectionSet: SelectionSetNode,
  fragments: Map<string, FragmentDefinitionNode>,
  schema: GraphQLSchema,
): JsonSchema {
  const named = getNamedType(type);
  if (!isObjectType(named)) return { type: 'object' };
  const properties: Record<string, JsonSchema> = {};
  const visitSet = (set: SelectionSetNode) => {
    for (const selection of set.selections) {
      if (selection.kind === Kind.FIELD) {
        const field = named.getFields()[selection.name.value];
        if (field && selection.name.value !== '__typename')
          properties[selection.alias?.value ?? selection.name.value] = outputSchema(
            field.type,
            selection.selectionSet,
            fragments,
            schema,
          );
        continue;
      }
      const fragment = fragmentBody(selection, fragments, named.name);
      if (fragment) visitSet(fragment);
    }
  };
  visitSet(selectionSet);
  return { type: 'object', properties, required: Object.keys(properties) };
}

/** The selections of a fragment (inline or named) that applies to `typeName`; undefined for one that does not. */
function fragmentBody(
  selection: InlineFragmentNode | FragmentSpreadNode,
  fragments: Map<string, FragmentDefinitionNode>,
  typeName: string,
): SelectionSetNode | undefined {
  const definition =
    selection.kind === Kind.INLINE_FRAGMENT ? selection : fragments.get(selection.name.value);
  const condition = definition?.typeCondition?.name.value;
  return !condition || condition === typeName ? definition?.selectionSet : undefined;
}

function outputSchema(
  type: GraphQLOutputType,
  selectionSet: SelectionSetNode | undefined,
  fragments: Map<string, FragmentDefinitionNode>,
  schema: GraphQLSchema,
): JsonSchema {
  const nullable = !isNonNullType(type);
  const inner = isNonNullType(type) ? type.ofType : type;
  let result: JsonSchema;
  if (isListType(inner))
    result = { type: 'array', items: outputSchema(inner.ofType, selectionSet, fragments, schema) };
  else if (isEnumType(inner))
    result = { type: 'string', enum: inner.getValues().map((value) => value.value as string) };
  else if (isScalarType(inner)) result = SCALARS[inner.name] ?? { type: 'string' };
  else result = selectionSet ? selectionSchema(inner, selectionSet, fragments, schema) : { type: 'object' };
  return nullable ? { ...result, type: [result.type, 'null'] } : result;
}
