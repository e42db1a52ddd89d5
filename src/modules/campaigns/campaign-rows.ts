import type { Prisma } from '../../generated/prisma/client.js';
import type { CampaignStatus } from '../../generated/prisma/enums.js';
import { type CampaignEventType, campaignStatusPayload, writeEvent } from '../webhooks/webhook-events.js';
import { readCampaignStats } from './campaign-stats.js';

type Tx = Prisma.TransactionClient;

/** A campaign row as the status changes and the dispatcher read it, locked. */
export interface LockedCampaign {
  id: string;
  account_id: string;
  status: CampaignStatus;
  template_id: string | null;
  batch_size: number;
  delay: number;
  dispatched_batches: number;
  dispatched_through_at: Date | null;
  dispatched_through_id: string | null;
  send_at: Date | null;
  send_window: unknown;
  validity: number | null;
  /** The approved sender its messages name; null: each message's is chosen (default sender, pool). */
  sender: string | null;
  deleted_at: Date | null;
}

/**
 * Locks a campaign for a status change or a batch (FOR NO KEY UPDATE, which the foreign-key
 * checks of rows being added to the campaign do not wait on), so that two never interleave.
 */
export async function lockCampaign(tx: Tx, id: string): Promise<LockedCampaign | null> {
  const rows = await tx.$queryRaw<LockedCampaign[]>`
    SELECT id, account_id, status::text AS status, template_id, batch_size, delay, dispatched_batches, dispatched_through_at,
      dispatched_through_id, send_at, send_window, validity, sender, deleted_at
    FROM campaigns WHERE id = ${id} FOR NO KEY UPDATE`;
  return rows[0] ?? null;
}

/** The event of a status change, with the stats as they are inside the transaction that makes it. */
export async function writeCampaignEvent(
  tx: Tx,
  campaign: LockedCampaign,
  type: CampaignEventType,
  status: CampaignStatus,
  at: Date,
) {
  const [stats] = await readCampaignStats(tx, [campaign.id]);
  await writeEvent(tx, {
    type,
    payload: campaignStatusPayload(type, campaign.id, status, stats!),
    accountId: campaign.account_id,
    campaignId: campaign.id,
    at,
  });
}
