import { NotFoundError, ValidationError } from '../../errors.js';
import type { DeliveryTimesAnswer } from '../../modules/stats/delivery-times.js';
import {
  MAX_STATS_GROUPS,
  MAX_STATS_ROWS,
  type MessageStatsAnswer,
  type MessageStatsRow,
  messageStatsInput,
  statsRangeInput,
} from '../../modules/stats/message-stats.js';
import type { Builder } from '../builder.js';
import { argsFromZod } from '../zod-input.js';

const INTERVAL_MEANINGS = {
  HOUR: "An hour of the account's time zone, starting where its clock reads a whole hour",
  DAY: "A day of the account's time zone, from its midnight",
} as const;

const GROUP_MEANINGS = {
  STATUS: 'Add the messages still scheduled, queued, sent, or cancelled to each row',
  COUNTRY: "One row per recipient's country",
  CARRIER: 'One row per carrier that took the messages (null: not handed over yet)',
  CAMPAIGN: 'One row per campaign (null: single sends)',
} as const;

const meanings = (table: Record<string, string>) =>
  Object.fromEntries(Object.entries(table).map(([value, description]) => [value, { description }]));

export function addStatsTypes(builder: Builder) {
  const interval = builder.enumType('StatsInterval', {
    description: 'The length of a statistics bucket',
    values: meanings(INTERVAL_MEANINGS) as Record<keyof typeof INTERVAL_MEANINGS, { description: string }>,
  });
  const group = builder.enumType('StatsGroup', {
    description: 'What statistics are split by',
    values: meanings(GROUP_MEANINGS) as Record<keyof typeof GROUP_MEANINGS, { description: string }>,
  });
  const row = addStatsRow(builder);
  addMessageStatsField(builder, { interval, group, row });
  addDeliveryTimesField(builder);
}

function addStatsRow(builder: Builder) {
  const count = (description: string) => ({ description });
  return builder.objectRef<MessageStatsRow>('MessageStatsRow').implement({
    description: 'The numbers of one bucket (or of the whole range) and one group',
    fields: (t) => ({
      start: t.expose('start', {
        type: 'DateTime',
        nullable: true,
        description: 'When the bucket starts; null in totals',
      }),
      campaignId: t.exposeID('campaignId', {
        nullable: true,
        description: 'Split by CAMPAIGN: its campaign',
      }),
      country: t.exposeString('country', {
        nullable: true,
        description: 'Split by COUNTRY: the ISO 3166 country of the recipients; null when unknown',
      }),
      carrier: t.exposeString('carrier', { nullable: true, description: 'Split by CARRIER: the carrier' }),
      messages: t.exposeInt('messages', count('Messages accepted')),
      segments: t.exposeInt('segments', count('SMS parts of those messages')),
      delivered: t.exposeInt('delivered', count('Of those, delivered')),
      failed: t.exposeInt('failed', count('Of those, failed')),
      replies: t.exposeInt('replies', count('Replies received in the bucket, to messages of the group')),
      optOuts: t.exposeInt('optOuts', count('Numbers that opted out by a reply received in the bucket')),
      scheduled: t.int({
        nullable: true,
        description: 'Split by STATUS: still scheduled',
        resolve: (r) => r.statuses?.scheduled,
      }),
      queued: t.int({
        nullable: true,
        description: 'Split by STATUS: still queued',
        resolve: (r) => r.statuses?.queued,
      }),
      sent: t.int({
        nullable: true,
        description: 'Split by STATUS: sent, no report yet',
        resolve: (r) => r.statuses?.sent,
      }),
      cancelled: t.int({
        nullable: true,
        description: 'Split by STATUS: cancelled',
        resolve: (r) => r.statuses?.cancelled,
      }),
    }),
  });
}

function addMessageStatsField(
  builder: Builder,
  refs: {
    interval: ReturnType<Builder['enumType']>;
    group: ReturnType<Builder['enumType']>;
    row: ReturnType<typeof addStatsRow>;
  },
) {
  const stats = builder.objectRef<MessageStatsAnswer>('MessageStats').implement({
    description: "An account's message statistics over a range, in buckets of its time zone",
    fields: (t) => ({
      from: t.expose('from', {
        type: 'DateTime',
        description: 'The range asked for, widened to whole buckets',
      }),
      to: t.expose('to', { type: 'DateTime', description: 'Its end (exclusive)' }),
      timezone: t.exposeString('timezone', { description: "The account's time zone the buckets are of" }),
      interval: t.field({
        type: refs.interval,
        description: 'The length of a bucket',
        resolve: (s) => s.interval,
      }),
      buckets: t.field({
        type: [refs.row],
        description: `Oldest first, one row per bucket and group; buckets without numbers are left out (at most ${MAX_STATS_ROWS})`,
        complexity: { field: MAX_STATS_ROWS, multiplier: MAX_STATS_ROWS },
        resolve: (s) => s.buckets,
      }),
      totals: t.field({
        type: [refs.row],
        description: `The whole range: one row per group, one row when not split (at most ${MAX_STATS_GROUPS})`,
        complexity: { field: MAX_STATS_GROUPS, multiplier: MAX_STATS_GROUPS },
        resolve: (s) => s.totals,
      }),
    }),
  });
  builder.queryField('messageStats', (t) =>
    t.withAuth({ account: true }).field({
      type: stats,
      description:
        'Messages accepted in a range, per hour or day of the account’s time zone: at most 1,000 buckets and 400 days',
      errors: { types: [ValidationError, NotFoundError] },
      args: argsFromZod(t.arg, messageStatsInput, {
        from: 'DateTime',
        to: 'DateTime',
        interval: refs.interval,
        groupBy: [refs.group],
        campaign: 'ID',
      }),
      resolve: (_root, args, { accountId, services }) => services.messageStats.read(accountId, args),
    }),
  );
}

function addDeliveryTimesField(builder: Builder) {
  const times = builder.objectRef<DeliveryTimesAnswer>('DeliveryTimes').implement({
    description: 'How long delivered messages took, from acceptance (or their sendAt) to the delivery report',
    fields: (t) => ({
      from: t.expose('from', { type: 'DateTime', description: 'The range, widened to whole quarter-hours' }),
      to: t.expose('to', { type: 'DateTime', description: 'Its end (exclusive)' }),
      delivered: t.exposeInt('delivered', { description: 'Delivered messages accepted in the range' }),
      p50: t.exposeFloat('p50', { nullable: true, description: 'Median, in seconds (within about 5%)' }),
      p90: t.exposeFloat('p90', { nullable: true, description: '90th percentile, in seconds' }),
      p99: t.exposeFloat('p99', { nullable: true, description: '99th percentile, in seconds' }),
    }),
  });
  builder.queryField('deliveryTimes', (t) =>
    t.withAuth({ account: true }).field({
      type: times,
      description: 'Delivery time percentiles of the messages accepted in a range (at most 400 days)',
      errors: { types: [ValidationError, NotFoundError] },
      args: argsFromZod(t.arg, statsRangeInput, { from: 'DateTime', to: 'DateTime', campaign: 'ID' }),
      resolve: (_root, args, { accountId, services }) => services.deliveryTimes.read(accountId, args),
    }),
  );
}
