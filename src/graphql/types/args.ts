import type { ArgBuilder, InputObjectRef, SchemaTypes } from '@pothos/core';

/** A mutation's `input`: one required input object, whose own type describes each field. */
export function inputArg<Types extends SchemaTypes, Shape>(
  arg: ArgBuilder<Types>,
  type: InputObjectRef<Types, Shape>,
) {
  return arg({ description: 'The fields, each described on its input type', type, required: true });
}

/** The id of the item the field reads or changes, within the caller's account. */
export function idArg<Types extends SchemaTypes>(arg: ArgBuilder<Types>) {
  return arg.id({ required: true, description: 'Its id' });
}

/** A GraphQL enum's values from a module's table of what each value means. */
export function meaningsAsValues<Value extends string>(meanings: Readonly<Record<Value, string>>) {
  return Object.fromEntries(
    Object.entries<string>(meanings).map(([value, description]) => [value, { description }]),
  ) as Record<Value, { description: string }>;
}
