import { z } from 'zod';
import { ConflictError, NotFoundError, ValidationError } from '../../errors.js';
import type { PrismaClient } from '../../generated/prisma/client.js';
import { countryOf, E164_EXPECTED, E164_WRITTEN, isKnownCountry } from '../../lib/phone.js';
import { issue, parseInput } from '../../lib/validation.js';

// The senders an operator approves for an account, and the check a send's `from` passes.

/** The most senders one account holds: more than any business has identities, a bound on every read. */
export const MAX_SENDERS_PER_ACCOUNT = 100;

const ALPHANUMERIC = /^[A-Za-z0-9 ]{1,11}$/;
const NUMERIC = /^\+?[0-9]+$/;

/** A sender as written: a number is E.164 (stored as digits), anything else 1..11 letters, digits and spaces. */
export const senderInput = z
  .string()
  .min(1)
  .max(16)
  .superRefine((value, context) => {
    if (NUMERIC.test(value)) {
      if (!E164_WRITTEN.test(value))
        context.addIssue({ code: 'custom', params: { issue: 'invalid_e164', hint: E164_EXPECTED } });
    } else if (value.length > 11) {
      context.addIssue({ code: 'custom', params: { issue: 'too_long', hint: '1–11 characters' } });
    } else if (!ALPHANUMERIC.test(value) || value.trim() === '') {
      context.addIssue({
        code: 'custom',
        params: { issue: 'invalid_format', hint: 'letters A–Z, digits and spaces, or an E.164 number' },
      });
    }
  })
  .transform((value) => value.replace(/^\+/, ''));

/**
 * A sender as a send or a campaign names it (`from`): as written, a number with or without '+'
 * (kept as digits); whether it is approved is the service's check, not the schema's.
 */
export const namedSenderInput = z
  .string()
  .min(1)
  .max(16)
  .transform((sender) => sender.replace(/^\+(?=[0-9])/, ''));

export const addSenderInput = z.strictObject({
  sender: senderInput,
  countries: z
    .array(z.string().refine(isKnownCountry, issue('invalid_value', 'ISO 3166 alpha-2 codes, e.g. GB,IE')))
    .max(300)
    .optional(),
  pool: z.boolean().optional(),
});

/** An approved sender as tenants and the operator see it. */
export interface ApprovedSender {
  sender: string;
  kind: 'alphanumeric' | 'numeric';
  /** The countries it may send to; null for every country. */
  countries: string[] | null;
  pool: boolean;
}

function viewOf(row: { sender: string; countries: string[]; pool: boolean }): ApprovedSender {
  return {
    sender: row.sender,
    kind: /^[0-9]+$/.test(row.sender) ? 'numeric' : 'alphanumeric',
    countries: row.countries.length > 0 ? row.countries : null,
    pool: row.pool,
  };
}

export class AccountSenders {
  constructor(private readonly prisma: PrismaClient) {}

  /** Every approved sender of the account, by name; at most MAX_SENDERS_PER_ACCOUNT. */
  async list(accountId: string): Promise<ApprovedSender[]> {
    const rows = await this.prisma.accountSender.findMany({
      where: { accountId },
      orderBy: { sender: 'asc' },
      take: MAX_SENDERS_PER_ACCOUNT,
    });
    return rows.map(viewOf);
  }

  /**
   * Approves a sender, or changes the countries and pool of one already approved. The account's
   * row is locked while its senders are counted, so concurrent additions cannot pass the limit.
   */
  async add(accountId: string, input: unknown): Promise<ApprovedSender> {
    const { sender, countries = [], pool = false } = parseInput(addSenderInput, input);
    const row = await this.prisma.$transaction(async (tx) => {
      await tx.$queryRaw`SELECT id FROM accounts WHERE id = ${accountId} FOR UPDATE`;
      const existing = await tx.accountSender.count({ where: { accountId } });
      const known = await tx.accountSender.findUnique({ where: { accountId_sender: { accountId, sender } } });
      if (!known && existing >= MAX_SENDERS_PER_ACCOUNT)
        throw new ConflictError(
          `the account has ${MAX_SENDERS_PER_ACCOUNT} approved senders, the most it may hold: remove one first`,
        );
      return tx.accountSender.upsert({
        where: { accountId_sender: { accountId, sender } },
        create: { accountId, sender, countries: [...new Set(countries)], pool },
        update: { countries: [...new Set(countries)], pool },
      });
    });
    return viewOf(row);
  }

  async remove(accountId: string, written: string): Promise<void> {
    const sender = parseInput(z.strictObject({ sender: senderInput }), { sender: written }).sender;
    const { count } = await this.prisma.accountSender.deleteMany({ where: { accountId, sender } });
    if (count === 0) throw new NotFoundError('Sender');
  }

  /**
   * Refuses a send's `from` (as stored: a number without '+') with a 422 `sender_not_allowed`
   * unless the operator approved it for the account and for the recipient's country (for a
   * campaign, `to` is null: its messages are checked one by one as they are made).
   */
  async assertApproved(accountId: string, sender: string, to: string | null): Promise<void> {
    const row = await this.prisma.accountSender.findUnique({
      where: { accountId_sender: { accountId, sender } },
      select: { countries: true },
    });
    if (!row)
      throw new ValidationError(
        [{ field: 'from', issue: 'sender_not_allowed' }],
        `from: ${sender} is not a sender the operator approved for this account (GET /v1/settings lists them)`,
      );
    if (to === null) return;
    const country = countryOf(to);
    if (row.countries.length > 0 && (country === null || !row.countries.includes(country)))
      throw new ValidationError(
        [{ field: 'from', issue: 'sender_not_allowed' }],
        `from: ${sender} is approved for ${row.countries.join(', ')} only, not for this number's country (${country ?? 'unknown'})`,
      );
  }
}
