import type { PrismaClient } from '../../generated/prisma/client.js';
import type { CampaignDispatchJobs } from '../../jobs/campaign-dispatch.job.js';

/**
 * Waiting messages of these campaigns just moved (released, expired, cancelled): each that is
 * running gets its next dispatch at once, which finishes it when no contact is left and none of
 * its messages waits any more (campaign-dispatch.ts). The job id is the campaign's next batch,
 * so a batch already due is not doubled.
 */
export async function settleWaitingCampaigns(
  prisma: Pick<PrismaClient, 'campaign'>,
  dispatchJobs: CampaignDispatchJobs,
  campaignIds: Iterable<string>,
): Promise<void> {
  const ids = [...new Set(campaignIds)];
  if (ids.length === 0) return;
  const running = await prisma.campaign.findMany({
    where: { id: { in: ids }, status: 'running', deletedAt: null },
    select: { id: true, dispatchedBatches: true },
  });
  for (const campaign of running)
    await dispatchJobs.enqueueBatch(campaign.id, campaign.dispatchedBatches + 1, 0);
}
