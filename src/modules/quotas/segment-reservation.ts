import type { SqlRelation } from '../../db/sql-relation.js';
import { Prisma } from '../../generated/prisma/client.js';
import { monthOf, quotaCounts, quotaDayOf } from './quota-room.js';

// The day a reservation counts in: its own, or the account's day already counted when that is
// later. A process whose clock still reads the day before at midnight (clocks of several processes
// never agree exactly) adds to the later day's count rather than starting its day again at zero.
const countedDay = Prisma.sql`GREATEST(q.day_start, EXCLUDED.day_start)`;
// The account's counts and room in that day and its month (quota-room.ts).
const room = quotaCounts('q', countedDay);

/** The columns of the rows to insert that segmentReservation reads. */
export type ReservationColumns = 'account_id' | 'segments' | 'created_at' | 'status';

/**
 * Two CTEs for the statement that inserts messages from the rows `v`: `demand`, the segments each account asks for (failed rows ask none) and
 * the day of its quota zone they count in, and `reserved`, the accounts whose demand fits both
 * of their quotas, with their counts after it. The reservation is one INSERT … ON CONFLICT DO
 * UPDATE … WHERE per account row: PostgreSQL checks the condition on the newest version of the
 * locked row, so concurrent statements, in any number of processes, never take an account past
 * a limit. Rows are taken in account order, so two statements reserving for the same accounts
 * cannot deadlock. An account of the batch that is not in `reserved` had no room for all of its
 * rows: none of them is inserted.
 */
export function segmentReservation(v: SqlRelation<ReservationColumns>): Prisma.Sql {
  const asked = Prisma.raw(`${v.column.account_id} AS account_id, sum(${v.column.segments})::int AS segments,
        max(${v.column.created_at}) AS created_at`);
  return Prisma.sql`
  demand AS (
    SELECT asked.account_id, asked.segments,
      ${quotaDayOf(Prisma.sql`asked.account_id`, Prisma.sql`asked.created_at`)} AS day
    FROM (
      SELECT ${asked}
      FROM ${v.name} WHERE ${Prisma.raw(`${v.column.status} <> 'failed' GROUP BY ${v.column.account_id}`)}) asked),
  reserved AS (
    INSERT INTO account_quotas AS q (account_id, day_start, day_segments, month_start, month_segments)
    SELECT account_id, day, segments, ${monthOf(Prisma.sql`day`)}, segments
    FROM demand ORDER BY account_id
    ON CONFLICT (account_id) DO UPDATE SET
      day_segments = ${room.dayUsed} + EXCLUDED.day_segments,
      day_start = ${countedDay},
      month_segments = ${room.monthUsed} + EXCLUDED.month_segments,
      month_start = ${monthOf(countedDay)}
    WHERE COALESCE(${room.dayRoom} >= EXCLUDED.day_segments, true)
      AND COALESCE(${room.monthRoom} >= EXCLUDED.month_segments, true)
    RETURNING q.account_id, q.day_start, q.day_segments, q.daily_segments, q.month_segments, q.monthly_segments)`;
}

/** The columns of the moved messages that segmentGiveBack reads. */
export type GivenBackColumns = 'account_id' | 'status' | 'segments' | 'quota_day' | 'reached_carrier';

/**
 * CTEs for the statement that moves messages (`moved`): the segments of those that failed or
 * were cancelled before any carrier took them go back to the day and the month they were
 * reserved in, if those are still the account's current ones. The account rows are locked in
 * account order first.
 */
export function segmentGiveBack(moved: SqlRelation<GivenBackColumns>): Prisma.Sql {
  const m = moved.column;
  return Prisma.sql`
  given_back_rows AS (
    SELECT ${Prisma.raw(`${m.account_id} AS account_id, ${m.quota_day} AS quota_day, ${m.segments} AS segments`)}
    FROM ${moved.name}
    WHERE ${Prisma.raw(`${m.status} IN ('failed', 'cancelled') AND NOT ${m.reached_carrier} AND ${m.quota_day} IS NOT NULL`)}),
  given_back_accounts AS (
    SELECT q.account_id FROM account_quotas q
    WHERE q.account_id IN (SELECT account_id FROM given_back_rows)
    ORDER BY q.account_id FOR UPDATE),
  given_back AS (
    UPDATE account_quotas q SET
      day_segments = GREATEST(0, q.day_segments - COALESCE((SELECT sum(b.segments) FROM given_back_rows b
        WHERE b.account_id = q.account_id AND b.quota_day = q.day_start), 0)),
      month_segments = GREATEST(0, q.month_segments - COALESCE((SELECT sum(b.segments) FROM given_back_rows b
        WHERE b.account_id = q.account_id
          AND ${monthOf(Prisma.sql`b.quota_day`)} = q.month_start), 0))
    FROM given_back_accounts l WHERE q.account_id = l.account_id)`;
}
