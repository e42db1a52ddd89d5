import type { MessageStatus } from '../../generated/prisma/enums.js';

/**
 * Where a message may go from each status. Statuses only move forward, so a late or repeated
 * report (a receipt after the failure, a second `sent`) changes nothing. A scheduled message is
 * released (queued), cancelled, or fails (expired) before it was due; a queued message may be
 * reported delivered or failed before the carrier's answer to the hand-over arrives.
 */
export const MESSAGE_TRANSITIONS = {
  scheduled: ['queued', 'cancelled', 'failed'],
  queued: ['sent', 'delivered', 'failed'],
  sent: ['delivered', 'failed'],
  delivered: [],
  failed: [],
  cancelled: [],
} as const satisfies Record<MessageStatus, readonly MessageStatus[]>;

/** What each status means, as the API describes it. */
export const MESSAGE_STATUS_MEANINGS = {
  scheduled: 'Waiting for its send_at or its send window; may be cancelled until then',
  queued: 'Accepted and waiting for the carrier',
  sent: 'Taken by the carrier; no delivery report yet',
  delivered: 'The carrier reported it delivered to the handset',
  failed: 'Not delivered: `error` says why (`expired` when its validity ran out first)',
  cancelled: 'Cancelled while scheduled; never sent',
} as const satisfies Record<MessageStatus, string>;

/** A status a message can be moved to. */
export type MessageTarget = (typeof MESSAGE_TRANSITIONS)[MessageStatus][number];

/** Every allowed move as two parallel columns, for a statement that checks them row by row. */
export function allowedMessageMoves(): { from: MessageStatus[]; to: MessageTarget[] } {
  const moves = (Object.entries(MESSAGE_TRANSITIONS) as [MessageStatus, readonly MessageTarget[]][]).flatMap(
    ([from, targets]) => targets.map((to) => [from, to] as const),
  );
  return { from: moves.map(([from]) => from), to: moves.map(([, to]) => to) };
}
