import type { PrismaClient } from '../../generated/prisma/client.js';
import type { Encoding } from './encoding.js';

/** A message as it is accepted: by a single send, a batch of them, or a campaign's batch. */
export interface NewMessageRow {
  id: string;
  accountId: string;
  campaignId: string | null;
  /** The campaign contact it was made for; null for a single send. */
  contactId: string | null;
  to: string;
  text: string;
  encoding: Encoding;
  segments: number;
  createdAt: Date;
}

type RawQueries = Pick<PrismaClient, '$queryRaw'>;

/**
 * The one writer of message rows. One statement for any number of them; a row that conflicts
 * (a campaign contact that has its message already) is left out and not returned. Written in
 * SQL: through the ORM, a batch of 1,000 rows cost more CPU to build and read back than
 * everything else a campaign's batch does. Returns a PrismaPromise, so it can run inside a
 * batch transaction as well as an interactive one.
 */
export function insertMessageRows(db: RawQueries, rows: readonly NewMessageRow[]) {
  const column = <T>(pick: (row: NewMessageRow) => T) => rows.map(pick);
  return db.$queryRaw<{ id: string; to: string }[]>`
    INSERT INTO messages (id, account_id, campaign_id, contact_id, "to", text, encoding, segments, created_at)
    SELECT * FROM unnest(
      ${column((m) => m.id)}::text[], ${column((m) => m.accountId)}::text[], ${column((m) => m.campaignId)}::text[],
      ${column((m) => m.contactId)}::text[], ${column((m) => m.to)}::text[], ${column((m) => m.text)}::text[],
      ${column((m) => m.encoding)}::"MessageEncoding"[], ${column((m) => m.segments)}::int[],
      ${column((m) => m.createdAt.toISOString())}::timestamptz[])
    ON CONFLICT DO NOTHING
    RETURNING id, "to"`;
}
