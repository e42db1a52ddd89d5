import {
  type GraphQLSchema,
  isEnumType,
  isInputObjectType,
  isInterfaceType,
  isIntrospectionType,
  isObjectType,
  isSpecifiedScalarType,
  isUnionType,
} from 'graphql';
import { describe, expect, it } from 'vitest';
import { createSchema } from '../../src/graphql/schema.js';

/**
 * The console's Docs panel and the typed client's comments are the schema's descriptions: every
 * type, field, argument, enum value and input field of Tern's schema has one. A union of a
 * field's results is described by the field; it is named here all the same.
 */
function undocumented(schema: GraphQLSchema): string[] {
  const missing: string[] = [];
  const check = (name: string, description: string | null | undefined) => {
    if (!description?.trim()) missing.push(name);
  };
  for (const type of Object.values(schema.getTypeMap())) {
    if (isIntrospectionType(type) || isSpecifiedScalarType(type)) continue;
    check(type.name, type.description);
    if (isObjectType(type) || isInterfaceType(type)) {
      for (const field of Object.values(type.getFields())) {
        check(`${type.name}.${field.name}`, field.description);
        for (const arg of field.args) check(`${type.name}.${field.name}(${arg.name})`, arg.description);
      }
    } else if (isInputObjectType(type)) {
      for (const field of Object.values(type.getFields()))
        check(`${type.name}.${field.name}`, field.description);
    } else if (isEnumType(type)) {
      for (const value of type.getValues()) check(`${type.name}.${value.name}`, value.description);
    } else if (isUnionType(type)) {
      // Checked with the type itself above.
    }
  }
  return missing.sort();
}

describe('the schema', () => {
  it('describes every type, field, argument, enum value and input field', () => {
    expect(undocumented(createSchema({ strictQueries: false }))).toEqual([]);
  });
});
