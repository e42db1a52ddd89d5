import { createHash } from 'node:crypto';
import { ValidationError } from '../../errors.js';
import type { PrismaClient } from '../../generated/prisma/client.js';
import type { AcceptedRow, MessageAcceptance } from './message-acceptance.js';
import { type InsertedMessageRow, insertMessageRows } from './message-rows.js';
import { IDEMPOTENCY_WINDOW_MS, type SendInput } from './send-input.js';

// A send with an Idempotency-Key: the same key and request within 24 hours answer the first
// acceptance again; the same key with another request is refused.

/** A send with its key: whose, which key, what it asked (hashed) and when. */
export interface KeyedSend {
  accountId: string;
  key: string;
  requestHash: string;
  now: Date;
}

/** The key of a send, and the hash of what it asks: any field that changes the message changes it. */
export function keyedSendOf(message: AcceptedRow, key: string, data: SendInput): KeyedSend {
  const requestHash = createHash('sha256')
    .update(
      JSON.stringify([
        message.to,
        message.text,
        message.campaignId,
        message.sender,
        data.sendAt?.toISOString() ?? null,
        data.validity ?? null,
        data.respectSendWindow ?? false,
      ]),
    )
    .digest('hex');
  return { accountId: message.accountId, key, requestHash, now: message.createdAt };
}

/** The first acceptance under the key, answered again; null when the key is free (unused, or older than 24 hours). */
export async function replayOf(prisma: PrismaClient, keyed: KeyedSend): Promise<MessageAcceptance | null> {
  const { accountId, key, requestHash, now } = keyed;
  const existing = await prisma.idempotencyKey.findUnique({
    where: { accountId_key: { accountId, key } },
    select: {
      requestHash: true,
      createdAt: true,
      message: {
        select: {
          id: true,
          to: true,
          campaignId: true,
          sendAt: true,
          status: true,
          releaseAt: true,
          sender: true,
        },
      },
    },
  });
  if (!existing || existing.createdAt.getTime() <= now.getTime() - IDEMPOTENCY_WINDOW_MS) return null;
  if (existing.requestHash !== requestHash)
    throw new ValidationError([{ field: 'Idempotency-Key', issue: 'reused' }]);
  const { message } = existing;
  const scheduled = message.sendAt !== null || message.status === 'scheduled';
  return {
    id: message.id,
    status: scheduled ? 'scheduled' : 'queued',
    to: message.to,
    campaignId: message.campaignId,
    sendAt: message.sendAt,
    waitsUntil: scheduled ? (message.releaseAt ?? message.sendAt) : null,
    from: message.sender,
    replayed: true,
  };
}

/**
 * The message and its key in one transaction, an expired use of the key deleted first. A unique
 * violation means another request with the same key won the race.
 */
export function insertWithKey(
  prisma: PrismaClient,
  keyed: KeyedSend,
  message: AcceptedRow,
): Promise<InsertedMessageRow[]> {
  const { accountId, key, requestHash, now } = keyed;
  return prisma.$transaction(async (tx) => {
    await tx.idempotencyKey.deleteMany({
      where: { accountId, key, createdAt: { lte: new Date(now.getTime() - IDEMPOTENCY_WINDOW_MS) } },
    });
    const rows = await insertMessageRows(tx, [message]);
    // No row: the account had no room, and the key stays free for a retry once it has.
    if (rows.length > 0)
      await tx.idempotencyKey.create({
        data: { accountId, key, requestHash, messageId: message.id, createdAt: now },
      });
    return rows;
  });
}
