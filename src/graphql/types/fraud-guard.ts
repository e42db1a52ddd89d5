import { ValidationError } from '../../errors.js';
import {
  type CountryBlock,
  decisionsInput,
  type GuardDecisionCount,
  MAX_DECISION_ROWS,
} from '../../modules/fraud-guard/fraud-guard.js';
import { MAX_CAPPED_COUNTRIES } from '../../modules/fraud-guard/guard-rules.js';
import type { Builder } from '../builder.js';
import { argsFromZod } from '../zod-input.js';

/** The fraud guard's decisions of the caller's account, by day, rule and country (docs/security.md). */
export function addFraudGuardTypes(builder: Builder) {
  const row = builder.objectRef<GuardDecisionCount>('FraudDecisionCount').implement({
    description:
      'How many messages one rule of the fraud guard refused (or, in monitor mode, would have) in a day and country',
    fields: (t) => ({
      day: t.exposeString('day', { description: 'The UTC day, YYYY-MM-DD' }),
      rule: t.exposeString('rule', {
        description:
          'flood_identical, flood_number, velocity_range, country_hourly, country_daily or country_blocked',
      }),
      country: t.exposeString('country', {
        nullable: true,
        description: 'The ISO 3166 country of the numbers; null for numbers of no country’s plan',
      }),
      decision: t.exposeString('decision', {
        description: '`blocked`: refused; `monitored`: sent in monitor mode, would have been refused',
      }),
      count: t.exposeInt('count', { description: 'Messages' }),
    }),
  });
  const block = builder.objectRef<CountryBlock>('FraudCountryBlock').implement({
    description: 'A country the fraud guard refuses for the account until its cool-off ends',
    fields: (t) => ({
      country: t.exposeString('country', { description: 'ISO 3166' }),
      until: t.expose('until', { type: 'DateTime', description: 'When the block ends by itself' }),
    }),
  });
  const answer = builder
    .objectRef<{ accountId: string; rows: GuardDecisionCount[] }>('FraudDecisions')
    .implement({
      description: 'The fraud guard’s decisions of the account',
      fields: (t) => ({
        rows: t.field({
          type: [row],
          description: `Oldest first, by day, rule, country and decision (at most ${MAX_DECISION_ROWS})`,
          complexity: { field: MAX_DECISION_ROWS, multiplier: MAX_DECISION_ROWS },
          resolve: (decisions) => decisions.rows,
        }),
        blockedCountries: t.field({
          type: [block],
          description: 'The countries blocked for the account now, the soonest to end first',
          complexity: { field: MAX_CAPPED_COUNTRIES, multiplier: MAX_CAPPED_COUNTRIES },
          resolve: ({ accountId }, _args, { services }) => services.fraudGuard.blockedCountries(accountId),
        }),
      }),
    });
  builder.queryField('fraudDecisions', (t) =>
    t.withAuth({ account: true }).field({
      type: answer,
      description:
        'What the fraud guard refused of the account’s messages (or would have, in monitor mode), per UTC day, rule and country',
      errors: { types: [ValidationError] },
      args: argsFromZod(t.arg, decisionsInput),
      resolve: async (_root, args, { accountId, services }) => ({
        accountId,
        rows: await services.fraudGuard.decisions(accountId, args),
      }),
    }),
  );
}
