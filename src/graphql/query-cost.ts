import { complexityFromQuery, type FieldComplexityValue } from '@pothos/plugin-complexity';
import {
  type DefinitionNode,
  type DocumentNode,
  GraphQLError,
  type GraphQLField,
  type GraphQLResolveInfo,
  type GraphQLSchema,
  getNamedType,
  getNullableType,
  getVariableValues,
  isCompositeType,
  isListType,
  Kind,
  type OperationDefinitionNode,
  OperationTypeNode,
  parse,
  type TypeNode,
  validate,
  visit,
} from 'graphql';
import { _createLRUCache, type GraphQLParams, type Plugin } from 'graphql-yoga';
import { MAX_PER_PAGE } from '../lib/pagination.js';

/** The most objects one request may be able to return, summed over its aliases and batched operations. */
export const MAX_QUERY_OBJECTS = 20_000;
/**
 * The most one update of a subscription may cost (updateCost). A query runs once; a subscription
 * runs its selection again for every update of every stream, so what one update may ask is kept
 * to what a dashboard shows (a message with a page of replies, an import job with its row
 * errors), and each update is charged to the account's live budget (src/modules/live/live-budget.ts).
 */
export const MAX_UPDATE_COST = 1_000;
/**
 * What reading a list costs an update beside its fields: a statement, with the loader around it,
 * takes about as long as resolving a hundred fields (0.7 ms against 7 µs each, measured).
 */
const LIST_READ_COST = 100;
/** What delivering an update costs beside its fields (running it, its event, counting it): ten fields' worth. */
const UPDATE_DELIVERY_COST = 10;
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

/** How countObjects counts: objects (a request's limit), or the work of a subscription's update. */
interface CountingContext {
  update?: boolean;
}

/**
 * How many objects a field can return at most (Pothos's complexity plugin multiplies it along
 * each path): 1 for an object, 0 for a scalar, and for a paged list its page size (`first` or
 * `perPage`), which also multiplies what is selected inside (a page field's `nodes`, a nested list's own fields). A list
 * of objects that takes no `perPage` states its bound on its field (`complexity`), and the
 * server refuses to start without one (assertListsBounded).
 *
 * Counting an update (the context's `update`), a scalar counts 1 as well, and a paged list
 * LIST_READ_COST more: an update's work is resolving its fields and reading its lists, where a
 * query's is reading its rows.
 */
export function countObjects(
  args: Record<string, unknown>,
  context: unknown,
  field: GraphQLField<unknown, never>,
): FieldComplexityValue {
  const update = (context as CountingContext | undefined)?.update === true;
  if (takesPerPage(field)) {
    // Paged by cursor, `first` is the page size (with `perPage` as its fallback, as parsePage reads them).
    const size = pageSize(args.first ?? args.perPage);
    const read = update ? LIST_READ_COST : 0;
    return isListType(getNullableType(field.type))
      ? { field: size + read, multiplier: size }
      : { field: 1 + read, multiplier: size };
  }
  return isCompositeType(getNamedType(field.type)) || update ? 1 : 0;
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
  return countable([operation, ...fragments]);
}

/**
 * `__typename` is a name, not an object, but the plugin counts a field it cannot find in the
 * schema as one: it is left out of what is counted.
 */
function countable(definitions: DefinitionNode[]): DocumentNode {
  return visit(
    { kind: Kind.DOCUMENT, definitions },
    { Field: (field) => (field.name.value === '__typename' ? null : undefined) },
  );
}

/**
 * What one update of a subscription costs: UPDATE_DELIVERY_COST, plus every field of its answer,
 * scalars as well as objects, multiplied by the page sizes of the lists around it, plus
 * LIST_READ_COST for every paged list (`messageUpdated { kind message { id replies(perPage: 5) {
 * from } } }`: 10 + 1 + 1 + 1 + 1 + (5 + 100) + 5 × 1 = 124).
 */
export function updateCost(
  schema: GraphQLSchema,
  operation: DocumentNode,
  variables: Record<string, unknown> = {},
) {
  const { complexity } = complexityFromQuery(operation, { schema, variables, ctx: { update: true } });
  return UPDATE_DELIVERY_COST + complexity;
}

/** What each update of the running subscription costs (updateCost). */
export function subscriptionUpdateCost(info: GraphQLResolveInfo): number {
  const operation = countable([info.operation, ...Object.values(info.fragments)]);
  return updateCost(info.schema, operation, info.variableValues);
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

/** A request's worst case: objects, and for a subscription what each update costs (0 otherwise). */
interface Cost {
  objects: number;
  update: number;
}

/**
 * Refuses, before any of it runs, a request whose worst case exceeds MAX_QUERY_OBJECTS objects:
 * list sizes (`perPage`, or a list's stated bound) multiplied along each path, summed over the
 * fields and aliases of each operation and over the operations of a batch; and a subscription
 * whose update could cost more than MAX_UPDATE_COST (updateCost). Answered HTTP 400 with `extensions.code`
 * `QUERY_TOO_LARGE`. A document that does not parse or validate is left to Yoga, which refuses it
 * with its own error.
 */
export function limitQueryCost(
  schema: GraphQLSchema,
  maxObjects = MAX_QUERY_OBJECTS,
  maxUpdateCost = MAX_UPDATE_COST,
): Plugin {
  const counter = new WorstCaseCounter(schema);
  return {
    onRequestParse: () => ({
      onRequestParseDone: ({ requestParserResult }) => {
        const batch = Array.isArray(requestParserResult) ? requestParserResult : [requestParserResult];
        refuseOverLimits(
          batch.map((params) => counter.worstCase(params)),
          maxObjects,
          maxUpdateCost,
        );
      },
    }),
  };
}

function refuseOverLimits(costs: Cost[], maxObjects: number, maxUpdateCost: number): void {
  const subscription = costs.find(({ update }) => update > maxUpdateCost);
  if (subscription) {
    throw new GraphQLError(
      `Each update of the subscription could cost up to ${subscription.update.toLocaleString('en')}, more than the ${maxUpdateCost.toLocaleString('en')} one update may (10, a field 1, a list 100 more, page sizes multiply): select fewer fields, smaller pages or fewer aliases, and read the rest with a query`,
      { extensions: { code: 'QUERY_TOO_LARGE', http: { status: 400 } } },
    );
  }
  const objects = costs.reduce((sum, { objects }) => sum + objects, 0);
  if (objects <= maxObjects) return;
  throw new GraphQLError(
    `The request could return up to ${objects.toLocaleString('en')} objects, more than the ${maxObjects.toLocaleString('en')} one request may: ask for smaller pages, fewer nested lists or fewer aliases`,
    { extensions: { code: 'QUERY_TOO_LARGE', http: { status: 400 } } },
  );
}

const NOTHING: Cost = { objects: 0, update: 0 };

/** Each request's worst case, with what parsing and counting made kept for the next request alike. */
class WorstCaseCounter {
  private readonly documents = _createLRUCache<DocumentNode>({ max: 1_000 });
  // A document's operations with their fragments, made once per document and operation name.
  // Names the document does not have are not kept, so the client cannot grow the map.
  private readonly operations = new WeakMap<DocumentNode, Map<string | undefined, DocumentNode>>();
  private readonly costs = _createLRUCache<Cost>({ max: 1_000 });

  constructor(private readonly schema: GraphQLSchema) {}

  worstCase(params: GraphQLParams): Cost {
    const document = typeof params.query === 'string' ? this.parsed(params.query) : null;
    const operation = document && this.operationIn(document, params.operationName ?? undefined);
    if (!operation) return NOTHING;
    const variables = params.variables ?? {};
    // The same operation with the same page sizes costs the same: a client repeating its
    // operations (every /v1-like send) is counted once, not walked again on every request.
    const key = costKey(params.query as string, params.operationName, operation, variables);
    const known = this.costs.get(key);
    if (known !== undefined) return known;
    const cost = this.count(document, operation, variables);
    if (cost !== NOTHING) this.costs.set(key, cost);
    return cost;
  }

  private count(document: DocumentNode, operation: DocumentNode, variables: Record<string, unknown>): Cost {
    const { schema } = this;
    // Variables that do not coerce: Yoga refuses the request and nothing of it runs. One error is
    // enough to know: counting them all inspects the whole value once per bad field, quadratic in
    // a hostile object of thousands of unknown fields.
    const definition = operation.definitions[0] as OperationDefinitionNode;
    if (getVariableValues(schema, definition.variableDefinitions ?? [], variables, { maxErrors: 1 }).errors)
      return NOTHING;
    try {
      return {
        objects: complexityFromQuery(operation, { schema, variables }).complexity,
        update:
          definition.operation === OperationTypeNode.SUBSCRIPTION
            ? updateCost(schema, operation, variables)
            : 0,
      };
    } catch (error) {
      // A document that does not validate: Yoga refuses it and nothing of it runs. Anything else
      // must not let the document run uncounted.
      if (validate(schema, document).length > 0) return NOTHING;
      throw error;
    }
  }

  private parsed(query: string): DocumentNode | null {
    const cached = this.documents.get(query);
    if (cached) return cached;
    try {
      const document = parse(query, { noLocation: true, maxTokens: MAX_COSTED_TOKENS });
      this.documents.set(query, document);
      return document;
    } catch {
      return null;
    }
  }

  private operationIn(document: DocumentNode, operationName: string | undefined): DocumentNode | null {
    let byName = this.operations.get(document);
    if (!byName) {
      byName = new Map();
      this.operations.set(document, byName);
    }
    const known = byName.get(operationName);
    if (known) return known;
    const operation = operationOf(document, operationName);
    if (operation) byName.set(operationName, operation);
    return operation ?? null;
  }
}
