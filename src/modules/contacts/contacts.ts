import { z } from 'zod';
import { allIds, inPageOrder, pageIdsPerParent } from '../../db/pages-per-parent.js';
import { isUniqueViolation } from '../../db/prisma-errors.js';
import { ConflictError, NotFoundError } from '../../errors.js';
import { Prisma, type PrismaClient } from '../../generated/prisma/client.js';
import type { Clock } from '../../lib/clock.js';
import { newId } from '../../lib/ids.js';
import { oldestFirst, type PageArgs, type PageRequest, parsePage } from '../../lib/pagination.js';
import { parseInput } from '../../lib/validation.js';
import { requireCampaign } from '../campaigns/campaign-lookup.js';
import { contactFields } from './contact-fields.js';

export const addContactInput = z
  .strictObject(contactFields)
  .meta({ description: 'A new contact of a campaign' });

/** A tag longer than any tag can be is a mistake, not a filter that finds nothing. */
export const contactListInput = z.object({
  tag: z.string().max(50).meta({ description: 'Only contacts with this tag' }).nullish(),
});

/** The selection Pothos computes for a field; spread into every query. */
type ContactQuery = Pick<Prisma.ContactFindFirstArgs, 'select' | 'include'>;

export interface ContactFilter {
  tag?: string;
}

export class Contacts {
  constructor(
    private readonly prisma: PrismaClient,
    private readonly clock: Clock,
  ) {}

  async add(accountId: string, campaignId: string, input: unknown, query: ContactQuery = {}) {
    await requireCampaign(this.prisma, accountId, campaignId);
    const data = parseInput(addContactInput, input);
    try {
      return await this.prisma.contact.create({
        ...query,
        data: {
          id: newId('cnt'),
          accountId,
          campaignId,
          phone: data.phone,
          name: data.name || null,
          email: data.email || null,
          document: data.document || null,
          timezone: data.timezone ?? null,
          tags: [...new Set(data.tags ?? [])],
          createdAt: this.clock.now(),
        },
      });
    } catch (error) {
      if (isUniqueViolation(error))
        throw new ConflictError(`The phone ${data.phone} is already a contact of this campaign`);
      throw error;
    }
  }

  async get(accountId: string, campaignId: string, id: string, query: ContactQuery = {}) {
    const contact = await this.prisma.contact.findFirst({
      ...query,
      where: { id, campaignId, accountId, campaign: { deletedAt: null } },
    });
    if (!contact) throw new NotFoundError('Contact');
    return contact;
  }

  async parseListArgs(accountId: string, campaignId: string, args: { tag?: string | null } & PageArgs) {
    await requireCampaign(this.prisma, accountId, campaignId);
    return { page: parsePage(args), filter: this.parseFilter(args) };
  }

  parseFilter(args: { tag?: string | null }): ContactFilter {
    const { tag } = parseInput(contactListInput, { tag: args.tag });
    return tag ? { tag } : {};
  }

  list(
    accountId: string,
    campaignId: string,
    filter: ContactFilter,
    page: PageRequest,
    query: ContactQuery = {},
  ) {
    return this.prisma.contact.findMany({
      ...query,
      ...oldestFirst(this.where(accountId, campaignId, filter), page),
    });
  }

  /**
   * A page of contacts for each of several campaigns of the account (a campaign list's
   * `contacts`), each page read in SQL; one statement for the pages, one for their rows.
   */
  async pagesByCampaign(
    accountId: string,
    campaignIds: readonly string[],
    filter: ContactFilter,
    page: PageRequest,
    query: ContactQuery = {},
  ) {
    const pages = await pageIdsPerParent(
      this.prisma,
      {
        table: 'contacts',
        parentColumn: 'campaign_id',
        where: Prisma.sql`child.account_id = ${accountId}${filter.tag ? Prisma.sql` AND ${filter.tag} = ANY(child.tags)` : Prisma.empty}`,
        orderBy: Prisma.sql`child.created_at, child.id`,
      },
      campaignIds,
      page,
    );
    const rows = await this.prisma.contact.findMany({
      ...query,
      where: { id: { in: allIds(pages) }, accountId },
    });
    return inPageOrder(pages, rows, campaignIds);
  }

  count(accountId: string, campaignId: string, filter: ContactFilter): Promise<number> {
    return this.prisma.contact.count({ where: this.where(accountId, campaignId, filter) });
  }

  private where(accountId: string, campaignId: string, filter: ContactFilter): Prisma.ContactWhereInput {
    return { accountId, campaignId, ...(filter.tag ? { tags: { has: filter.tag } } : {}) };
  }
}
