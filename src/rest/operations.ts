import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  coerceInputValue,
  concatAST,
  type DocumentNode,
  type ExecutionResult,
  execute,
  type FragmentDefinitionNode,
  type GraphQLError,
  type GraphQLInputType,
  type GraphQLSchema,
  getNamedType,
  isEnumType,
  isInputObjectType,
  isListType,
  isNonNullType,
  Kind,
  type OperationDefinitionNode,
  parse,
  typeFromAST,
  validate,
  visit,
} from 'graphql';
import { MAX_ISSUE_DETAILS, ValidationError } from '../errors.js';
import type { Context } from '../graphql/context.js';
import { domainCheckedSchema } from '../graphql/domain-checked-schema.js';

export const OPERATIONS_DIR = new URL('../../schema/operations/', import.meta.url);

export interface VariableProblem {
  /** Dotted path of the offending field, as the client named it. */
  path: string[];
  kind: 'required' | 'unknown_field' | 'invalid_value' | 'invalid_format';
  /** An enum's values, for a value that is not one of them. */
  allowed?: string[];
  /** The fields the input object does define, for a field it does not. */
  known?: string[];
}

export interface Operation {
  name: string;
  document: DocumentNode;
  definition: OperationDefinitionNode;
  variableTypes: Map<string, GraphQLInputType>;
}

/**
 * The named GraphQL operations that the /v1 layer runs, parsed and validated against the
 * schema once at start-up, so a route that names a missing field fails the boot, not a request.
 * They run on the domain-checked schema, so that bad input gets Tern's 422 with every bad field.
 */
export class OperationRegistry {
  private readonly operations = new Map<string, Operation>();
  private readonly schema: GraphQLSchema;

  constructor(schema: GraphQLSchema, sources: string[]) {
    this.schema = domainCheckedSchema(schema);
    const all = concatAST(sources.map((source) => parse(source)));
    const fragments = new Map<string, FragmentDefinitionNode>();
    for (const definition of all.definitions) {
      if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments.set(definition.name.value, definition);
    }
    for (const definition of all.definitions) {
      if (definition.kind !== Kind.OPERATION_DEFINITION || !definition.name) continue;
      const document: DocumentNode = {
        kind: Kind.DOCUMENT,
        definitions: [definition, ...usedFragments(definition, fragments)],
      };
      const errors = validate(this.schema, document);
      if (errors.length > 0) {
        throw new Error(
          `operation ${definition.name.value} does not match the schema: ${errors.map((e) => e.message).join('; ')}`,
        );
      }
      const variableTypes = new Map<string, GraphQLInputType>();
      for (const variable of definition.variableDefinitions ?? []) {
        variableTypes.set(
          variable.variable.name.value,
          typeFromAST(this.schema, variable.type) as GraphQLInputType,
        );
      }
      this.operations.set(definition.name.value, {
        name: definition.name.value,
        document,
        definition,
        variableTypes,
      });
    }
  }

  static fromDirectory(schema: GraphQLSchema, directory: URL = OPERATIONS_DIR): OperationRegistry {
    const files = readdirSync(directory)
      .filter((file) => file.endsWith('.graphql'))
      .sort();
    return new OperationRegistry(
      schema,
      files.map((file) => readFileSync(join(directory.pathname, file), 'utf8')),
    );
  }

  names(): string[] {
    return [...this.operations.keys()];
  }

  get(name: string): Operation {
    const operation = this.operations.get(name);
    if (!operation) throw new Error(`unknown operation ${name}`);
    return operation;
  }

  /**
   * Checks variables the way GraphQL would, but collects every problem with the path of the
   * field, so that the /v1 layer can answer with the `details` a REST client expects.
   */
  checkVariables(operation: Operation, variables: Record<string, unknown>): VariableProblem[] {
    const problems: VariableProblem[] = [];
    for (const [name, type] of operation.variableTypes) {
      const value = variables[name];
      if (value === undefined) {
        if (isNonNullType(type)) problems.push({ path: [name], kind: 'required' });
        continue;
      }
      try {
        coerceVariable(value, type, name, problems);
      } catch (error) {
        if (error !== ENOUGH_PROBLEMS) throw error;
        break;
      }
    }
    return problems;
  }

  async execute(
    operation: Operation,
    variables: Record<string, unknown>,
    context: Context,
  ): Promise<ExecutionResult> {
    return execute({
      schema: this.schema,
      document: operation.document,
      variableValues: variables,
      contextValue: context,
    });
  }
}

/** Thrown from graphql-js's coercion to stop it: the problems found so far are all the answer lists. */
const ENOUGH_PROBLEMS = Symbol('enough problems');

/**
 * Adds the problems of one variable's value. graphql-js reports every bad field of the value,
 * each with suggestions it computes; past MAX_ISSUE_DETAILS (one more, to say there are more)
 * the rest are not looked at, so a body of thousands of unknown fields costs what a hundred do.
 */
function coerceVariable(value: unknown, type: GraphQLInputType, name: string, problems: VariableProblem[]) {
  coerceInputValue(value, type, (path, _invalid, error) => {
    if (problems.length > MAX_ISSUE_DETAILS) throw ENOUGH_PROBLEMS;
    problems.push(problemOf(type, [name, ...path.map(String)], path, error));
  });
}

/** What graphql-js's coercion error says, as a problem: an unknown field, a missing one, or a bad value. */
function problemOf(
  type: GraphQLInputType,
  fieldPath: string[],
  path: readonly (string | number)[],
  error: GraphQLError,
): VariableProblem {
  const { message } = error;
  const named = /^Field "([^"]+)"/.exec(message)?.[1];
  if (named && /is not defined by type/.test(message)) {
    const inputType = getNamedType(typeAt(type, path));
    const known = isInputObjectType(inputType) ? Object.keys(inputType.getFields()) : [];
    return { path: [...fieldPath, named], kind: 'unknown_field', known };
  }
  if (named && /of required type/.test(message)) return { path: [...fieldPath, named], kind: 'required' };
  const target = getNamedType(typeAt(type, path));
  // As /v1 writes them: in lower case (an enum's value is taken in any case).
  const allowed = isEnumType(target)
    ? target.getValues().map((value) => value.name.toLowerCase())
    : undefined;
  // A scalar that says what is wrong (a DateTime without an offset) is taken at its word.
  const scalarIssue =
    error.originalError instanceof ValidationError ? error.originalError.details[0]?.issue : undefined;
  const kind = scalarIssue === 'invalid_format' ? scalarIssue : 'invalid_value';
  return { path: fieldPath, kind, ...(allowed ? { allowed } : {}) };
}

/** The type of the value at `path` inside a value of `type` (list indexes and input fields). */
function typeAt(type: GraphQLInputType, path: readonly (string | number)[]): GraphQLInputType {
  let current = type;
  for (const key of path) {
    const inner = isNonNullType(current) ? current.ofType : current;
    if (isListType(inner)) current = inner.ofType;
    else if (isInputObjectType(inner)) {
      const field = inner.getFields()[String(key)];
      if (!field) return current;
      current = field.type;
    } else return current;
  }
  return current;
}

function usedFragments(
  root: OperationDefinitionNode | FragmentDefinitionNode,
  fragments: Map<string, FragmentDefinitionNode>,
  seen = new Set<string>(),
): FragmentDefinitionNode[] {
  const found: FragmentDefinitionNode[] = [];
  visit(root, {
    FragmentSpread(node) {
      const name = node.name.value;
      const fragment = fragments.get(name);
      if (seen.has(name) || !fragment) return;
      seen.add(name);
      found.push(fragment, ...usedFragments(fragment, fragments, seen));
    },
  });
  return found;
}
