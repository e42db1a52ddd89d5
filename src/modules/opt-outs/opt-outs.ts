import { perRowProbe } from '../../db/per-row-probe.js';
import { ValidationError } from '../../errors.js';
import { Prisma, type PrismaClient } from '../../generated/prisma/client.js';
import { newestFirst, type PageRequest } from '../../lib/pagination.js';

type Tx = Prisma.TransactionClient;
type OptOutQuery = Omit<Prisma.OptOutFindManyArgs, 'where' | 'orderBy' | 'skip' | 'take'>;

/** The keywords carriers and regulators expect to end (and restart) messages to a number. */
const OPT_OUT_KEYWORDS = new Set(['STOP', 'STOPALL', 'UNSUBSCRIBE', 'CANCEL', 'END', 'QUIT']);
const OPT_IN_KEYWORDS = new Set(['START', 'UNSTOP']);

export type OptOutKeyword = 'opt_out' | 'opt_in';

/** What a reply asks for: only a whole message that is one of the keywords, in any case, counts. */
export function optOutKeyword(text: string): OptOutKeyword | null {
  const word = text.trim().toUpperCase();
  if (OPT_OUT_KEYWORDS.has(word)) return 'opt_out';
  if (OPT_IN_KEYWORDS.has(word)) return 'opt_in';
  return null;
}

/**
 * Numbers that asked an account to stop writing to them. A reply STOP (or one of its
 * synonyms) adds the number, START removes it; a send to an opted-out number is refused and a
 * campaign never creates a message for one.
 */
export class OptOuts {
  constructor(private readonly prisma: PrismaClient) {}

  /** A send to an opted-out number: 422 `{ field: "to", issue: "opted_out" }`. */
  async assertReachable(accountId: string, phone: string): Promise<void> {
    const optOut = await this.prisma.optOut.findUnique({
      where: { accountId_phone: { accountId, phone } },
      select: { phone: true },
    });
    if (optOut) throw optedOutError();
  }

  /** Which of many sends go to opted-out numbers, in one query: true for those. */
  async optedOut(sends: readonly { accountId: string; to: string }[]): Promise<boolean[]> {
    const rows = await this.prisma.$queryRaw<{ ord: bigint }[]>`
      SELECT s.ord FROM unnest(${sends.map((send) => send.accountId)}::text[], ${sends.map((send) => send.to)}::text[]) WITH ORDINALITY AS s(account_id, phone, ord)
      WHERE EXISTS (SELECT 1 FROM opt_outs o WHERE o.account_id = s.account_id AND o.phone = s.phone)`;
    const refused = new Set(rows.map((row) => Number(row.ord) - 1));
    return sends.map((_, index) => refused.has(index));
  }

  /**
   * Applies a keyword reply inside the transaction that stores the reply; other replies change
   * nothing. True when it opted the number out (a STOP from a number already out is not counted again).
   */
  async applyReply(tx: Tx, accountId: string, phone: string, text: string, at: Date): Promise<boolean> {
    const keyword = optOutKeyword(text);
    if (keyword === 'opt_out') {
      const { count } = await tx.optOut.createMany({
        data: [{ accountId, phone, createdAt: at }],
        skipDuplicates: true,
      });
      return count > 0;
    }
    if (keyword === 'opt_in') await tx.optOut.deleteMany({ where: { accountId, phone } });
    return false;
  }

  list(accountId: string, page: PageRequest, query: OptOutQuery = {}) {
    return this.prisma.optOut.findMany({ ...query, ...newestFirst({ accountId }, page, 'phone') });
  }

  count(accountId: string): Promise<number> {
    return this.prisma.optOut.count({ where: { accountId } });
  }
}

export function optedOutError(): ValidationError {
  return new ValidationError(
    [{ field: 'to', issue: 'opted_out' }],
    'The recipient has opted out of messages from this account',
  );
}

/**
 * SQL true when the contact row aliased `contact` has opted out of the campaign's account
 * `accountId`: campaign dispatch leaves such contacts out, and stats count them. It is a probe
 * of the (account, phone) key per contact whatever the statistics say.
 */
export function contactOptedOut(accountId: Prisma.Sql | string, contact = 'c'): Prisma.Sql {
  const account = typeof accountId === 'string' ? Prisma.sql`${accountId}` : accountId;
  return Prisma.sql`EXISTS (SELECT 1 FROM opt_outs o WHERE o.account_id = ${account} AND o.phone = ${Prisma.raw(`${contact}.phone`)} ${perRowProbe})`;
}
