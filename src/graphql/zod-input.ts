import type {
  ArgBuilder,
  InputFieldBuilder,
  InputFieldsFromShape,
  InputObjectRef,
  InputTypeParam,
  SchemaTypes,
} from '@pothos/core';
import { z } from 'zod';
import type { Builder, BuilderTypes } from './builder.js';

type JsonSchema = Record<string, unknown>;

/**
 * What a GraphQL input field or argument holds when its zod schema cannot say it alone: an enum
 * type of the schema (with its values' descriptions), or `ID` for a string that names a row.
 */
export type TypeOverrides<Types extends SchemaTypes> = Record<string, InputTypeParam<Types>>;

/** The extension under which an input type or argument keeps the zod schema it came from. */
export const ZOD_EXTENSION = 'zod';

/**
 * A GraphQL input type derived from the zod schema the service parses it with: its fields,
 * which are required, their types, descriptions and limits all come from that schema, so the
 * console, typed clients and the OpenAPI document (which reads the schema back from the type's
 * extensions) say what the service enforces.
 */
export function inputTypeFromZod<Schema extends z.ZodObject>(
  builder: Builder,
  name: string,
  schema: Schema,
  types: TypeOverrides<BuilderTypes> = {},
): InputObjectRef<BuilderTypes, z.input<Schema>> {
  const object = jsonSchemaOf(schema);
  if (typeof object.description !== 'string')
    throw new Error(`${name}: its zod schema needs a description (.meta({ description }))`);
  return builder.inputType(name, {
    description: object.description,
    extensions: { [ZOD_EXTENSION]: schema },
    fields: (t) =>
      Object.fromEntries(
        Object.entries(schema.shape).map(([key, field]) => [
          key,
          inputField(t, `${name}.${key}`, field as z.ZodType, types[key]),
        ]),
      ),
  }) as unknown as InputObjectRef<BuilderTypes, z.input<Schema>>;
}

/** The arguments of a field, one per property of the zod schema the service parses them with. */
export function argsFromZod<Types extends SchemaTypes, Schema extends z.ZodObject>(
  arg: ArgBuilder<Types>,
  schema: Schema,
  types: TypeOverrides<Types> = {},
): InputFieldsFromShape<
  Types,
  { [Key in keyof z.input<Schema>]: z.input<Schema>[Key] | null | undefined },
  'Arg'
> {
  return Object.fromEntries(
    Object.entries(schema.shape).map(([key, field]) => {
      const { type, description } = describeField(key, field as z.ZodType, types[key]);
      return [
        key,
        arg({
          type: type as never,
          required: isRequired(field as z.ZodType),
          description,
          extensions: { [ZOD_EXTENSION]: field },
        }),
      ];
    }),
  ) as never;
}

function inputField<Types extends SchemaTypes>(
  t: InputFieldBuilder<Types, 'InputObject'>,
  path: string,
  field: z.ZodType,
  override: InputTypeParam<Types> | undefined,
) {
  const { type, description } = describeField(path, field, override);
  return t.field({ type: type as never, required: isRequired(field), description });
}

/** Required in GraphQL: neither optional nor nullable, and without a default. */
function isRequired(field: z.ZodType): boolean {
  return !field.isOptional() && !field.isNullable();
}

function describeField<Types extends SchemaTypes>(
  path: string,
  field: z.ZodType,
  override: InputTypeParam<Types> | undefined,
): { type: InputTypeParam<Types>; description: string } {
  const json = nonNullMember(jsonSchemaOf(field));
  if (!override && unwrap(field) instanceof z.ZodEnum)
    throw new Error(`${path}: an enum needs its GraphQL enum type as an override`);
  const type = override ?? scalarOf(path, json);
  const limits = limitsOf(json);
  const base = typeof json.description === 'string' ? json.description : '';
  if (!base && !limits)
    throw new Error(`${path}: its zod schema needs a description (.meta({ description }))`);
  return { type: type as InputTypeParam<Types>, description: limits ? `${base} (${limits})`.trim() : base };
}

/** A zod schema as the JSON Schema of what a client sends. */
export function jsonSchemaOf(schema: z.ZodType): JsonSchema {
  const { $schema: _, ...json } = z.toJSONSchema(schema, {
    io: 'input',
    unrepresentable: 'any',
  }) as JsonSchema;
  return json;
}

function nonNullMember(schema: JsonSchema): JsonSchema {
  const anyOf = schema.anyOf as JsonSchema[] | undefined;
  if (!anyOf) return schema;
  const member = anyOf.find((candidate) => candidate.type !== 'null') ?? schema;
  return { ...member, ...(schema.description ? { description: schema.description } : {}) };
}

/** The schema inside optional, nullable, default and pipe wrappers. */
function unwrap(schema: z.ZodType): z.ZodType {
  let current = schema;
  for (let depth = 0; depth < 10; depth++) {
    const def = current._zod.def as { innerType?: z.ZodType; in?: z.ZodType };
    const inner = def.innerType ?? def.in;
    if (!inner) return current;
    current = inner;
  }
  return current;
}

function scalarOf(path: string, json: JsonSchema): string | [string] {
  switch (json.type) {
    case 'string':
      return 'String';
    case 'integer':
      return 'Int';
    case 'number':
      return 'Float';
    case 'boolean':
      return 'Boolean';
    case 'array': {
      const items = scalarOf(`${path}[]`, (json.items ?? {}) as JsonSchema);
      if (Array.isArray(items)) throw new Error(`${path}: lists of lists are not inputs`);
      return [items];
    }
    default:
      throw new Error(`${path}: no GraphQL type for a JSON Schema of type ${String(json.type)}`);
  }
}

/** "1..1600 characters", "0..86400", "at least 1 item": the bounds the schema enforces, for people. */
export function limitsOf(json: JsonSchema): string {
  const range = (min: unknown, max: unknown, unit: string) => {
    const suffix = unit ? ` ${unit}` : '';
    if (typeof min === 'number' && typeof max === 'number') return `${min}..${max}${suffix}`;
    if (typeof max === 'number') return `up to ${max}${suffix}`;
    if (typeof min === 'number' && min > 0) return `at least ${min}${suffix}`;
    return '';
  };
  const parts: string[] = [];
  if (json.type === 'string') parts.push(range(json.minLength, json.maxLength, 'characters'));
  if (json.type === 'integer' || json.type === 'number') parts.push(range(json.minimum, json.maximum, ''));
  if (json.type === 'array') {
    const each = json.items ? limitsOf(json.items as JsonSchema) : '';
    parts.push(`${range(json.minItems, json.maxItems, 'items')}${each ? `, each ${each}` : ''}`);
  }
  if (json.default !== undefined) parts.push(`${JSON.stringify(json.default)} when left out`);
  return parts.filter(Boolean).join('; ');
}
