import { Prisma, type PrismaClient } from '../../generated/prisma/client.js';
import { contactOptedOut } from '../opt-outs/opt-outs.js';

export interface CampaignStats {
  contacts: number;
  /** Its messages waiting for their contact's send window to open. */
  waiting: number;
  queued: number;
  sent: number;
  delivered: number;
  failed: number;
  replied: number;
  /** The campaign's contacts whose number opted out of the account, read now: dispatch skips them. */
  optedOut: number;
}

type StatsRow = { id: string } & Record<
  'contacts' | 'waiting' | 'queued' | 'sent' | 'delivered' | 'failed' | 'replied' | 'opted_out',
  bigint
>;

const NO_STATS: CampaignStats = {
  contacts: 0,
  waiting: 0,
  queued: 0,
  sent: 0,
  delivered: 0,
  failed: 0,
  replied: 0,
  optedOut: 0,
};

/**
 * The stats of campaigns, in one statement: read by the API for a whole list at once, and
 * inside the transaction that changes a campaign's status for the event it writes.
 */
export async function readCampaignStats(
  db: Prisma.TransactionClient,
  campaignIds: readonly string[],
): Promise<CampaignStats[]> {
  const rows = await db.$queryRaw<StatsRow[]>`
    SELECT k.id,
      (SELECT count(*) FROM contacts c WHERE c.campaign_id = k.id) AS contacts,
      (SELECT count(*) FROM contacts c WHERE c.campaign_id = k.id AND ${contactOptedOut(Prisma.sql`k.account_id`)}) AS opted_out,
      m.waiting, m.queued, m.sent, m.delivered, m.failed, m.replied
    FROM campaigns k
    CROSS JOIN LATERAL (
      SELECT
        count(*) FILTER (WHERE m.status = 'scheduled') AS waiting,
        count(*) FILTER (WHERE m.status = 'queued') AS queued,
        count(*) FILTER (WHERE m.status = 'sent') AS sent,
        count(*) FILTER (WHERE m.status = 'delivered') AS delivered,
        count(*) FILTER (WHERE m.status = 'failed') AS failed,
        count(*) FILTER (WHERE EXISTS (SELECT 1 FROM inbound_messages i WHERE i.message_id = m.id)) AS replied
      FROM messages m WHERE m.campaign_id = k.id) m
    WHERE k.id = ANY(${[...campaignIds]})`;
  const byId = new Map(rows.map((row) => [row.id, row]));
  return campaignIds.map((id) => {
    const row = byId.get(id);
    if (!row) return { ...NO_STATS };
    return {
      contacts: Number(row.contacts),
      waiting: Number(row.waiting),
      queued: Number(row.queued),
      sent: Number(row.sent),
      delivered: Number(row.delivered),
      failed: Number(row.failed),
      replied: Number(row.replied),
      optedOut: Number(row.opted_out),
    };
  });
}

export class CampaignStatsReader {
  constructor(private readonly prisma: PrismaClient) {}

  /** Stats of many campaigns at once, for lists without a query per campaign. */
  read(campaignIds: readonly string[]): Promise<CampaignStats[]> {
    return readCampaignStats(this.prisma, campaignIds);
  }
}
