import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import {
  Kind,
  coerceInputValue,
  concatAST,
  execute,
  isNonNullType,
  parse,
  typeFromAST,
  validate,
  visit,
  type DocumentNode,
  type ExecutionResult,
  type FragmentDefinitionNode,
  type GraphQLInputType,
  type GraphQLSchema,
  type OperationDefinitionNode,
} from 'graphql';
import type { Context } from '../graphql/context.js';

export const OPERATIONS_DIR = new URL('../../schema/operations/', import.meta.url);

export interface VariableProblem {
  /** Dotted path of the offending field, as the client named it. */
  path: string[];
  kind: 'required' | 'unknown_field' | 'invalid_value';
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
 */
export class OperationRegistry {
  private readonly operations = new Map<string, Operation>();

  constructor(
    private readonly schema: GraphQLSchema,
    sources: string[],
  ) {
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
      const errors = validate(schema, document);
      if (errors.length > 0) {
        throw new Error(`operation ${definition.name.value} does not match the schema: ${errors.map((e) => e.message).join('; ')}`);
      }
      const variableTypes = new Map<string, GraphQLInputType>();
      for (const variable of definition.variableDefinitions ?? []) {
        variableTypes.set(variable.variable.name.value, typeFromAST(schema, variable.type) as GraphQLInputType);
      }
      this.operations.set(definition.name.value, { name: definition.name.value, document, definition, variableTypes });
    }
  }

  static fromDirectory(schema: GraphQLSchema, directory: URL = OPERATIONS_DIR): OperationRegistry {
    const files = readdirSync(directory).filter((file) => file.endsWith('.graphql')).sort();
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
      coerceInputValue(value, type, (path, _invalid, error) => {
        const named = /^Field "([^"]+)"/.exec(error.message)?.[1];
        const fieldPath = [name, ...path.map(String)];
        if (named && /is not defined by type/.test(error.message)) {
          problems.push({ path: [...fieldPath, named], kind: 'unknown_field' });
        } else if (named && /of required type/.test(error.message)) {
          problems.push({ path: [...fieldPath, named], kind: 'required' });
        } else {
          problems.push({ path: fieldPath, kind: 'invalid_value' });
        }
      });
    }
    return problems;
  }

  async execute(operation: Operation, variables: Record<string, unknown>, context: Context): Promise<ExecutionResult> {
    return execute({
      schema: this.schema,
      document: operation.document,
      variableValues: variables,
      contextValue: context,
    });
  }
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
