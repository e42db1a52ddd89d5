import { z } from 'zod';
import { NotFoundError, ValidationError } from '../../errors.js';
import { Prisma, type PrismaClient } from '../../generated/prisma/client.js';
import type { Clock } from '../../lib/clock.js';
import { parseInput } from '../../lib/validation.js';
import { type StatsQuery, type StatsReads, statsReadCost } from './stats-reads.js';
import { SPLIT_DIMENSIONS } from './stats-settle.js';

export const MAX_STATS_DAYS = 400;
export const MAX_STATS_BUCKETS = 1000;
/** The most rows (buckets times groups) one answer holds. */
export const MAX_STATS_ROWS = 5000;
/** The most groups (rows of totals) one answer holds. */
export const MAX_STATS_GROUPS = 1000;
const DAY_MS = 86_400_000;
/** The range when a query names neither end: the week up to now. */
export const DEFAULT_STATS_DAYS = 7;

export const STATS_INTERVALS = ['HOUR', 'DAY'] as const;
export const STATS_GROUPS = ['STATUS', 'COUNTRY', 'CARRIER', 'CAMPAIGN'] as const;
export type StatsInterval = (typeof STATS_INTERVALS)[number];
export type StatsGroup = (typeof STATS_GROUPS)[number];

/**
 * An instant, as the `DateTime` scalar gives it (which takes ISO 8601 with an offset only); the
 * OpenAPI document says what a /v1 client writes.
 */
const instant = (description: string) => z.date().meta({ description, type: 'string', format: 'date-time' });

/** A range of acceptance times; `to` defaults to now and `from` to DEFAULT_STATS_DAYS before `to`. */
export const statsRangeInput = z.object({
  from: instant(
    `Start of the range: ISO 8601 with offset; ${DEFAULT_STATS_DAYS} days before \`to\` when left out`,
  ).nullish(),
  to: instant(
    `End of the range (exclusive): ISO 8601 with offset, after \`from\` and at most ${MAX_STATS_DAYS} days after it; now when left out`,
  ).nullish(),
  campaign: z.string().max(64).meta({ description: 'Only the messages of this campaign' }).nullish(),
});

export interface StatsRange {
  from: Date;
  to: Date;
  campaign: string | null;
}

/**
 * The range a query asks for, with its defaults; refused (422 range_too_long on `to`) unless `to`
 * is after `from` and at most MAX_STATS_DAYS later; NotFoundError when the campaign is not one of
 * the account's.
 */
export async function statsRangeOf(
  prisma: PrismaClient,
  accountId: string,
  query: z.output<typeof statsRangeInput>,
  now: Date,
): Promise<StatsRange> {
  const to = query.to ?? now;
  const from = query.from ?? new Date(to.getTime() - DEFAULT_STATS_DAYS * DAY_MS);
  if (to <= from || to.getTime() - from.getTime() > MAX_STATS_DAYS * DAY_MS)
    throw new ValidationError(
      [{ field: 'to', issue: 'range_too_long' }],
      `to must be after from and at most ${MAX_STATS_DAYS} days after it`,
    );
  const campaign = query.campaign ?? null;
  if (campaign) {
    const found = await prisma.campaign.findFirst({
      where: { id: campaign, accountId },
      select: { id: true },
    });
    if (!found) throw new NotFoundError('Campaign');
  }
  return { from, to, campaign };
}

export const messageStatsInput = statsRangeInput.safeExtend({
  interval: z.enum(STATS_INTERVALS).default('DAY').meta({ description: 'The length of a bucket' }),
  groupBy: z
    .array(z.enum(STATS_GROUPS))
    .max(STATS_GROUPS.length)
    // A group named twice splits as once: the statement names each column once.
    .transform((groups) => [...new Set(groups)])
    .nullish()
    .meta({ description: 'What to split each bucket and the totals by; a group named twice counts once' }),
});

export type MessageStatsQuery = Omit<z.output<typeof messageStatsInput>, 'from' | 'to' | 'campaign'> &
  StatsRange;

/** One bucket (or the range's totals, `start` null) of one group. */
export interface MessageStatsRow {
  start: Date | null;
  campaignId: string | null;
  country: string | null;
  carrier: string | null;
  messages: number;
  segments: number;
  delivered: number;
  failed: number;
  replies: number;
  optOuts: number;
  /** Messages still in each other status; null unless split by STATUS. */
  statuses: Record<'scheduled' | 'queued' | 'sent' | 'cancelled', number> | null;
}

export interface MessageStatsAnswer {
  from: Date;
  to: Date;
  timezone: string;
  interval: StatsInterval;
  buckets: MessageStatsRow[];
  totals: MessageStatsRow[];
}

export const STATUS_COUNTERS = ['scheduled', 'queued', 'sent', 'delivered', 'failed', 'cancelled'] as const;
const SUMMED = ['messages', 'segments', ...STATUS_COUNTERS, 'replies', 'opt_outs'] as const;
const GROUP_COLUMNS = { COUNTRY: 'country', CARRIER: 'carrier', CAMPAIGN: 'campaign_id' } as const;

// Sums come as numeric text from the statistics pool.
type StatsSqlRow = { start: Date | null; campaign_id?: string; country?: string; carrier?: string } & Record<
  (typeof SUMMED)[number],
  string
>;

interface BucketRange {
  timezone: string;
  from: Date;
  to: Date;
  buckets: number;
}

/**
 * An account's message statistics, read from the rollups the message statements keep (so a
 * query reads a few rows per quarter-hour, never the messages). A bucket is a local hour or day
 * of the account's time zone; the range is widened to whole buckets, and buckets without
 * messages, replies or opt-outs are left out.
 */
export class MessageStats {
  constructor(
    private readonly prisma: PrismaClient,
    /** Also the time a live update of the statistics tells of. */
    readonly clock: Clock,
    private readonly reads: StatsReads,
  ) {}

  async read(accountId: string, input: unknown): Promise<MessageStatsAnswer> {
    const parsed = parseInput(messageStatsInput, input);
    const range = await statsRangeOf(this.prisma, accountId, parsed, this.clock.now());
    const query: MessageStatsQuery = { ...parsed, ...range };
    const groups = query.groupBy ?? [];
    const cost = statsReadCost(range.from, range.to, groups.filter((group) => group !== 'STATUS').length);
    const { buckets, rows } = await this.reads.run(accountId, cost, async (run) => {
      const buckets = await bucketRange(run, accountId, query);
      if (buckets.buckets > MAX_STATS_BUCKETS)
        throw new ValidationError(
          [{ field: 'interval', issue: 'too_many_buckets' }],
          `The range holds ${buckets.buckets} buckets of an ${query.interval.toLowerCase()}; at most ${MAX_STATS_BUCKETS}`,
        );
      return { buckets, rows: await run<StatsSqlRow>(statsStatement(accountId, query, buckets)) };
    });
    // A group whose messages all moved to another key (their carrier became known) counts nothing now.
    const answer = rows
      .map((row) => rowOf(row, groups.includes('STATUS')))
      .filter((row) => groups.every((group) => group === 'STATUS') || !isEmpty(row));
    const rowsOfBuckets = answer.filter((row) => row.start !== null);
    const totals = answer.filter((row) => row.start === null);
    if (rowsOfBuckets.length > MAX_STATS_ROWS || totals.length > MAX_STATS_GROUPS)
      throw new ValidationError(
        [{ field: 'groupBy', issue: 'too_many_buckets' }],
        `The range split by ${groups.join(', ')} holds more than ${MAX_STATS_ROWS} rows or ${MAX_STATS_GROUPS} groups; split it by less or ask for a shorter range`,
      );
    return {
      from: buckets.from,
      to: buckets.to,
      timezone: buckets.timezone,
      interval: query.interval,
      buckets: rowsOfBuckets,
      totals,
    };
  }
}

/** The range widened to whole buckets of the account's time zone, and how many buckets it holds. */
async function bucketRange(
  run: StatsQuery,
  accountId: string,
  query: MessageStatsQuery,
): Promise<BucketRange> {
  const unit = query.interval === 'HOUR' ? 'hour' : 'day';
  const [range] = await run<BucketRange>(Prisma.sql`
      WITH zone AS (SELECT COALESCE((SELECT timezone FROM account_settings WHERE account_id = ${accountId}), 'UTC') AS timezone),
      local AS (
        SELECT timezone, date_trunc(${unit}, ${query.from}::timestamptz AT TIME ZONE timezone) AS first,
          date_trunc(${unit}, (${query.to}::timestamptz - interval '1 millisecond') AT TIME ZONE timezone) AS last
        FROM zone),
      bounds AS (
        SELECT timezone, first AT TIME ZONE timezone AS "from",
          (last + ${`1 ${unit}`}::interval) AT TIME ZONE timezone AS "to", first, last FROM local)
      SELECT timezone, "from", "to",
        CASE WHEN ${unit} = 'day' THEN (last::date - first::date) + 1
          ELSE ceil(extract(epoch FROM "to" - "from") / 3600) END::int AS buckets
      FROM bounds`);
  if (!range) throw new Error('the bucket range query answered no row');
  return range;
}

/**
 * The statement: one row per bucket and group, and one per group for the totals (GROUPING
 * SETS), summed from the quarter-hours of the range. An hour starts where the local clock reads
 * a whole hour (so the two 01:00 hours of a night the clocks go back are two buckets); a day at
 * the local midnight.
 */
function statsStatement(accountId: string, query: MessageStatsQuery, range: BucketRange): Prisma.Sql {
  const groups = (query.groupBy ?? []).flatMap((group) => (group === 'STATUS' ? [] : [GROUP_COLUMNS[group]]));
  const start =
    query.interval === 'HOUR'
      ? Prisma.sql`s.bucket - extract(minute FROM s.bucket AT TIME ZONE ${range.timezone}) * interval '1 minute'`
      : Prisma.sql`((s.bucket AT TIME ZONE ${range.timezone})::date)::timestamp AT TIME ZONE ${range.timezone}`;
  const groupList = Prisma.raw(groups.join(', '));
  const keys = groups.length > 0 ? Prisma.sql`, ${groupList}` : Prisma.empty;
  const totalsSet = groups.length > 0 ? Prisma.sql`(${groupList})` : Prisma.sql`()`;
  const sums = Prisma.raw(SUMMED.map((name) => `sum(s.${name}) AS ${name}`).join(', '));
  return Prisma.sql`
    SELECT start${keys}, ${Prisma.raw(SUMMED.map((name) => `sum(${name}) AS ${name}`).join(', '))}
    FROM (
      SELECT ${start} AS start${keys}, ${sums}
      FROM (${quarterHours(accountId, query, range)}) s
      GROUP BY 1${keys}) AS quarter
    GROUP BY GROUPING SETS ((start${keys}), ${totalsSet})
    ORDER BY start NULLS LAST${keys}`;
}

/**
 * The rows of the range's quarter-hours a query sums: the totals alone when it is neither split
 * nor narrowed to a campaign; else the rows still in `message_stats` (the last hours, and late
 * additions) with the settled ones, from the table of single keys when one key is all it needs.
 */
function quarterHours(accountId: string, query: MessageStatsQuery, range: BucketRange): Prisma.Sql {
  const groups = (query.groupBy ?? []).filter((group) => group !== 'STATUS');
  const inRange = Prisma.sql`account_id = ${accountId} AND bucket >= ${range.from} AND bucket < ${range.to}`;
  const counters = Prisma.raw(SUMMED.join(', '));
  if (groups.length === 0 && !query.campaign)
    return Prisma.sql`SELECT bucket, ${counters} FROM message_stat_totals WHERE ${inRange}`;
  const [only] = groups;
  const split = groups.length === 1 && only ? only : groups.length === 0 ? 'CAMPAIGN' : null;
  const campaign = (column: string) =>
    query.campaign ? Prisma.sql`AND ${Prisma.raw(column)} = ${query.campaign}` : Prisma.empty;
  if (split && (!query.campaign || split === 'CAMPAIGN')) {
    const column = Prisma.raw(GROUP_COLUMNS[split]);
    return Prisma.sql`
      SELECT bucket, value AS ${column}, ${counters} FROM settled_message_stat_splits
      WHERE ${inRange} AND dimension = ${SPLIT_DIMENSIONS[split]} ${campaign('value')}
      UNION ALL
      SELECT bucket, ${column}, ${counters} FROM message_stats WHERE ${inRange} ${campaign('campaign_id')}`;
  }
  const columns = Prisma.raw(`bucket, campaign_id, country, carrier, ${SUMMED.join(', ')}`);
  return Prisma.sql`
    SELECT ${columns} FROM settled_message_stats WHERE ${inRange} ${campaign('campaign_id')}
    UNION ALL
    SELECT ${columns} FROM message_stats WHERE ${inRange} ${campaign('campaign_id')}`;
}

function isEmpty(row: MessageStatsRow): boolean {
  return row.messages === 0 && row.replies === 0 && row.optOuts === 0;
}

function rowOf(row: StatsSqlRow, byStatus: boolean): MessageStatsRow {
  return {
    start: row.start,
    campaignId: row.campaign_id || null,
    country: row.country || null,
    carrier: row.carrier || null,
    messages: Number(row.messages),
    segments: Number(row.segments),
    delivered: Number(row.delivered),
    failed: Number(row.failed),
    replies: Number(row.replies),
    optOuts: Number(row.opt_outs),
    statuses: byStatus
      ? {
          scheduled: Number(row.scheduled),
          queued: Number(row.queued),
          sent: Number(row.sent),
          cancelled: Number(row.cancelled),
        }
      : null,
  };
}
