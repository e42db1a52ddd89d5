import type { PrismaClient } from '../../generated/prisma/client.js';
import type { Clock } from '../../lib/clock.js';
import { STATS_BUCKET_SECONDS } from './stats-rollups.js';

/** What a carrier took of the messages of the last hour, as the operator's list shows it. */
export interface CarrierActivity {
  handOvers: number;
  delivered: number;
  failed: number;
}

const HOUR_MS = 3_600_000;

/**
 * Each carrier's part of the messages accepted in the last hour, from the statistics rollups
 * (which the message statements keep equal to a count of the messages): how many went to it
 * (handed over, or left with it after a hand-over of unknown outcome), how many of those it
 * delivered and how many failed. The rollups count by quarter-hour of acceptance, so the hour
 * starts at the quarter-hour an hour ago began: 60 to 75 minutes. One statement over the
 * rollups' index by quarter-hour, whatever the number of accounts.
 */
export class CarrierActivityReport {
  constructor(
    private readonly prisma: PrismaClient,
    private readonly clock: Clock,
  ) {}

  async lastHour(): Promise<Map<string, CarrierActivity>> {
    const since = this.clock.now().getTime() - HOUR_MS;
    const from = new Date(since - (since % (STATS_BUCKET_SECONDS * 1000)));
    const rows = await this.prisma.$queryRaw<
      { carrier: string; hand_overs: number; delivered: number; failed: number }[]
    >`
      SELECT carrier, sum(messages)::int AS hand_overs, sum(delivered)::int AS delivered, sum(failed)::int AS failed
      FROM message_stats WHERE bucket >= ${from} AND carrier <> '' GROUP BY carrier`;
    return new Map(
      rows.map((row) => [
        row.carrier,
        { handOvers: row.hand_overs, delivered: row.delivered, failed: row.failed },
      ]),
    );
  }
}
