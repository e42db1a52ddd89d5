import {
  type GraphQLField,
  type GraphQLInputType,
  type GraphQLNamedType,
  type GraphQLObjectType,
  type GraphQLSchema,
  getNamedType,
  isInputObjectType,
  isObjectType,
  isUnionType,
} from 'graphql';

/** Every root field of the schema, as the operation that would run it. */
export interface RootField {
  /** `Query.campaign`, `Mutation.sendMessage`. */
  name: string;
  operation: 'query' | 'mutation';
  field: GraphQLField<unknown, unknown>;
}

export function rootFields(schema: GraphQLSchema): RootField[] {
  return (
    [
      ['query', schema.getQueryType()!],
      ['mutation', schema.getMutationType()!],
    ] as const
  ).flatMap(([operation, type]) =>
    Object.values(type.getFields()).map((field) => ({
      name: `${type.name}.${field.name}`,
      operation,
      field,
    })),
  );
}

/** Paths to every leaf of a named scalar type inside an input type ([] for the type itself). */
export function leafPaths(
  type: GraphQLInputType,
  scalar: (name: string) => boolean,
  seen = new Set<string>(),
): string[][] {
  const named = getNamedType(type);
  if (scalar(named.name)) return [[]];
  if (!isInputObjectType(named) || seen.has(named.name)) return [];
  return Object.values(named.getFields()).flatMap((field) =>
    leafPaths(field.type, scalar, new Set([...seen, named.name])).map((rest) => [field.name, ...rest]),
  );
}

/** Paths of a root field's arguments (and the fields of its input arguments) of a scalar type. */
export function argumentPaths(
  field: GraphQLField<unknown, unknown>,
  scalar: (name: string) => boolean,
): string[][] {
  return field.args.flatMap((arg) => leafPaths(arg.type, scalar).map((rest) => [arg.name, ...rest]));
}

/** Every member of a field's result, with what tells a refusal from a success. */
export function resultSelection(type: GraphQLNamedType): string {
  const members: readonly GraphQLObjectType[] = isUnionType(type)
    ? type.getTypes()
    : isObjectType(type)
      ? [type]
      : [];
  return `{ __typename ${members
    .map((member) => {
      const fields = member.getFields();
      const picked = ['id', 'code', 'total'].filter((name) => fields[name]);
      if (fields.details) picked.push('details { field issue }');
      const nodes = fields.nodes && getNamedType(fields.nodes.type);
      if (nodes && isObjectType(nodes))
        picked.push(`nodes { __typename ${nodes.getFields().id ? 'id' : ''} }`);
      return picked.length > 0 ? `... on ${member.name} { ${picked.join(' ')} }` : '';
    })
    .join(' ')} }`;
}

/** A document that runs one root field with the given variables, its result aliased `result`. */
export function rootFieldDocument(root: RootField, variables: Record<string, unknown>): string {
  const used = root.field.args.filter((arg) => arg.name in variables);
  const declared =
    used.length > 0 ? `(${used.map((arg) => `$${arg.name}: ${arg.type.toString()}`).join(', ')})` : '';
  const passed = used.length > 0 ? `(${used.map((arg) => `${arg.name}: $${arg.name}`).join(', ')})` : '';
  return `${root.operation} ${declared} { result: ${root.field.name}${passed} ${resultSelection(getNamedType(root.field.type))} }`;
}

/** The argument of type Upload, if the field takes a file. */
export function uploadArgument(root: RootField): string | undefined {
  return root.field.args.find((arg) => getNamedType(arg.type).name === 'Upload')?.name;
}

export function getAt(value: Record<string, unknown>, path: string[]): unknown {
  return path.reduce<unknown>((inner, part) => (inner as Record<string, unknown> | undefined)?.[part], value);
}

export function setAt(
  value: Record<string, unknown>,
  path: string[],
  replacement: unknown,
): Record<string, unknown> {
  const [head, ...rest] = path;
  return {
    ...value,
    [head!]:
      rest.length === 0
        ? replacement
        : setAt((value[head!] ?? {}) as Record<string, unknown>, rest, replacement),
  };
}

/**
 * A typed client result without the `__typename` of each object, which the client's documents
 * select to tell the members of a result apart and /v1 bodies do not carry: the rest of it is
 * what /v1 answers.
 */
export function withoutTypenames(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutTypenames);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([key]) => key !== '__typename')
      .map(([key, inner]) => [key, withoutTypenames(inner)]),
  );
}
