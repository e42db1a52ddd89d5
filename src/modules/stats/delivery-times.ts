import { Prisma, type PrismaClient } from '../../generated/prisma/client.js';
import type { Clock } from '../../lib/clock.js';
import { parseInput } from '../../lib/validation.js';
import { statsRangeInput, statsRangeOf } from './message-stats.js';
import { type StatsReads, statsReadCost } from './stats-reads.js';
import { DELIVERY_TIME_BINS_PER_UNIT, STATS_BUCKET_SECONDS } from './stats-rollups.js';

export interface DeliveryTimesAnswer {
  from: Date;
  to: Date;
  /** Delivered messages of the range that the percentiles are of. */
  delivered: number;
  p50: number | null;
  p90: number | null;
  p99: number | null;
}

const BUCKET_MS = STATS_BUCKET_SECONDS * 1000;

/**
 * Percentiles of the time from acceptance (or the send_at asked for) to the delivery report,
 * of the messages accepted in a range (widened to whole quarter-hours), read from the
 * histogram the status changes keep: each is the middle of its bin, within about 5%.
 */
export class DeliveryTimes {
  constructor(
    private readonly prisma: PrismaClient,
    private readonly clock: Clock,
    private readonly reads: StatsReads,
  ) {}

  async read(accountId: string, input: unknown): Promise<DeliveryTimesAnswer> {
    const query = await statsRangeOf(
      this.prisma,
      accountId,
      parseInput(statsRangeInput, input),
      this.clock.now(),
    );
    const from = new Date(Math.floor(query.from.getTime() / BUCKET_MS) * BUCKET_MS);
    const to = new Date(Math.ceil(query.to.getTime() / BUCKET_MS) * BUCKET_MS);
    // Sums come as numeric text from the statistics pool.
    const bins = await this.reads.run(accountId, statsReadCost(from, to, 0), (run) =>
      run<{ bin: number; messages: string }>(Prisma.sql`
        SELECT bin, sum(messages) AS messages FROM delivery_time_stats
        WHERE account_id = ${accountId} AND bucket >= ${from} AND bucket < ${to}
          ${query.campaign ? Prisma.sql`AND campaign_id = ${query.campaign}` : Prisma.empty}
        GROUP BY bin ORDER BY bin`),
    );
    const histogram = bins.map((row) => ({ bin: row.bin, messages: Number(row.messages) }));
    const delivered = histogram.reduce((sum, row) => sum + row.messages, 0);
    const at = (share: number) => percentile(histogram, delivered, share);
    return { from, to, delivered, p50: at(0.5), p90: at(0.9), p99: at(0.99) };
  }
}

/** The middle of the bin the given share of deliveries falls in, in seconds (one decimal); null without deliveries. */
function percentile(
  histogram: { bin: number; messages: number }[],
  total: number,
  share: number,
): number | null {
  if (total === 0) return null;
  const rank = Math.ceil(total * share);
  let seen = 0;
  const found = histogram.find((row) => {
    seen += row.messages;
    return seen >= rank;
  });
  if (!found) return null;
  const middle = Math.expm1((found.bin + 0.5) / DELIVERY_TIME_BINS_PER_UNIT);
  return Math.round(middle * 10) / 10;
}
