import { complexityFromQuery, type FieldComplexityValue } from '@pothos/plugin-complexity';
import {
  type DefinitionNode,
  type DocumentNode,
  GraphQLError,
  type GraphQLField,
  type GraphQLSchema,
  getNamedType,
  getNullableType,
  getVariableValues,
  isCompositeType,
  isListType,
  Kind,
  type OperationDefinitionNode,
  parse,
  type TypeNode,
  validate,
  visit,
} from 'graphql';
import { _createLRUCache, type GraphQLParams, type Plugin } from 'graphql-yoga';
import { MAX_PER_PAGE } from '../lib/pagination.js';

/** The most objects one request may be able to return, summed over its aliases and batched operations. */
export const MAX_QUERY_OBJECTS = 20_000;
/** A list's page when the query does not say (`perPage` omitted). */
const DEFAULT_PER_PAGE = 20;
/** The most tokens a document may have (graphql-armor's limit, in yoga.ts). */
export const MAX_DOCUMENT_TOKENS = 2_000;
// A document the cost check cannot parse within this many tokens is one the token limit refuses;
// the margin keeps any difference in how the two count tokens from letting a document through uncosted.
const MAX_COSTED_TOKENS = 2 * MAX_DOCUMENT_TOKENS;

const pageSize = (perPage: unknown) =>
  typeof perPage === 'number' ? Math.max(0, Math.min(perPage, MAX_PER_PAGE)) : DEFAULT_PER_PAGE;
const takesPerPage = (field: GraphQLField<unknown, never>) =>
  field.args.some((argument) => argument.name === 'perPage');

/**
 * How many objects a field can return at most (Pothos's complexity plugin multiplies it along
 * each path): 1 for an object, 0 for a scalar, and for a paged list its page size (`first` or
 * `perPage`), which also multiplies what is selected inside (a page field's `nodes`, a nested list's own fields). A list
 * of objects that takes no `perPage` states its bound on its field (`complexity`), and the
 * server refuses to start without one (assertListsBounded).
 */
export function countObjects(
  args: Record<string, unknown>,
  _context: unknown,
  field: GraphQLField<unknown, never>,
): FieldComplexityValue {
  if (takesPerPage(field)) {
    // Paged by cursor, `first` is the page size (with `perPage` as its fallback, as parsePage reads them).
    const size = pageSize(args.first ?? args.perPage);
    return isListType(getNullableType(field.type))
      ? { field: size, multiplier: size }
      : { field: 1, multiplier: size };
  }
  return isCompositeType(getNamedType(field.type)) ? 1 : 0;
}

/** Every list of objects is paged or bounded, so that no query can ask for an unbounded number of rows. */
export function assertListsBounded(schema: GraphQLSchema): void {
  for (const type of Object.values(schema.getTypeMap())) {
    if (type.name.startsWith('__') || !('getFields' in type) || !isCompositeType(type)) continue;
    for (const field of Object.values(type.getFields()) as GraphQLField<unknown, never>[]) {
      const listOfObjects =
        isListType(getNullableType(field.type)) && isCompositeType(getNamedType(field.type));
      if (listOfObjects && !takesPerPage(field) && field.extensions.complexity === countObjects) {
        throw new Error(
          `${type.name}.${field.name} is a list without perPage and without a complexity bound`,
        );
      }
    }
  }
}

/** The operation of a request's parameters that will run, with the fragments it may use. */
function operationOf(document: DocumentNode, operationName: string | undefined): DocumentNode | null {
  const operations = document.definitions.filter(
    (definition): definition is OperationDefinitionNode => definition.kind === Kind.OPERATION_DEFINITION,
  );
  const operation = operationName
    ? operations.find((candidate) => candidate.name?.value === operationName)
    : operations.length === 1
      ? operations[0]
      : undefined;
  if (!operation) return null;
  const fragments = document.definitions.filter(
    (definition: DefinitionNode) => definition.kind === Kind.FRAGMENT_DEFINITION,
  );
  // `__typename` is a name, not an object, but the plugin counts a field it cannot find in the
  // schema as one: it is left out of what is counted.
  return visit(
    { kind: Kind.DOCUMENT, definitions: [operation, ...fragments] },
    { Field: (field) => (field.name.value === '__typename' ? null : undefined) },
  );
}

// Only variables of these types can change a cost: a page size is an Int argument and
// @skip/@include take a Boolean, and a document that passes a variable of another type to either
// does not validate, so it never runs whatever it was counted at.
const COST_BEARING_TYPES = new Set(['Int', 'Boolean']);

/**
 * What a document's cost depends on: the document, the operation picked and the values of the
 * variables that could be a page size or a condition. The others (a message's recipient and
 * text) are left out, so that requests differing only in their data share a key.
 */
function costKey(
  query: string,
  operationName: string | null | undefined,
  operation: DocumentNode,
  variables: Record<string, unknown>,
): string {
  const definition = operation.definitions[0] as OperationDefinitionNode;
  const relevant: unknown[] = [];
  for (const variable of definition.variableDefinitions ?? []) {
    if (!COST_BEARING_TYPES.has(namedTypeName(variable.type))) continue;
    relevant.push(variable.variable.name.value, variables[variable.variable.name.value]);
  }
  return JSON.stringify([query, operationName ?? null, relevant]);
}

function namedTypeName(type: TypeNode): string {
  return type.kind === Kind.NAMED_TYPE ? type.name.value : namedTypeName(type.type);
}

/**
 * Refuses, before any of it runs, a request whose worst case exceeds MAX_QUERY_OBJECTS objects:
 * list sizes (`perPage`, or a list's stated bound) multiplied along each path, summed over the
 * fields and aliases of each operation and over the operations of a batch. Answered HTTP 400 with
 * `extensions.code` `QUERY_TOO_LARGE`. A document that does not parse or validate is left to
 * Yoga, which refuses it with its own error.
 */
export function limitQueryCost(schema: GraphQLSchema, maxObjects = MAX_QUERY_OBJECTS): Plugin {
  const documents = _createLRUCache<DocumentNode>({ max: 1_000 });
  const parsed = (query: string): DocumentNode | null => {
    const cached = documents.get(query);
    if (cached) return cached;
    try {
      const document = parse(query, { noLocation: true, maxTokens: MAX_COSTED_TOKENS });
      documents.set(query, document);
      return document;
    } catch {
      return null;
    }
  };
  // A document's operations with their fragments, made once per document and operation name.
  // Names the document does not have are not kept, so the client cannot grow the map.
  const operations = new WeakMap<DocumentNode, Map<string | undefined, DocumentNode>>();
  const operationIn = (document: DocumentNode, operationName: string | undefined) => {
    let byName = operations.get(document);
    if (!byName) {
      byName = new Map();
      operations.set(document, byName);
    }
    const known = byName.get(operationName);
    if (known) return known;
    const operation = operationOf(document, operationName);
    if (operation) byName.set(operationName, operation);
    return operation;
  };
  const costs = _createLRUCache<number>({ max: 1_000 });
  const worstCase = (params: GraphQLParams): number => {
    const document = typeof params.query === 'string' ? parsed(params.query) : null;
    const operation = document && operationIn(document, params.operationName ?? undefined);
    if (!operation) return 0;
    const variables = params.variables ?? {};
    // The same operation with the same page sizes costs the same: a client repeating its
    // operations (every /v1-like send) is counted once, not walked again on every request.
    const key = costKey(params.query as string, params.operationName, operation, variables);
    const known = costs.get(key);
    if (known !== undefined) return known;
    // Variables that do not coerce: Yoga refuses the request and nothing of it runs. One error is
    // enough to know: counting them all inspects the whole value once per bad field, quadratic in
    // a hostile object of thousands of unknown fields.
    const definition = operation.definitions[0] as OperationDefinitionNode;
    if (getVariableValues(schema, definition.variableDefinitions ?? [], variables, { maxErrors: 1 }).errors)
      return 0;
    try {
      const { complexity } = complexityFromQuery(operation, { schema, variables });
      costs.set(key, complexity);
      return complexity;
    } catch (error) {
      // A document that does not validate: Yoga refuses it and nothing of it runs. Anything else
      // must not let the document run uncounted.
      if (validate(schema, document).length > 0) return 0;
      throw error;
    }
  };
  return {
    onRequestParse: () => ({
      onRequestParseDone: ({ requestParserResult }) => {
        const batch = Array.isArray(requestParserResult) ? requestParserResult : [requestParserResult];
        const objects = batch.reduce((sum, params) => sum + worstCase(params), 0);
        if (objects <= maxObjects) return;
        throw new GraphQLError(
          `The request could return up to ${objects.toLocaleString('en')} objects, more than the ${maxObjects.toLocaleString('en')} one request may: ask for smaller pages, fewer nested lists or fewer aliases`,
          { extensions: { code: 'QUERY_TOO_LARGE', http: { status: 400 } } },
        );
      },
    }),
  };
}
