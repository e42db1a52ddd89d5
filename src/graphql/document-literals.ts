import { type DocumentNode, Kind, type ValueNode, visit } from 'graphql';
import { isUnstorableText } from '../lib/validation.js';

/**
 * The path of every string written into a document that isUnstorableText, as
 * unstorableTextPaths gives it for variables: an argument's name, then the fields (or list
 * positions) down to the string (`contact(id: "\u0000")` is `id`, `createTemplate(input: { name:
 * "a\u0000b" })` is `input.name`), and for a variable's default value the variable's name. The
 * parser refuses a NUL character in a document, but reads the escape `\u0000` into one.
 * Iterative: a document can nest its values as deep as its tokens allow.
 */
export function unstorableLiteralPaths(document: DocumentNode): string[][] {
  const found: string[][] = [];
  visit(document, {
    Argument: (node) => {
      found.push(...unstorableValuePaths(node.value, [node.name.value]));
    },
    VariableDefinition: (node) => {
      if (node.defaultValue)
        found.push(...unstorableValuePaths(node.defaultValue, [node.variable.name.value]));
    },
  });
  return found;
}

function unstorableValuePaths(value: ValueNode, path: string[]): string[][] {
  const found: string[][] = [];
  const pending = [{ value, path }];
  while (pending.length > 0) {
    const { value: current, path: at } = pending.pop()!;
    if (current.kind === Kind.STRING && isUnstorableText(current.value)) found.push(at);
    pending.push(...innerValues(current, at));
  }
  return found;
}

/** The values a list or an object literal holds, each with its path. */
function innerValues(value: ValueNode, path: string[]): { value: ValueNode; path: string[] }[] {
  if (value.kind === Kind.LIST)
    return value.values.map((item, index) => ({ value: item, path: [...path, String(index)] }));
  if (value.kind === Kind.OBJECT)
    return value.fields.map((field) => ({ value: field.value, path: [...path, field.name.value] }));
  return [];
}
