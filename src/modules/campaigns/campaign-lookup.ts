import { NotFoundError } from '../../errors.js';
import type { Prisma, PrismaClient } from '../../generated/prisma/client.js';

/** The selection Pothos computes for a field; spread into the query. */
export type CampaignQuery = Pick<Prisma.CampaignFindFirstArgs, 'select' | 'include'>;

/** A campaign of the account that is not deleted: the only campaigns the API knows of. */
export function liveCampaign(accountId: string, id: string) {
  return { id, accountId, deletedAt: null } satisfies Prisma.CampaignWhereInput;
}

export function findCampaign(
  prisma: PrismaClient,
  accountId: string,
  id: string,
  query: CampaignQuery = { select: { id: true } },
) {
  return prisma.campaign.findFirst({ ...query, where: liveCampaign(accountId, id) });
}

/** The campaign, or 404 not_found. */
export async function requireCampaign(
  prisma: PrismaClient,
  accountId: string,
  id: string,
  query?: CampaignQuery,
) {
  const campaign = await findCampaign(prisma, accountId, id, query);
  if (!campaign) throw new NotFoundError('Campaign');
  return campaign;
}
