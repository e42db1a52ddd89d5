import type { Logger } from 'pino';
import { z } from 'zod';
import { NotFoundError, QuotaExceededError, ValidationError } from '../../errors.js';
import type { PrismaClient } from '../../generated/prisma/client.js';
import { Batcher } from '../../lib/batcher.js';
import type { Clock } from '../../lib/clock.js';
import { claimingCountry, isKnownCountry } from '../../lib/phone.js';
import { timeZoneInput } from '../../lib/time-zone.js';
import { issue, parseInput } from '../../lib/validation.js';
import type { Metrics } from '../../metrics/metrics.js';
import type { ReservedSegments } from '../messages/message-rows.js';
import { type QuotaPeriod, secondsToPeriodEnd } from './quota-periods.js';
import { type QuotaRoomRow, quotaRooms } from './quota-room.js';

const segmentLimit = z.number().int().min(0).max(2_000_000_000).nullable();

/** What an operator sets; a field left out keeps its value, null removes a limit, [] allows every country. */
export const quotaLimitsInput = z.strictObject({
  dailySegments: segmentLimit.optional(),
  monthlySegments: segmentLimit.optional(),
  allowedCountries: z
    .array(z.string().refine(isKnownCountry, issue('invalid_value', 'ISO 3166 alpha-2 codes, e.g. GB,IE')))
    .max(300)
    .optional(),
  timezone: timeZoneInput
    .meta({
      description:
        'The time zone quota days and months are counted in; the account’s own when first left out',
    })
    .optional(),
});

/** An account's limits and what it used of them, as its settings show them. */
export interface QuotaView {
  limits: {
    dailySegments: number | null;
    monthlySegments: number | null;
    allowedCountries: string[];
    /** The zone of the quota days and months. */
    timezone: string;
  };
  usage: { todaySegments: number; monthSegments: number };
}

const THRESHOLDS = [80, 100] as const;

const BATCHING = { maxBatch: 100, maxInFlight: 2 };

export interface AccountQuotasOptions {
  prisma: PrismaClient;
  clock: Clock;
  metrics: Metrics;
  logger: Logger;
}

/**
 * Spend protection per account: the operator's segment limits and destination countries, the
 * account's usage in the time zone of its quotas, the refusals and the 80 % and 100 % notices. The
 * reservation itself is part of the statement that inserts messages (segment-reservation.ts).
 */
export class AccountQuotas {
  private readonly prisma: PrismaClient;
  private readonly clock: Clock;
  private readonly metrics: Metrics;
  private readonly logger: Logger;
  // Concurrent sends share one read of their accounts' countries.
  private readonly countries = new Batcher((ids: string[]) => this.readCountries(ids), BATCHING);

  constructor(options: AccountQuotasOptions) {
    ({ prisma: this.prisma, clock: this.clock, metrics: this.metrics, logger: this.logger } = options);
  }

  /**
   * The operator's change of an account's limits; answers them as they are now. An account
   * without its row (made before quotas existed) has no limits and every country until then.
   * The quota zone is fixed by the first change: the one named, else the account's own time zone
   * then. No change at all only reads them.
   */
  async setLimits(accountId: string, input: unknown): Promise<QuotaView['limits']> {
    const { timezone, ...data } = parseInput(quotaLimitsInput, input);
    const [row] = await quotaRooms(this.prisma, [accountId], this.clock.now());
    if (!row) throw new NotFoundError('Account');
    if (timezone === undefined && Object.values(data).every((value) => value === undefined))
      return (await this.view(accountId)).limits;
    await this.prisma.accountQuota.upsert({
      where: { accountId },
      create: { accountId, ...data, timezone: timezone ?? row.timezone },
      update: { ...data, timezone: timezone ?? row.timezone },
    });
    return (await this.view(accountId)).limits;
  }

  /** The account's limits and its usage of them now, in its quota zone. */
  async view(accountId: string): Promise<QuotaView> {
    const [row] = await quotaRooms(this.prisma, [accountId], this.clock.now());
    if (!row) throw new NotFoundError('Settings');
    return {
      limits: {
        dailySegments: row.daily_segments,
        monthlySegments: row.monthly_segments,
        allowedCountries: row.allowed_countries ?? [],
        timezone: row.timezone,
      },
      usage: { todaySegments: row.day_used, monthSegments: row.month_used },
    };
  }

  /** 422 `destination_not_allowed` on `to` for a number outside the account's allowed countries. */
  async assertDestinationAllowed(accountId: string, to: string): Promise<void> {
    const allowed = await this.countries.add(accountId);
    if (!isAllowedDestination(allowed, to))
      throw new ValidationError(
        [{ field: 'to', issue: 'destination_not_allowed' }],
        `The account may not send to ${claimingCountry(to) ?? 'a number no country’s numbering plan has'}`,
      );
  }

  /** The countries an account may send to; empty for every one. */
  async allowedCountries(accountId: string): Promise<string[]> {
    return this.countries.add(accountId);
  }

  /**
   * Where each account stands against its quotas now, in one statement: for the sends a
   * reservation refused, to tell which might still fit alone and why the others may not.
   */
  async standings(accountIds: readonly string[]): Promise<Map<string, QuotaStanding>> {
    const rows = await quotaRooms(this.prisma, accountIds, this.clock.now());
    return new Map(rows.map((row) => [row.account_id, standingOf(row)]));
  }

  /** Why a send of `segments` found no room: the period it would pass, and the seconds until that period ends. */
  refusalOf(standing: QuotaStanding | undefined, segments: number): QuotaExceededError {
    const now = this.clock.now();
    const timeZone = standing?.timeZone ?? 'UTC';
    const monthly = standing !== undefined && segments > standing.monthRoom;
    const period: QuotaPeriod = monthly ? 'monthly' : 'daily';
    this.metrics.quotaRefusals.inc({ source: 'send' });
    return new QuotaExceededError(secondsToPeriodEnd(now, timeZone, period), period);
  }

  async refusal(accountId: string, segments: number): Promise<QuotaExceededError> {
    return this.refusalOf((await this.standings([accountId])).get(accountId), segments);
  }

  /** A campaign batch found no room for its next message: the campaign pauses. */
  notePausedAtQuota(accountId: string, campaignId: string): void {
    this.metrics.quotaRefusals.inc({ source: 'campaign' });
    this.logger.warn({ account: accountId, campaign: campaignId }, 'campaign paused at its account’s quota');
  }

  /**
   * A metric and a log line for each account whose reservation just took it across 80 % or
   * 100 % of a quota. Call it once the reservation has committed: the notice is claimed on the
   * account's row, so that each threshold is told once per period across every process.
   */
  async noteReserved(reservations: ReadonlyMap<string, ReservedSegments>): Promise<void> {
    try {
      for (const [accountId, quota] of reservations) {
        await this.notePassed(accountId, 'daily', quota.day_segments, quota.daily_segments, quota.reserved);
        await this.notePassed(
          accountId,
          'monthly',
          quota.month_segments,
          quota.monthly_segments,
          quota.reserved,
        );
      }
    } catch (error) {
      // The sends are stored: a notice that cannot be claimed now must not fail them.
      this.logger.warn({ err: error }, 'could not record a quota notice');
    }
  }

  private async notePassed(
    accountId: string,
    period: QuotaPeriod,
    used: number,
    limit: number | null,
    reserved: number,
  ): Promise<void> {
    if (limit === null) return;
    for (const threshold of THRESHOLDS) {
      const mark = (limit * threshold) / 100;
      // Only a reservation that crossed the mark asks; the row says whether it was told already.
      if (used < mark || used - reserved >= mark) continue;
      if (!(await this.claimNotice(accountId, period, threshold))) continue;
      this.metrics.quotaThresholds.inc({ period, threshold: String(threshold) });
      this.logger.warn(
        { account: accountId, period, threshold, used, limit },
        `account passed ${threshold} % of its ${period} segments`,
      );
    }
  }

  /** True for the one caller that records the threshold as told for the account's current period. */
  private async claimNotice(accountId: string, period: QuotaPeriod, threshold: number): Promise<boolean> {
    const claimed =
      period === 'daily'
        ? await this.prisma.$executeRaw`
            UPDATE account_quotas SET noticed_day = day_start, noticed_day_threshold = ${threshold}
            WHERE account_id = ${accountId}
              AND (noticed_day IS DISTINCT FROM day_start OR noticed_day_threshold < ${threshold})`
        : await this.prisma.$executeRaw`
            UPDATE account_quotas SET noticed_month = month_start, noticed_month_threshold = ${threshold}
            WHERE account_id = ${accountId}
              AND (noticed_month IS DISTINCT FROM month_start OR noticed_month_threshold < ${threshold})`;
    return claimed > 0;
  }

  private async readCountries(ids: string[]): Promise<string[][]> {
    const rows = await this.prisma.accountQuota.findMany({
      where: { accountId: { in: ids } },
      select: { accountId: true, allowedCountries: true },
    });
    const byId = new Map(rows.map((row) => [row.accountId, row.allowedCountries]));
    return ids.map((id) => byId.get(id) ?? []);
  }
}

/** What an account may still send today and this month; Infinity without a limit. */
export interface QuotaStanding {
  timeZone: string;
  dayRoom: number;
  monthRoom: number;
}

function standingOf(row: QuotaRoomRow): QuotaStanding {
  return {
    timeZone: row.timezone,
    dayRoom: row.day_room ?? Number.POSITIVE_INFINITY,
    monthRoom: row.month_room ?? Number.POSITIVE_INFINITY,
  };
}

/**
 * Whether a number (E.164 digits) is in one of the allowed countries; an empty list allows all.
 * With a list, a number no country's numbering plan claims is in none of them.
 */
export function isAllowedDestination(allowed: readonly string[], to: string): boolean {
  if (allowed.length === 0) return true;
  const country = claimingCountry(to);
  return country !== null && allowed.includes(country);
}
