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

/** The upsert of the summed `counters` of `source` into `table`, keyed by `key`, in key order. */
function addTo(table: string, key: string, counters: string[], source: string): Prisma.Sql {
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

/** One row of `message_stats`'s counters for a message in `status`, signed by `sign`. */
export function messageStatsDelta(status: string, sign: 1 | -1): Prisma.Sql {
  const statusCounters = COUNTERS.slice(2).map(
    (name) => `CASE WHEN ${status}::text = '${name}' THEN ${sign} ELSE 0 END AS ${name}`,
  );
  return Prisma.raw([`${sign} AS messages`, `${sign} * segments AS segments`, ...statusCounters].join(', '));
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

/**
 * CTEs (to follow a WITH) that restate the statistics of the messages a status change moved, read
 * from the CTE `moved` (its old status and carrier as from_status and from_carrier): each leaves
 * its old status's counter, under its old carrier, for its new one; a delivery adds its time.
 */
export function countMoves(): Prisma.Sql {
  return Prisma.sql`
    ${addToMessageStats(Prisma.sql`
      SELECT account_id, ${statsBucket('created_at')} AS bucket, COALESCE(campaign_id, '') AS campaign_id,
        COALESCE(country, '') AS country, COALESCE(from_carrier, '') AS carrier, ${messageStatsDelta('from_status', -1)}
      FROM moved
      UNION ALL
      SELECT account_id, ${statsBucket('created_at')}, COALESCE(campaign_id, ''), COALESCE(country, ''),
        COALESCE(carrier, ''), ${messageStatsDelta('status', 1)}
      FROM moved`)},
    timed AS (${addToDeliveryTimes(Prisma.sql`
      SELECT account_id, ${statsBucket('created_at')} AS bucket, COALESCE(campaign_id, '') AS campaign_id,
        ${deliveryTimeBin('GREATEST(created_at, COALESCE(send_at, created_at))', 'at')} AS bin
      FROM moved WHERE status = 'delivered'`)})`;
}

/**
 * CTEs (to follow a WITH) that move the counters of messages pinned to a carrier before any status
 * change (CTE `pinned`: their status, old carrier as from_carrier and new one as carrier) from
 * the old carrier's key to the new one's, so a split by carrier stays equal to a count.
 */
export function countCarrierPins(): Prisma.Sql {
  return addToMessageStats(Prisma.sql`
      SELECT account_id, ${statsBucket('created_at')} AS bucket, COALESCE(campaign_id, '') AS campaign_id,
        COALESCE(country, '') AS country, COALESCE(from_carrier, '') AS carrier, ${messageStatsDelta('status', -1)}
      FROM pinned WHERE from_carrier IS DISTINCT FROM carrier
      UNION ALL
      SELECT account_id, ${statsBucket('created_at')}, COALESCE(campaign_id, ''), COALESCE(country, ''),
        COALESCE(carrier, ''), ${messageStatsDelta('status', 1)}
      FROM pinned WHERE from_carrier IS DISTINCT FROM carrier`);
}
