import type { z } from 'zod';
import type { PrismaClient } from '../../generated/prisma/client.js';
import type { Clock } from '../../lib/clock.js';
import { parseInput } from '../../lib/validation.js';
import { statsRangeInput, statsRangeOf } from '../stats/message-stats.js';

/** The countries one answer holds at most: more than the numbering plans there are. */
export const MAX_VERIFICATION_COUNTRIES = 300;

export const verificationStatsInput = statsRangeInput.pick({ from: true, to: true });

export interface VerificationCounts {
  started: number;
  approved: number;
  expired: number;
  /** approved / started; null when none started. */
  conversion: number | null;
}

export interface VerificationCountryCounts extends VerificationCounts {
  /** ISO 3166 alpha-2; null for numbers of no known country. */
  country: string | null;
}

export interface VerificationStatsAnswer extends VerificationCounts {
  from: Date;
  to: Date;
  countries: VerificationCountryCounts[];
}

interface CountryRow {
  country: string | null;
  started: number;
  approved: number;
  expired: number;
}

/**
 * Verifications started in a range, and how many of them were approved or expired, by the
 * country of their number. Conversion (approved of started) is the signal of traffic pumping:
 * real users enter their codes, numbers an attacker makes a site text do not.
 */
export class VerificationStats {
  constructor(
    private readonly prisma: PrismaClient,
    private readonly clock: Clock,
  ) {}

  async read(
    accountId: string,
    input: z.input<typeof verificationStatsInput>,
  ): Promise<VerificationStatsAnswer> {
    const now = this.clock.now();
    const { from, to } = await statsRangeOf(
      this.prisma,
      accountId,
      parseInput(verificationStatsInput, input),
      now,
    );
    const rows = await this.prisma.$queryRaw<CountryRow[]>`
      SELECT country, count(*)::int AS started,
        count(*) FILTER (WHERE status = 'approved')::int AS approved,
        count(*) FILTER (WHERE status = 'expired' OR (status = 'pending' AND expires_at <= ${now}))::int AS expired
      FROM verifications
      WHERE account_id = ${accountId} AND created_at >= ${from} AND created_at < ${to}
      GROUP BY country ORDER BY started DESC, country LIMIT ${MAX_VERIFICATION_COUNTRIES}`;
    const countries = rows.map((row) => ({ ...row, conversion: conversionOf(row) }));
    const total = {
      started: sum(rows, 'started'),
      approved: sum(rows, 'approved'),
      expired: sum(rows, 'expired'),
    };
    return { from, to, ...total, conversion: conversionOf(total), countries };
  }
}

function conversionOf({ started, approved }: { started: number; approved: number }): number | null {
  return started === 0 ? null : approved / started;
}

function sum(rows: CountryRow[], key: 'started' | 'approved' | 'expired'): number {
  return rows.reduce((total, row) => total + row[key], 0);
}
