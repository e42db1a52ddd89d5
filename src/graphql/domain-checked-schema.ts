import { MapperKind, mapSchema } from '@graphql-tools/utils';
import {
  execute,
  type GraphQLInputType,
  GraphQLList,
  GraphQLNonNull,
  type GraphQLSchema,
  GraphQLString,
  getOperationAST,
  getVariableValues,
  isEnumType,
  isListType,
  isNonNullType,
} from 'graphql';
import type { Plugin } from 'graphql-yoga';

const domainChecked = new WeakMap<GraphQLSchema, GraphQLSchema>();

/**
 * The schema with its inputs checked by the domain rather than by GraphQL. GraphQL refuses a
 * missing required input field, or a kind spelt as /v1 spells it (`message.delivered`), while
 * coercing variables, before any resolver runs, with a message of its own. Tern's answer to bad
 * input is a ValidationError (in /v1, a 422) naming every bad field at once, which the domain's
 * validation writes. Here input fields are nullable and enums marked `restAsText` are text, so
 * the domain sees the input as sent and checks it as it checks everything else. The resolvers
 * and every output type are the same objects.
 */
export function domainCheckedSchema(schema: GraphQLSchema): GraphQLSchema {
  // Built once per schema: the /v1 layer and the GraphQL fallback run the same copy.
  let checked = domainChecked.get(schema);
  if (!checked) {
    checked = mapSchema(schema, {
      [MapperKind.INPUT_OBJECT_FIELD]: (field) => ({
        ...field,
        type: asText(isNonNullType(field.type) ? field.type.ofType : field.type),
      }),
    });
    domainChecked.set(schema, checked);
  }
  return checked;
}

function asText(type: GraphQLInputType): GraphQLInputType {
  if (isNonNullType(type)) return new GraphQLNonNull(asText(type.ofType) as typeof type.ofType);
  if (isListType(type)) return new GraphQLList(asText(type.ofType as GraphQLInputType));
  if (isEnumType(type) && type.extensions.restAsText) return GraphQLString;
  return type;
}

/**
 * Variables that the schema's precise input types refuse, but that the domain-checked schema
 * takes, run on the latter: the field then answers the ValidationError (with its details) that
 * the same operation gets through /v1. The precise types stay what a typed client and the
 * console check against; a request whose variables neither schema takes gets GraphQL's error.
 */
export function checkVariablesInTheDomain(schema: GraphQLSchema): Plugin {
  const checked = domainCheckedSchema(schema);
  return {
    onExecute: ({ args, setExecuteFn }) => {
      const operation = getOperationAST(args.document, args.operationName);
      const definitions = operation?.variableDefinitions ?? [];
      if (definitions.length === 0) return;
      const variables = (args.variableValues ?? {}) as Record<string, unknown>;
      if (!getVariableValues(args.schema, definitions, variables, { maxErrors: 1 }).errors) return;
      if (getVariableValues(checked, definitions, variables, { maxErrors: 1 }).errors) return;
      setExecuteFn((executionArgs) => execute({ ...executionArgs, schema: checked }));
    },
  };
}
