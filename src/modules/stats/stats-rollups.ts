import type { SqlRelation } from '../../db/sql-relation.js';
import { Prisma } from '../../generated/prisma/client.js';

/**
 * The SQL pieces every statement that keeps the statistics shares (see `message_stats` and
 * `delivery_time_stats` in prisma/schema.prisma). Rows are added to in key order, so that two
 * statements touching the same rows wait for each other rather than deadlock.
 */

/** Every time zone in use is offset from UTC by whole quarter-hours, so its hours and days are sums of these. */
export const STATS_BUCKET_SECONDS = 900;

/** The quarter-hour (UTC) an instant falls in. */
export function statsBucket(instant: string | Prisma.Sql): Prisma.Sql {
  const at = typeof instant === 'string' ? Prisma.raw(instant) : instant;
  const seconds = Prisma.raw(String(STATS_BUCKET_SECONDS));
  return Prisma.sql`to_timestamp(floor(extract(epoch FROM ${at}) / ${seconds}) * ${seconds})`;
}

/** Bins per unit of ln(1 + seconds): a bin is about 5% wide at any scale. */
export const DELIVERY_TIME_BINS_PER_UNIT = 20;

/** The histogram bin of a delivery that took from `from` to `to`. */
export function deliveryTimeBin(from: string, to: string): Prisma.Sql {
  return Prisma.raw(
    `floor(${DELIVERY_TIME_BINS_PER_UNIT} * ln(1 + greatest(0, extract(epoch FROM ${to} - ${from}))))::smallint`,
  );
}

/**
 * The row of a counter a statement adds to, of STATS_SLOTS: its connection's, so that two
 * statements of one account at once (each on its own connection) mostly add to different rows and
 * neither waits for the other's commit. Queries sum every slot.
 */
const STATS_SLOTS = 4;
const STATS_SLOT = Prisma.raw(`(pg_backend_pid() % ${STATS_SLOTS})::smallint`);

const COUNTERS = ['messages', 'segments', 'scheduled', 'queued', 'sent', 'delivered', 'failed', 'cancelled'];
const REPLY_COUNTERS = ['replies', 'opt_outs'];
/** Every counter a row of the statistics holds. */
export const STATS_COUNTERS = [...COUNTERS, ...REPLY_COUNTERS];

/** The upsert of the summed `counters` of `source` into `table`, keyed by `key`, in key order. */
export function addTo(table: string, key: string, counters: string[], source: string): Prisma.Sql {
  const sums = counters.map((name) => `sum(${name})`).join(', ');
  const updates = counters.map((name) => `${name} = ${table}.${name} + excluded.${name}`).join(', ');
  return Prisma.raw(`
    INSERT INTO ${table} (${key}, ${counters.join(', ')})
    SELECT ${key}, ${sums} FROM ${source} GROUP BY ${key} ORDER BY ${key}
    ON CONFLICT (${key}) DO UPDATE SET ${updates}`);
}

/**
 * CTEs (to follow a WITH) that add the rows of `source` (the key's columns and every counter of
 * a message) to `message_stats` and to `message_stat_totals`.
 */
export function addToMessageStats(source: Prisma.Sql, counters = COUNTERS): Prisma.Sql {
  return Prisma.sql`
    stats_delta AS (SELECT *, ${STATS_SLOT} AS slot FROM (${source}) AS source),
    stats_keyed AS (${addTo('message_stats', 'account_id, bucket, campaign_id, country, carrier, slot', counters, 'stats_delta')}),
    stats_totals AS (${addTo('message_stat_totals', 'account_id, bucket, slot', counters, 'stats_delta')})`;
}

/**
 * One row of `message_stats`'s counters for a message in the column `status` with the column
 * `segments` (each a column reference), signed by `sign`.
 */
export function messageStatsDelta(status: string, segments: string, sign: 1 | -1): Prisma.Sql {
  const statusCounters = COUNTERS.slice(2).map(
    (name) => `CASE WHEN ${status}::text = '${name}' THEN ${sign} ELSE 0 END AS ${name}`,
  );
  return Prisma.raw(
    [`${sign} AS messages`, `${sign} * ${segments} AS segments`, ...statusCounters].join(', '),
  );
}

/** The columns a message's statistics are keyed by. */
export type StatsKeyColumns = 'account_id' | 'created_at' | 'campaign_id' | 'country';

/** The key of `message_stats` (account_id, bucket, campaign_id, country, carrier) of a message of `row`, under `carrier`. */
export function messageStatsKey(row: SqlRelation<StatsKeyColumns>['column'], carrier: string): Prisma.Sql {
  return Prisma.sql`${Prisma.raw(row.account_id)} AS account_id, ${statsBucket(row.created_at)} AS bucket,
    COALESCE(${Prisma.raw(row.campaign_id)}, '') AS campaign_id, COALESCE(${Prisma.raw(row.country)}, '') AS country,
    ${Prisma.raw(carrier)} AS carrier`;
}

/** Adds one delivery per row of `source` (account_id, bucket, campaign_id, bin) to `delivery_time_stats`. */
export function addToDeliveryTimes(source: Prisma.Sql): Prisma.Sql {
  return Prisma.sql`
    INSERT INTO delivery_time_stats (account_id, bucket, campaign_id, bin, messages)
    SELECT account_id, bucket, campaign_id, bin, count(*) FROM (${source}) AS delivered
    GROUP BY account_id, bucket, campaign_id, bin ORDER BY account_id, bucket, campaign_id, bin
    ON CONFLICT (account_id, bucket, campaign_id, bin) DO UPDATE SET messages = delivery_time_stats.messages + excluded.messages`;
}

/**
 * Counts a reply (and the opt-out it made, if it made one) under the keys of the message it
 * answers, in the quarter-hour it arrived: run in the transaction that stores the reply.
 */
export async function countReply(
  tx: Pick<Prisma.TransactionClient, '$executeRaw'>,
  reply: { messageId: string; at: Date; optedOut: boolean },
): Promise<void> {
  await tx.$executeRaw`
    WITH ${addToMessageStats(
      Prisma.sql`
      SELECT account_id, ${statsBucket(Prisma.sql`${reply.at}::timestamptz`)} AS bucket, COALESCE(campaign_id, '') AS campaign_id,
        COALESCE(country, '') AS country, COALESCE(carrier, '') AS carrier, 1 AS replies, ${reply.optedOut ? 1 : 0}::int AS opt_outs
      FROM messages WHERE id = ${reply.messageId}`,
      REPLY_COUNTERS,
    )}
    SELECT 1`;
}

/** The columns of the messages a status change moved that countMoves reads. */
export type MovedColumns =
  | StatsKeyColumns
  | 'carrier'
  | 'from_carrier'
  | 'status'
  | 'from_status'
  | 'segments'
  | 'send_at'
  | 'at';

/**
 * CTEs (to follow a WITH) that restate the statistics of the messages a status change moved, read
 * from `moved` (with their old status and carrier as from_status and from_carrier): each leaves
 * its old status's counter, under its old carrier, for its new one; a delivery adds its time.
 */
export function countMoves(moved: SqlRelation<MovedColumns>): Prisma.Sql {
  const m = moved.column;
  return Prisma.sql`
    ${addToMessageStats(Prisma.sql`
      SELECT ${messageStatsKey(m, `COALESCE(${m.from_carrier}, '')`)}, ${messageStatsDelta(m.from_status, m.segments, -1)}
      FROM ${moved.name}
      UNION ALL
      SELECT ${messageStatsKey(m, `COALESCE(${m.carrier}, '')`)}, ${messageStatsDelta(m.status, m.segments, 1)}
      FROM ${moved.name}`)},
    timed AS (${addToDeliveryTimes(Prisma.sql`
      SELECT ${Prisma.raw(m.account_id)} AS account_id, ${statsBucket(m.created_at)} AS bucket,
        COALESCE(${Prisma.raw(m.campaign_id)}, '') AS campaign_id,
        ${deliveryTimeBin(`GREATEST(${m.created_at}, COALESCE(${m.send_at}, ${m.created_at}))`, m.at)} AS bin
      FROM ${moved.name} WHERE ${Prisma.raw(m.status)} = 'delivered'`)})`;
}

/** The columns of the messages pinned to a carrier that countCarrierPins reads. */
export type PinnedColumns = StatsKeyColumns | 'carrier' | 'from_carrier' | 'status' | 'segments';

/**
 * CTEs (to follow a WITH) that move the counters of messages pinned to a carrier before any status
 * change (`pinned`: their status, old carrier as from_carrier and new one as carrier) from
 * the old carrier's key to the new one's, so a split by carrier stays equal to a count.
 */
export function countCarrierPins(pinned: SqlRelation<PinnedColumns>): Prisma.Sql {
  const p = pinned.column;
  const repinned = Prisma.raw(`${p.from_carrier} IS DISTINCT FROM ${p.carrier}`);
  return addToMessageStats(Prisma.sql`
      SELECT ${messageStatsKey(p, `COALESCE(${p.from_carrier}, '')`)}, ${messageStatsDelta(p.status, p.segments, -1)}
      FROM ${pinned.name} WHERE ${repinned}
      UNION ALL
      SELECT ${messageStatsKey(p, `COALESCE(${p.carrier}, '')`)}, ${messageStatsDelta(p.status, p.segments, 1)}
      FROM ${pinned.name} WHERE ${repinned}`);
}
