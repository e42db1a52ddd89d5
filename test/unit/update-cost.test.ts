import { parse } from 'graphql';
import { describe, expect, it } from 'vitest';
import { MAX_UPDATE_COST, updateCost } from '../../src/graphql/query-cost.js';
import { createSchema } from '../../src/graphql/schema.js';

const schema = createSchema({ strictQueries: true });
const cost = (subscription: string, variables?: Record<string, unknown>) =>
  updateCost(schema, parse(subscription), variables);

// The numbers docs/graphql.md and docs/security.md give.
describe('what an update of a subscription costs', () => {
  it('is 10, plus each field of its answer, plus 100 for each list it reads', () => {
    expect(cost('subscription { messageUpdated { kind status message { id status deliveredAt } } }')).toBe(
      17,
    );
    expect(
      cost(
        'subscription { messageUpdated { kind status message { id status deliveredAt replies(perPage: 5) { from } } } }',
      ),
    ).toBe(17 + 105 + 5);
    expect(
      cost('subscription ($n: Int) { campaignUpdated(id: "c") { messages(perPage: $n) { id } } }', {
        n: 7,
      }),
    ).toBe(10 + 1 + (7 + 100) + 7 * 1);
  });

  it('puts the selection of the report of 20 streams and 114 s of CPU far above what one update may cost', () => {
    const aliases = Array.from(
      { length: 30 },
      (_, index) => `a${index}: message { id replies(perPage: 100) { id } }`,
    );
    expect(cost(`subscription { messageUpdated { ${aliases.join(' ')} } }`)).toBe(
      10 + 1 + 30 * (1 + 1 + 200 + 100),
    );
    expect(MAX_UPDATE_COST).toBe(1_000);
  });
});
