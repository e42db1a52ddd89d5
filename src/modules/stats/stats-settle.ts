import type { Logger } from 'pino';
import { Prisma, type PrismaClient } from '../../generated/prisma/client.js';
import type { Clock } from '../../lib/clock.js';
import { addTo, STATS_BUCKET_SECONDS, STATS_COUNTERS } from './stats-rollups.js';

/**
 * How old a quarter-hour is before its rows settle: past the hour the operator's carrier list
 * reads from `message_stats` alone (CarrierActivityReport), and past most receipts.
 */
export const SETTLE_AFTER_MS = 2 * 60 * 60 * 1000;

/** Rows one statement moves at most: short transactions, short locks. */
export const SETTLE_BATCH = 5_000;

/** The keys a split by one of them reads from `settled_message_stat_splits`, by `dimension`. */
export const SPLIT_DIMENSIONS = { COUNTRY: 'country', CARRIER: 'carrier', CAMPAIGN: 'campaign' } as const;

const KEY = 'account_id, bucket, campaign_id, country, carrier';
const SPLIT_KEY = 'account_id, dimension, bucket, value';

/**
 * One batch: rows of `message_stats` older than the cutoff, each moved (its slot summed away)
 * into `settled_message_stats` and, once for each key alone, into `settled_message_stat_splits`.
 * Rows a statement is adding to are skipped (SKIP LOCKED), and nothing but the settler writes the
 * settled tables, so a settle never waits on the traffic and never deadlocks with it; a statement
 * that adds to a row just moved adds a new row, which the next run moves.
 */
export function settleBatch(cutoff: Date, batch: number): Prisma.Sql {
  const counters = STATS_COUNTERS.join(', ');
  return Prisma.sql`
    WITH moved AS (
      DELETE FROM message_stats WHERE (${Prisma.raw(KEY)}, slot) IN (
        SELECT ${Prisma.raw(KEY)}, slot FROM message_stats WHERE bucket < ${cutoff}
        LIMIT ${batch} FOR UPDATE SKIP LOCKED)
      RETURNING ${Prisma.raw(`${KEY}, ${counters}`)}),
    keyed AS (${addTo('settled_message_stats', KEY, STATS_COUNTERS, 'moved')}),
    split AS (${addTo(
      'settled_message_stat_splits',
      SPLIT_KEY,
      STATS_COUNTERS,
      `(SELECT moved.*, dimension, value FROM moved CROSS JOIN LATERAL (VALUES
          ('${SPLIT_DIMENSIONS.COUNTRY}', country), ('${SPLIT_DIMENSIONS.CARRIER}', carrier), ('${SPLIT_DIMENSIONS.CAMPAIGN}', campaign_id))
          AS keys (dimension, value)) AS splits`,
    )})
    SELECT count(*)::int AS moved FROM moved`;
}

/**
 * Moves the statistics of quarter-hours older than SETTLE_AFTER_MS out of `message_stats`, whose
 * rows are spread over slots so that concurrent statements do not wait on each other, into tables
 * with one row per key (and per key alone, for splits): a 30-day split by country then reads a
 * row per quarter-hour and country rather than one per slot and combination of keys.
 */
export class StatsSettler {
  constructor(
    private readonly prisma: PrismaClient,
    private readonly clock: Clock,
    private readonly logger: Logger,
  ) {}

  /** Settles every row due, batch by batch; `cancelled` is asked between batches. */
  async settle(cancelled: () => boolean = () => false, batch = SETTLE_BATCH): Promise<number> {
    const now = this.clock.now().getTime() - SETTLE_AFTER_MS;
    const cutoff = new Date(now - (now % (STATS_BUCKET_SECONDS * 1000)));
    let total = 0;
    for (;;) {
      if (cancelled()) break;
      const [{ moved }] = await this.prisma.$queryRaw<[{ moved: number }]>(settleBatch(cutoff, batch));
      total += moved;
      if (moved < batch) break;
    }
    if (total > 0) this.logger.info({ cutoff, rows: total }, 'statistics settled');
    return total;
  }
}
