import type { Prisma } from '../../generated/prisma/client.js';
import type { NewMessageRow } from '../messages/message-rows.js';

interface Room {
  day_room: number | null;
  month_room: number | null;
}

/**
 * The first of a campaign batch's messages that fit the account's quotas now, in order: failed
 * ones ask for nothing, the first that does not fit ends the batch. The account's quota row
 * stays locked until the batch's transaction ends, so the reservation of the insert that follows
 * finds the same room; a single send meanwhile waits for it.
 */
export async function withinQuota(
  tx: Prisma.TransactionClient,
  accountId: string,
  messages: readonly NewMessageRow[],
  now: Date,
): Promise<NewMessageRow[]> {
  const [room] = await tx.$queryRaw<Room[]>`
    WITH local AS (
      SELECT (${now}::timestamptz AT TIME ZONE COALESCE(
        (SELECT timezone FROM account_settings WHERE account_id = ${accountId}), 'UTC'))::date AS day)
    SELECT
      q.daily_segments - CASE WHEN q.day_start = l.day THEN q.day_segments ELSE 0 END AS day_room,
      q.monthly_segments - CASE WHEN q.month_start = date_trunc('month', l.day::timestamp)::date
        THEN q.month_segments ELSE 0 END AS month_room
    FROM account_quotas q, local l
    WHERE q.account_id = ${accountId}
    FOR UPDATE OF q`;
  let left = Math.min(
    room?.day_room ?? Number.POSITIVE_INFINITY,
    room?.month_room ?? Number.POSITIVE_INFINITY,
  );
  const admitted: NewMessageRow[] = [];
  for (const message of messages) {
    const asks = message.status === 'failed' ? 0 : message.segments;
    if (asks > left) break;
    left -= asks;
    admitted.push(message);
  }
  return admitted;
}
