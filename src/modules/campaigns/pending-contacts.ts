import { perRowProbe } from '../../db/per-row-probe.js';
import { Prisma } from '../../generated/prisma/client.js';
import { contactOptedOut } from '../opt-outs/opt-outs.js';
import type { LockedCampaign } from './campaign-rows.js';

type Tx = Prisma.TransactionClient;

/** A contact of a campaign still to be sent, as a batch renders its message. */
export interface PendingContact {
  id: string;
  phone: string;
  name: string | null;
  email: string | null;
  document: string | null;
  tags: string[];
  timezone: string | null;
  created_at: Date;
}

/**
 * The batch's contacts, read on from the last batch. A short read means the end, where a read
 * from the start also finds contacts that committed late with an earlier created_at (an
 * import's rows).
 */
export async function batchContacts(tx: Tx, campaign: LockedCampaign): Promise<PendingContact[]> {
  const contacts = await pendingContacts(tx, campaign, campaign.batch_size);
  if (contacts.length === campaign.batch_size || !campaign.dispatched_through_id) return contacts;
  return pendingContacts(
    tx,
    { ...campaign, dispatched_through_at: null, dispatched_through_id: null },
    campaign.batch_size,
  );
}

/** Contacts still to be sent: no message yet, and not opted out of the account. */
function pendingContacts(tx: Tx, campaign: LockedCampaign, limit: number): Promise<PendingContact[]> {
  return tx.$queryRaw<PendingContact[]>(pendingContactsQuery(campaign, limit));
}

/**
 * The next contacts of a campaign without a message, in order, from the last batch's position
 * when there is one. Each contact costs two index probes (its message, its opt-out), however
 * many messages the campaign already has. The message is looked up by contact alone (a contact
 * belongs to one campaign): by (campaign, contact), a planner that believes the campaign has no
 * messages may as well take the (campaign, status) index and read all of them per contact.
 */
export function pendingContactsQuery(
  campaign: Pick<LockedCampaign, 'id' | 'account_id' | 'dispatched_through_at' | 'dispatched_through_id'>,
  limit: number,
): Prisma.Sql {
  const after = campaign.dispatched_through_id
    ? Prisma.sql`AND (c.created_at, c.id) > (${campaign.dispatched_through_at}, ${campaign.dispatched_through_id})`
    : Prisma.empty;
  return Prisma.sql`
    SELECT c.id, c.phone, c.name, c.email, c.document, c.tags, c.timezone, c.created_at
    FROM contacts c
    WHERE c.campaign_id = ${campaign.id} ${after}
      AND NOT EXISTS (SELECT 1 FROM messages m WHERE m.contact_id = c.id ${perRowProbe})
      AND NOT ${contactOptedOut(campaign.account_id)}
    ORDER BY c.created_at, c.id
    LIMIT ${limit}`;
}
