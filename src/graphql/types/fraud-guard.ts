import { FRAUD_RULES, ValidationError } from '../../errors.js';
import {
  type CountryBlock,
  decisionsInput,
  type GuardDecisionCount,
  type GuardDecisions,
  type GuardDecisionsReader,
  type GuardDecisionTotal,
  MAX_DECISION_COUNTRIES,
  MAX_DECISION_ROWS,
} from '../../modules/fraud-guard/fraud-guard.js';
import { MAX_CAPPED_COUNTRIES } from '../../modules/fraud-guard/guard-rules.js';
import type { Builder, BuilderTypes } from '../builder.js';
import { argsFromZod } from '../zod-input.js';

const RULE_DESCRIPTION =
  'flood_identical, flood_number, velocity_range, country_hourly, country_daily or country_blocked';
const COUNTRY_DESCRIPTION = 'The ISO 3166 country of the numbers; null for numbers of no country’s plan';

/** The fraud guard's decisions of the caller's account: totals by rule and country, rows by day (docs/security.md). */
export function addFraudGuardTypes(builder: Builder) {
  const row = builder.objectRef<GuardDecisionCount>('FraudDecisionCount').implement({
    description:
      'How many messages one rule of the fraud guard refused (or, in monitor mode, would have) in a day and country',
    fields: (t) => ({
      day: t.exposeString('day', { description: 'The UTC day, YYYY-MM-DD' }),
      rule: t.exposeString('rule', { description: RULE_DESCRIPTION }),
      country: t.exposeString('country', { nullable: true, description: COUNTRY_DESCRIPTION }),
      decision: t.exposeString('decision', {
        description: '`blocked`: refused; `monitored`: sent in monitor mode, would have been refused',
      }),
      count: t.exposeInt('count', { description: 'Messages' }),
    }),
  });
  const { ruleTotal, countryTotal } = addTotalTypes(builder);
  const block = builder.objectRef<CountryBlock>('FraudCountryBlock').implement({
    description: 'A country the fraud guard refuses for the account until its cool-off ends',
    fields: (t) => ({
      country: t.exposeString('country', { description: 'ISO 3166' }),
      until: t.expose('until', { type: 'DateTime', description: 'When the block ends by itself' }),
    }),
  });
  const answer = builder.objectRef<GuardDecisionsReader & { accountId: string }>('FraudDecisions').implement({
    description: 'The fraud guard’s decisions of the account',
    fields: (t) => ({
      rows: t.field({
        type: [row],
        description: `Newest day first, then by rule, country and decision: the newest ${MAX_DECISION_ROWS} rows at most (\`truncated\` says whether older ones were left out). Read totals from totalsByRule and totalsByCountry, not by adding these up`,
        complexity: { field: MAX_DECISION_ROWS, multiplier: MAX_DECISION_ROWS },
        resolve: async (decisions) => (await decisions.rows()).rows,
      }),
      truncated: t.boolean({
        description: `Whether the days hold more than ${MAX_DECISION_ROWS} rows, so that \`rows\` left out the oldest; the totals count them all`,
        resolve: async (decisions) => (await decisions.rows()).truncated,
      }),
      totalsByRule: t.field({
        type: [ruleTotal],
        description: 'Every decision of the days by rule, the most first',
        complexity: { field: FRAUD_RULES.length, multiplier: FRAUD_RULES.length },
        resolve: async (decisions) => (await decisions.totals()).totalsByRule,
      }),
      totalsByCountry: t.field({
        type: [countryTotal],
        description: 'Every decision of the days by country, the most first',
        complexity: { field: MAX_DECISION_COUNTRIES, multiplier: MAX_DECISION_COUNTRIES },
        resolve: async (decisions) => (await decisions.totals()).totalsByCountry,
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
        'What the fraud guard refused of the account’s messages (or would have, in monitor mode) over the last UTC days: in total by rule and by country, and per day, rule and country',
      errors: { types: [ValidationError] },
      args: argsFromZod(t.arg, decisionsInput),
      resolve: (_root, args, { accountId, services }) => ({
        accountId,
        ...services.fraudGuard.decisions(accountId, args),
      }),
    }),
  );
}

/** The totals of the days by one key, blocked and monitored side by side. */
function addTotalTypes(builder: Builder) {
  const counts = (t: PothosSchemaTypes.ObjectFieldBuilder<BuilderTypes, GuardDecisionTotal>) => ({
    blocked: t.exposeInt('blocked', { description: 'Messages refused' }),
    monitored: t.exposeInt('monitored', {
      description: 'Messages sent in monitor mode that would have been refused',
    }),
  });
  const ruleTotal = builder.objectRef<GuardDecisions['totalsByRule'][number]>('FraudRuleTotal').implement({
    description: 'How many messages one rule of the fraud guard refused (or would have) over the days',
    fields: (t) => ({ rule: t.exposeString('rule', { description: RULE_DESCRIPTION }), ...counts(t) }),
  });
  const countryTotal = builder
    .objectRef<GuardDecisions['totalsByCountry'][number]>('FraudCountryTotal')
    .implement({
      description: 'How many messages to one country the fraud guard refused (or would have) over the days',
      fields: (t) => ({
        country: t.exposeString('country', { nullable: true, description: COUNTRY_DESCRIPTION }),
        ...counts(t),
      }),
    });
  return { ruleTotal, countryTotal };
}
