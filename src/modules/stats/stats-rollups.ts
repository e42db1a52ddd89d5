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

export const STATS_KEY = Prisma.raw('account_id, bucket, campaign_id, country, carrier');

const COUNTERS = ['messages', 'segments', 'scheduled', 'queued', 'sent', 'delivered', 'failed', 'cancelled'];

/** Adds the grouped rows of `source` (the key's columns and every counter) to `message_stats`. */
export function addToMessageStats(source: Prisma.Sql): Prisma.Sql {
  const columns = Prisma.raw(COUNTERS.join(', '));
  const sums = Prisma.raw(COUNTERS.map((name) => `sum(${name})`).join(', '));
  const updates = Prisma.raw(
    COUNTERS.map((name) => `${name} = message_stats.${name} + excluded.${name}`).join(', '),
  );
  return Prisma.sql`
    INSERT INTO message_stats (${STATS_KEY}, ${columns})
    SELECT ${STATS_KEY}, ${sums} FROM (${source}) AS delta
    GROUP BY ${STATS_KEY} ORDER BY ${STATS_KEY}
    ON CONFLICT (${STATS_KEY}) DO UPDATE SET ${updates}`;
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
    INSERT INTO message_stats (${STATS_KEY}, replies, opt_outs)
    SELECT account_id, ${statsBucket(Prisma.sql`${reply.at}::timestamptz`)}, COALESCE(campaign_id, ''),
      COALESCE(country, ''), COALESCE(carrier, ''), 1, ${reply.optedOut ? 1 : 0}
    FROM messages WHERE id = ${reply.messageId}
    ON CONFLICT (${STATS_KEY}) DO UPDATE SET replies = message_stats.replies + 1,
      opt_outs = message_stats.opt_outs + excluded.opt_outs`;
}
