import { sqlRelation } from '../../db/sql-relation.js';
import { Prisma, type PrismaClient } from '../../generated/prisma/client.js';
import { Batcher } from '../../lib/batcher.js';
import { newId } from '../../lib/ids.js';
import type { Metrics } from '../../metrics/metrics.js';
import type { LivePublisher } from '../live/live-events.js';
import { segmentGiveBack } from '../quotas/segment-reservation.js';
import { countMoves } from '../stats/stats-rollups.js';
import {
  insertEvents,
  type MessageStatusEvent,
  type MessageSubject,
  messageStatusPayload,
} from '../webhooks/webhook-events.js';
import { allowedMessageMoves, type MessageTarget } from './message-transitions.js';

const ALLOWED_MOVES = allowedMessageMoves();

/** A status change of one message; `carrier` and `carrierMessageId` come with what a carrier said. */
export interface StatusChange extends Omit<MessageStatusEvent, 'status'> {
  message: MessageSubject;
  status: MessageTarget;
  carrier?: string;
  carrierMessageId?: string;
}

/** The moves that tell of themselves as events (and so may reach a webhook): the carrier's side. */
function eventPayloadOf(change: StatusChange): string | null {
  const { status } = change;
  if (status !== 'sent' && status !== 'delivered' && status !== 'failed') return null;
  return JSON.stringify(messageStatusPayload(change.message, { ...change, status }));
}

// Batches grow with load by themselves (see Batcher); two run side by side: more would make
// them smaller, and a statement's round trip (a write to the socket each) costs more than its rows.
export const STATEMENT_BATCHING = { maxBatch: 100, maxInFlight: 2 };

/**
 * The messages a status change moved, as the statement's RETURNING gives them (from `m`, the
 * message after the change, `c`, the change, and `target`, the message before it): what the
 * quota's give-back and the statistics read.
 */
const MOVED = sqlRelation('moved', {
  id: 'm.id',
  account_id: 'm.account_id',
  campaign_id: 'm.campaign_id',
  status: 'c.status',
  at: 'c.at',
  event_id: 'c.event_id',
  // The sender as the row holds it (chosen at acceptance, or the carrier's at the claim).
  payload: "c.payload || jsonb_build_object('from', m.sender)",
  segments: 'm.segments',
  quota_day: 'm.quota_day',
  created_at: 'm.created_at',
  send_at: 'm.send_at',
  country: 'm.country',
  carrier: 'm.carrier',
  from_status: 'target.status',
  from_carrier: 'target.carrier',
  // A send interrupted inside the carrier call may have gone: its segments stay spent.
  reached_carrier:
    "(m.sent_at IS NOT NULL OR m.carrier IS NOT NULL OR m.error_code IS NOT DISTINCT FROM 'unknown_outcome')",
});

/**
 * The one way a message's status changes, each change with its event, for the workers and the
 * carrier's reports. A change the transition table (message-transitions.ts) does not allow from
 * the message's current status leaves it alone and writes no event: a late or repeated report
 * is answered "already moved on". Concurrent changes share a statement, which also gives back
 * the quota segments of messages that fail or are cancelled before reaching a carrier.
 */
export class MessageStatusChanges {
  private readonly changes = new Batcher(
    (changes: StatusChange[]) => this.applyMany(changes),
    STATEMENT_BATCHING,
  );

  constructor(
    private readonly prisma: PrismaClient,
    private readonly metrics: Metrics,
    private readonly live: LivePublisher,
  ) {}

  /** True when the message moved; false when it had already moved on. */
  apply(change: StatusChange): Promise<boolean> {
    return this.changes.add(change);
  }

  /**
   * One statement for the whole batch. Rows are locked in id order, so batches running side by
   * side cannot deadlock. A message twice in one batch (a repeated report) goes through a second
   * statement, which then finds it moved on.
   */
  private async applyMany(changes: StatusChange[]): Promise<boolean[]> {
    const seen = new Set<string>();
    const first = changes.map(({ message }) => !seen.has(message.id) && Boolean(seen.add(message.id)));
    const batch = changes.filter((_, index) => first[index]);
    const moved = new Set(await this.applyDistinct(batch));
    const repeats = changes.filter((_, index) => !first[index]);
    const repeatsMoved = repeats.length > 0 ? await this.applyMany(repeats) : [];
    let repeat = 0;
    return changes.map((change, index) =>
      first[index] ? moved.has(change.message.id) : repeatsMoved[repeat++]!,
    );
  }

  /**
   * The messages are found by id alone and their status read from the locked rows (as the send
   * claim does): asked for `status IN ('queued', 'sent')`, the planner may read every queued
   * message for each batch when its statistics say there are none.
   */
  private async applyDistinct(changes: StatusChange[]): Promise<string[]> {
    const column = <T>(pick: (change: StatusChange) => T) => changes.map(pick);
    const rows = await this.prisma.$queryRaw<{ message_id: string; account_id: string }[]>`
      WITH change AS (
        SELECT * FROM unnest(
          ${column((c) => c.message.id)}::text[], ${column((c) => c.status)}::text[], ${column((c) => c.at.toISOString())}::timestamptz[],
          ${column((c) => c.carrier ?? null)}::text[], ${column((c) => c.carrierMessageId ?? null)}::text[],
          ${column((c) => c.error?.code ?? null)}::text[], ${column((c) => c.error?.message ?? null)}::text[],
          ${column(() => newId('evt'))}::text[], ${column(eventPayloadOf)}::jsonb[])
          AS c(id, status, at, carrier, carrier_message_id, error_code, error_message, event_id, payload)),
      allowed AS (
        SELECT * FROM unnest(${ALLOWED_MOVES.from}::text[], ${ALLOWED_MOVES.to}::text[]) AS a(from_status, to_status)),
      target AS (
        SELECT m.id, m.status, m.carrier FROM messages m JOIN change c USING (id)
        ORDER BY m.id FOR UPDATE OF m),
      ${MOVED.name} AS (
        UPDATE messages m SET
          status = c.status::"MessageStatus",
          sent_at = CASE WHEN c.status = 'sent' THEN c.at ELSE COALESCE(m.sent_at, CASE WHEN c.carrier IS NOT NULL THEN c.at END) END,
          delivered_at = CASE WHEN c.status = 'delivered' THEN c.at ELSE m.delivered_at END,
          failed_at = CASE WHEN c.status = 'failed' THEN c.at ELSE m.failed_at END,
          error_code = COALESCE(c.error_code, m.error_code),
          error_message = COALESCE(c.error_message, m.error_message),
          carrier = COALESCE(m.carrier, c.carrier),
          cancelled_at = CASE WHEN c.status = 'cancelled' THEN c.at ELSE m.cancelled_at END,
          release_at = NULL,
          -- A sealed text is the carrier's alone: kept only while the message waits for it.
          sealed_text = CASE WHEN c.status = 'queued' THEN m.sealed_text END,
          carrier_message_id = COALESCE(m.carrier_message_id, c.carrier_message_id)
        FROM change c, target
        WHERE m.id = c.id AND target.id = m.id
          AND EXISTS (SELECT 1 FROM allowed a WHERE a.from_status = target.status::text AND a.to_status = c.status)
        RETURNING ${MOVED.select}),
      ${segmentGiveBack(MOVED)},
      ${countMoves(MOVED)},
      told AS (${insertEvents(Prisma.sql`
        SELECT event_id, account_id, 'message.' || status, payload, campaign_id, id, at
        FROM moved WHERE payload IS NOT NULL`)})
      SELECT id AS message_id, account_id FROM moved`;
    this.countMoved(changes, rows);
    this.publishMoved(changes, rows);
    return rows.map((row) => row.message_id);
  }

  /** Live updates of the messages that did move, for their accounts' subscribers. */
  private publishMoved(changes: StatusChange[], moved: { message_id: string; account_id: string }[]): void {
    if (moved.length === 0) return;
    const accountOf = new Map(moved.map((row) => [row.message_id, row.account_id]));
    this.live.messages(
      changes.flatMap(({ message: { id, to, campaignId }, status }) => {
        const accountId = accountOf.get(id);
        return accountId ? [{ accountId, id, to, campaignId, status }] : [];
      }),
    );
  }

  /** The metrics of the messages that did move (one row per moved message). */
  private countMoved(changes: StatusChange[], moved: { message_id: string }[]): void {
    const movedIds = new Set(moved.map((row) => row.message_id));
    for (const change of changes)
      if (movedIds.has(change.message.id)) this.metrics.messageTransitions.inc({ status: change.status });
  }
}
