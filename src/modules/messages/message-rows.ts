import type { Encoding } from '../../carriers/encoding.js';
import { sqlColumns, sqlRelation } from '../../db/sql-relation.js';
import { Prisma, type PrismaClient } from '../../generated/prisma/client.js';
import { newId } from '../../lib/ids.js';
import { countryOf } from '../../lib/phone.js';
import { segmentReservation } from '../quotas/segment-reservation.js';
import { addToMessageStats, messageStatsDelta, messageStatsKey } from '../stats/stats-rollups.js';
import { insertEvents, messageStatusPayload } from '../webhooks/webhook-events.js';
import { DEFAULT_MESSAGE_VALIDITY } from './message-timing.js';

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
  /**
   * `scheduled` waits for releaseAt; `queued` goes to the send queue at once; `failed` is
   * refused at acceptance (a campaign's contact the account may not send to), with its `error`.
   */
  status: 'queued' | 'scheduled' | 'failed';
  error?: { code: string; message: string };
  /** The time the client asked for, if any. */
  sendAt: Date | null;
  /** While scheduled: when it may first go out (messageTiming); its validity counts from it, else from acceptance. */
  releaseAt: Date | null;
  /** Seconds from its release (or acceptance) until it expires; null: the account's message_validity. */
  validitySeconds: number | null;
  /** The sender chosen at acceptance (senders/sender-choice.ts); null or left out: the carrier's, set as it is claimed. */
  sender?: string | null;
  /** The text the carrier gets, sealed, when `text` is masked (a verification's code); null otherwise. */
  sealedText?: string | null;
}

type RawQueries = Pick<PrismaClient, '$queryRaw'>;

/** The rows to insert, in the order of the unnest's arrays: what the reservation reads. */
const ROWS = sqlColumns('v', [
  'id',
  'account_id',
  'campaign_id',
  'contact_id',
  'to',
  'sender',
  'country',
  'text',
  'sealed_text',
  'encoding',
  'segments',
  'created_at',
  'status',
  'send_at',
  'release_at',
  'validity',
  'error_code',
  'error_message',
  'event_id',
  'payload',
] as const);

/** The message rows the insert wrote, as its RETURNING gives them: what the statistics read. */
const INSERTED = sqlRelation('inserted', {
  id: 'id',
  account_id: 'account_id',
  campaign_id: 'campaign_id',
  country: 'country',
  to: '"to"',
  status: 'status',
  segments: 'segments',
  created_at: 'created_at',
});

/** A message row as inserted, with its account's segment counts after the statement's reservation. */
export interface InsertedMessageRow {
  id: string;
  to: string;
  status: NewMessageRow['status'];
  account_id: string;
  /** Null for a failed row: nothing was reserved for it. */
  quota: ReservedSegments | null;
}

export interface ReservedSegments {
  reserved: number;
  day_segments: number;
  daily_segments: number | null;
  month_segments: number;
  monthly_segments: number | null;
}

/**
 * The one writer of message rows. One statement for any number of them; a row that conflicts
 * (a campaign contact that has its message already) is left out and not returned. A row
 * without its own validity takes the account's message_validity in the same statement, so a
 * send reads no settings first. The same statement reserves the rows' segments on their
 * accounts' quotas (segmentReservation): the rows of an account without room for all of them
 * are left out and not returned; and it adds the rows it wrote to the account's statistics, so
 * they cannot drift from the messages whatever crashes. Written in SQL: through the ORM, a batch
 * of 1,000 rows cost more CPU to build and read back than everything else a campaign's batch
 * does. Returns a PrismaPromise, so it can run inside a batch transaction as well as an
 * interactive one.
 */
export function insertMessageRows(db: RawQueries, rows: readonly NewMessageRow[]) {
  const column = <T>(pick: (row: NewMessageRow) => T) => rows.map(pick);
  return db.$queryRaw<InsertedMessageRow[]>`
    WITH ${ROWS.name} AS (
      SELECT * FROM unnest(
        ${column((m) => m.id)}::text[], ${column((m) => m.accountId)}::text[], ${column((m) => m.campaignId)}::text[],
        ${column((m) => m.contactId)}::text[], ${column((m) => m.to)}::text[], ${column((m) => m.sender ?? null)}::text[],
        ${column((m) => countryOf(m.to))}::text[],
        ${column((m) => m.text)}::text[], ${column((m) => m.sealedText ?? null)}::text[], ${column((m) => m.encoding)}::"MessageEncoding"[], ${column((m) => m.segments)}::int[],
        ${column((m) => m.createdAt.toISOString())}::timestamptz[], ${column((m) => m.status)}::"MessageStatus"[],
        ${column((m) => m.sendAt?.toISOString() ?? null)}::timestamptz[], ${column((m) => m.releaseAt?.toISOString() ?? null)}::timestamptz[],
        ${column((m) => m.validitySeconds)}::int[],
        ${column((m) => m.error?.code ?? null)}::text[], ${column((m) => m.error?.message ?? null)}::text[],
        ${column((m) => (m.status === 'failed' ? newId('evt') : null))}::text[], ${column(failedEventOf)}::jsonb[])
        AS ${ROWS.name}(${ROWS.names})),
    ${segmentReservation(ROWS)},
    ${INSERTED.name} AS (
      INSERT INTO messages (id, account_id, campaign_id, contact_id, "to", sender, country, text, sealed_text, encoding, segments,
        created_at, status, send_at, release_at, expires_at, failed_at, error_code, error_message, quota_day)
      SELECT v.id, v.account_id, v.campaign_id, v.contact_id, v."to", v.sender, v.country, v.text, v.sealed_text, v.encoding, v.segments, v.created_at,
        v.status, v.send_at, v.release_at,
        COALESCE(v.release_at, v.created_at)
          + make_interval(secs => COALESCE(v.validity, s.message_validity, ${DEFAULT_MESSAGE_VALIDITY})),
        CASE WHEN v.status = 'failed' THEN v.created_at END, v.error_code, v.error_message,
        CASE WHEN v.status <> 'failed' THEN r.day_start END
      FROM v
      LEFT JOIN account_settings s ON s.account_id = v.account_id
      LEFT JOIN reserved r ON r.account_id = v.account_id
      WHERE v.status = 'failed' OR r.account_id IS NOT NULL
      ON CONFLICT DO NOTHING
      RETURNING ${INSERTED.select}),
    ${addToMessageStats(Prisma.sql`
      SELECT ${messageStatsKey(INSERTED.column, "''")}, ${messageStatsDelta(INSERTED.column.status, INSERTED.column.segments, 1)}
      FROM ${INSERTED.name}`)},
    told AS (${insertEvents(Prisma.sql`
      SELECT v.event_id, v.account_id, 'message.failed', v.payload, v.campaign_id, v.id, v.created_at
      FROM inserted i JOIN v USING (id) WHERE v.payload IS NOT NULL`)})
    SELECT i.id, i."to", i.status::text AS status, i.account_id,
      CASE WHEN i.status <> 'failed' THEN json_build_object('reserved', d.segments, 'day_segments', r.day_segments,
        'daily_segments', r.daily_segments, 'month_segments', r.month_segments, 'monthly_segments', r.monthly_segments)
      END AS quota
    FROM inserted i
    LEFT JOIN reserved r ON r.account_id = i.account_id
    LEFT JOIN demand d ON d.account_id = i.account_id`;
}

/** A row refused at acceptance tells of its failure as a status change would: a `message.failed` event. */
function failedEventOf(row: NewMessageRow): string | null {
  if (row.status !== 'failed') return null;
  const subject = { id: row.id, to: row.to, campaignId: row.campaignId, sender: row.sender ?? null };
  return JSON.stringify(
    messageStatusPayload(subject, { status: 'failed', at: row.createdAt, error: row.error }),
  );
}

/** Each account's counts after the statement's reservation. */
export function reservationsOf(rows: readonly InsertedMessageRow[]): Map<string, ReservedSegments> {
  const byAccount = new Map<string, ReservedSegments>();
  for (const row of rows) if (row.quota) byAccount.set(row.account_id, row.quota);
  return byAccount;
}
