import { readdirSync, readFileSync } from 'node:fs';
import { parse, visit } from 'graphql';
import { describe, expect, it } from 'vitest';

const OPERATIONS = new URL('../../schema/operations/', import.meta.url);

describe('the operations of schema/operations/ (the /v1 layer and the typed client)', () => {
  it('name every field of their results in snake_case, the root field included', () => {
    const camel: string[] = [];
    for (const file of readdirSync(OPERATIONS).filter((name) => name.endsWith('.graphql'))) {
      visit(parse(readFileSync(new URL(file, OPERATIONS), 'utf8')), {
        Field(field) {
          const key = field.alias?.value ?? field.name.value;
          if (key !== '__typename' && !/^[a-z][a-z0-9_]*$/.test(key)) camel.push(`${file}: ${key}`);
        },
      });
    }
    expect(camel).toEqual([]);
  });
});
