import { Prisma } from '../../generated/prisma/client.js';

// The one definition of an account's quota room: the zone its days and months are read in, the
// counts of the day and month an instant falls in, and what is left of each limit. The
// reservation (segment-reservation.ts), the campaign's batch (campaign-quota.ts) and the
// settings' usage (account-quotas.ts) all read it from here.

/**
 * The time zone an account's quotas count days and months in: the one fixed with its limits,
 * else (no limit was ever set) the account's own. A change of the account's settings never moves it.
 */
export function quotaZoneOf(accountId: Prisma.Sql): Prisma.Sql {
  return Prisma.sql`COALESCE(
    (SELECT timezone FROM account_quotas WHERE account_id = ${accountId}),
    (SELECT timezone FROM account_settings WHERE account_id = ${accountId}), 'UTC')`;
}

/** The local date of the instant `at` in the account's quota zone: the day a reservation at `at` counts in. */
export function quotaDayOf(accountId: Prisma.Sql, at: Prisma.Sql): Prisma.Sql {
  return Prisma.sql`(${at}::timestamptz AT TIME ZONE ${quotaZoneOf(accountId)})::date`;
}

/** The first day of the month of a local date. */
export function monthOf(day: Prisma.Sql): Prisma.Sql {
  return Prisma.sql`date_trunc('month', (${day})::timestamp)::date`;
}

/**
 * What the quota row `q` (an alias of account_quotas) counts in the local day `day` and in its
 * month: a count of an earlier day or month is 0. `dayRoom` and `monthRoom` are what is left of
 * each limit, null without one.
 */
export function quotaCounts(q: string, day: Prisma.Sql) {
  const row = Prisma.raw(q);
  const dayUsed = Prisma.sql`(CASE WHEN ${row}.day_start = ${day} THEN ${row}.day_segments ELSE 0 END)`;
  const monthUsed = Prisma.sql`(CASE WHEN ${row}.month_start = ${monthOf(day)} THEN ${row}.month_segments ELSE 0 END)`;
  return {
    dayUsed,
    monthUsed,
    dayRoom: Prisma.sql`(${row}.daily_segments - ${dayUsed})`,
    monthRoom: Prisma.sql`(${row}.monthly_segments - ${monthUsed})`,
  };
}

/** An account's quota room at an instant, as quotaRooms reads it. */
export interface QuotaRoomRow {
  account_id: string;
  timezone: string;
  daily_segments: number | null;
  monthly_segments: number | null;
  allowed_countries: string[] | null;
  day_used: number;
  month_used: number;
  /** Null without a limit. */
  day_room: number | null;
  month_room: number | null;
}

/**
 * The quota room of each account at `at`, in one statement. It locks nothing: a caller that
 * must hold the room (a campaign's batch) locks the account's quota row first, and, each
 * statement reading what was committed when it began, reads the room after the lock.
 */
export function quotaRooms(db: Prisma.TransactionClient, accountIds: readonly string[], at: Date) {
  const counts = quotaCounts('q', Prisma.sql`z.day`);
  return db.$queryRaw<QuotaRoomRow[]>`
    SELECT a.id AS account_id, z.timezone, q.daily_segments, q.monthly_segments, q.allowed_countries,
      ${counts.dayUsed}::int AS day_used, ${counts.monthUsed}::int AS month_used,
      ${counts.dayRoom}::int AS day_room, ${counts.monthRoom}::int AS month_room
    FROM accounts a
    LEFT JOIN account_quotas q ON q.account_id = a.id
    CROSS JOIN LATERAL (
      SELECT ${quotaZoneOf(Prisma.sql`a.id`)} AS timezone, ${quotaDayOf(Prisma.sql`a.id`, Prisma.sql`${at}`)} AS day) z
    WHERE a.id = ANY(${[...new Set(accountIds)]})`;
}
