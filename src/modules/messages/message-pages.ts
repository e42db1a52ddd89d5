import { allIds, inPageOrder, pageIdsPerParent } from '../../db/pages-per-parent.js';
import { type MessageStatus, Prisma, type PrismaClient } from '../../generated/prisma/client.js';
import type { PageRequest } from '../../lib/pagination.js';

type MessageQuery = Pick<Prisma.MessageFindManyArgs, 'select' | 'include'>;
type ReplyQuery = Pick<Prisma.InboundMessageFindManyArgs, 'select' | 'include'>;

/**
 * The lists of messages that hang under another row of a GraphQL answer (a campaign's messages,
 * a message's replies), one page per parent for a whole list of parents, each page read in SQL.
 */
export class MessagePages {
  constructor(private readonly prisma: PrismaClient) {}

  /** Newest first, as the account's message list. */
  async byCampaign(
    accountId: string,
    campaignIds: readonly string[],
    filter: { status?: MessageStatus },
    page: PageRequest,
    query: MessageQuery = {},
  ) {
    const pages = await pageIdsPerParent(
      this.prisma,
      {
        table: 'messages',
        parentColumn: 'campaign_id',
        where: Prisma.sql`child.account_id = ${accountId}${filter.status ? Prisma.sql` AND child.status::text = ${filter.status}` : Prisma.empty}`,
        orderBy: Prisma.sql`child.created_at DESC, child.id DESC`,
      },
      campaignIds,
      page,
    );
    const rows = await this.prisma.message.findMany({
      ...query,
      where: { id: { in: allIds(pages) }, accountId },
    });
    return inPageOrder(pages, rows, campaignIds);
  }

  /** Replies to each message, oldest first: the conversation as it happened. */
  async repliesByMessage(
    accountId: string,
    messageIds: readonly string[],
    page: PageRequest,
    query: ReplyQuery = {},
  ) {
    const pages = await pageIdsPerParent(
      this.prisma,
      {
        table: 'inbound_messages',
        parentColumn: 'message_id',
        where: Prisma.sql`child.account_id = ${accountId}`,
        orderBy: Prisma.sql`child.received_at, child.id`,
      },
      messageIds,
      page,
    );
    const rows = await this.prisma.inboundMessage.findMany({
      ...query,
      where: { id: { in: allIds(pages) }, accountId },
    });
    return inPageOrder(pages, rows, messageIds);
  }
}
