import { Prisma, type PrismaClient } from '../../generated/prisma/client.js';
import type { MessageSubject } from '../webhooks/webhook-events.js';

/**
 * A sender as Tern stores and compares it: trimmed and without a leading '+', which the carrier
 * drops before it sends and a mobile's reply may or may not carry back; null when there is none.
 */
export function senderAddress(sender: string | null | undefined): string | null {
  const address = sender?.trim().replace(/^\+/, '');
  return address ? address : null;
}

/** An account that has written to a number from an address, with its latest message there. */
export interface ReplyRecipient {
  accountId: string;
  latest: MessageSubject;
}

interface LatestRow {
  account_id: string;
  id: string;
  to: string;
  campaign_id: string | null;
}

/**
 * Which accounts a reply concerns. A mobile answers a number (or name), not an account: a reply
 * is matched by the mobile's number and the address it was written to, and concerns every
 * account whose messages to that number went out from that address. An address no message went
 * out from is the carrier's own default sender, which messages sent with no sender used.
 */
export class ReplyRouting {
  constructor(private readonly prisma: PrismaClient) {}

  /** The address the outbound message `id` went out from, when a carrier names the message a reply answers. */
  async addressOf(id: string): Promise<string | null> {
    const message = await this.prisma.message.findUnique({ where: { id }, select: { sender: true } });
    return message?.sender ?? null;
  }

  /** Every account that wrote to `phone` from `address`, the one that wrote there last first. */
  async recipients(phone: string, address: string | null): Promise<ReplyRecipient[]> {
    const fromAddress = address ? await this.latestPerAccount(phone, Prisma.sql`= ${address}`) : [];
    const rows =
      fromAddress.length > 0 ? fromAddress : await this.latestPerAccount(phone, Prisma.sql`IS NULL`);
    return rows.map((row) => ({
      accountId: row.account_id,
      latest: { id: row.id, to: row.to, campaignId: row.campaign_id },
    }));
  }

  private latestPerAccount(phone: string, sender: Prisma.Sql): Promise<LatestRow[]> {
    return this.prisma.$queryRaw<LatestRow[]>`
      SELECT account_id, id, "to", campaign_id FROM (
        SELECT DISTINCT ON (account_id) account_id, id, "to", campaign_id, created_at FROM messages
        WHERE "to" = ${phone} AND sender ${sender}
        ORDER BY account_id, created_at DESC, id DESC) latest
      ORDER BY created_at DESC, id DESC`;
  }
}
