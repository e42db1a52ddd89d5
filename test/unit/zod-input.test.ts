import { type GraphQLInputObjectType, isNonNullType } from 'graphql';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createBuilder } from '../../src/graphql/builder.js';
import { createSchema } from '../../src/graphql/schema.js';
import { inputTypeFromZod } from '../../src/graphql/zod-input.js';
import { MAX_PER_PAGE } from '../../src/lib/pagination.js';
import { MAX_MESSAGE_CHARACTERS } from '../../src/modules/messages/message-text.js';

const schema = createSchema({ strictQueries: false });

function inputField(type: string, field: string) {
  return (schema.getType(type) as GraphQLInputObjectType).getFields()[field]!;
}

describe('input types made from the zod schemas the services parse with', () => {
  it('state the limits the services enforce, from the constants that enforce them', () => {
    expect(inputField('SendMessageInput', 'message').description).toBe(
      `The text to send (1..${MAX_MESSAGE_CHARACTERS} characters)`,
    );
    const perPage = schema
      .getQueryType()!
      .getFields()
      .messages!.args.find((arg) => arg.name === 'perPage')!;
    expect(perPage.description).toContain(`1..${MAX_PER_PAGE}`);
    expect(inputField('AddContactInput', 'tags').description).toContain(
      'up to 20 items, each 1..50 characters',
    );
  });

  it('require exactly the fields the service requires', () => {
    expect(isNonNullType(inputField('CreateCampaignInput', 'name').type)).toBe(true);
    expect(isNonNullType(inputField('UpdateCampaignInput', 'name').type)).toBe(false);
    expect(isNonNullType(inputField('SendMessageInput', 'to').type)).toBe(true);
    expect(isNonNullType(inputField('SendMessageInput', 'campaign').type)).toBe(false);
  });

  it('refuse to build an input whose field says nothing about itself', () => {
    const builder = createBuilder({ strictQueries: false });
    const bare = z.object({ note: z.string() }).meta({ description: 'A note' });
    expect(() => {
      inputTypeFromZod(builder, 'NoteInput', bare);
      builder.queryType({ fields: (t) => ({ ok: t.boolean({ resolve: () => true }) }) });
      builder.toSchema();
    }).toThrow(/NoteInput\.note: its zod schema needs a description/);
  });

  it('refuse an enum without the GraphQL enum that describes its values', () => {
    const builder = createBuilder({ strictQueries: false });
    const kinds = z
      .object({ kind: z.enum(['a', 'b']).meta({ description: 'A kind' }) })
      .meta({ description: 'K' });
    expect(() => {
      inputTypeFromZod(builder, 'KindInput', kinds);
      builder.queryType({ fields: (t) => ({ ok: t.boolean({ resolve: () => true }) }) });
      builder.toSchema();
    }).toThrow(/KindInput\.kind: an enum needs its GraphQL enum type/);
  });
});
