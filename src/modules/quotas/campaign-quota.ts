import type { Prisma } from '../../generated/prisma/client.js';
import type { NewMessageRow } from '../messages/message-rows.js';
import { quotaRooms } from './quota-room.js';

/**
 * The first of a campaign batch's messages that fit the account's quotas now, in order: failed
 * ones ask for nothing, the first that does not fit ends the batch. The account's quota row is
 * locked first and stays locked until the batch's transaction ends, so the room read after the
 * lock is the one the reservation of the insert that follows finds; a single send meanwhile
 * waits for it.
 */
export async function withinQuota(
  tx: Prisma.TransactionClient,
  accountId: string,
  messages: readonly NewMessageRow[],
  now: Date,
): Promise<NewMessageRow[]> {
  await tx.$executeRaw`SELECT 1 FROM account_quotas WHERE account_id = ${accountId} FOR UPDATE`;
  const [room] = await quotaRooms(tx, [accountId], now);
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
