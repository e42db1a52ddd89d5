import type { NewMessageRow } from './message-rows.js';

// What a single send answers, made from the row it accepted.

/** What a send answers: the message as it was accepted, also on an idempotent replay. */
export interface MessageAcceptance {
  id: string;
  /** `scheduled` when it waits for its send_at or its window, `queued` when it goes at once. */
  status: 'queued' | 'scheduled';
  to: string;
  campaignId: string | null;
  sendAt: Date | null;
  /** While scheduled: when it is due to go (its send_at, or its window's opening). */
  waitsUntil: Date | null;
  /** The sender it goes from, chosen as it was accepted; null when it takes the carrier's as it goes. */
  from: string | null;
  replayed: boolean;
}

/** A single send's row: it goes at once or waits, never fails at acceptance. */
export type AcceptedRow = NewMessageRow & { status: 'queued' | 'scheduled' };

export function acceptanceOf(message: AcceptedRow, replayed: boolean): MessageAcceptance {
  return {
    id: message.id,
    status: message.status,
    to: message.to,
    campaignId: message.campaignId,
    sendAt: message.sendAt,
    waitsUntil: message.status === 'scheduled' ? message.releaseAt : null,
    from: message.sender ?? null,
    replayed,
  };
}
