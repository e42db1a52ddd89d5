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
  const inspect = (value: ValueNode, path: string[]) => {
    const pending = [{ value, path }];
    while (pending.length > 0) {
      const { value: current, path: at } = pending.pop()!;
      if (current.kind === Kind.STRING) {
        if (isUnstorableText(current.value)) found.push(at);
      } else if (current.kind === Kind.LIST) {
        current.values.forEach((item, index) => {
          pending.push({ value: item, path: [...at, String(index)] });
        });
      } else if (current.kind === Kind.OBJECT) {
        for (const field of current.fields)
          pending.push({ value: field.value, path: [...at, field.name.value] });
      }
    }
  };
  visit(document, {
    Argument: (node) => inspect(node.value, [node.name.value]),
    VariableDefinition: (node) => {
      if (node.defaultValue) inspect(node.defaultValue, [node.variable.name.value]);
    },
  });
  return found;
}
