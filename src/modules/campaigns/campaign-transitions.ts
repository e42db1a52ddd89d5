import { InvalidStateError } from '../../errors.js';
import type { Prisma } from '../../generated/prisma/client.js';
import type { CampaignStatus } from '../../generated/prisma/enums.js';
import type { CampaignEventType } from '../webhooks/webhook-events.js';
import { type LockedCampaign, writeCampaignEvent } from './campaign-rows.js';

interface Transition {
  /** The statuses the move may leave; from any other it is refused (409 invalid_state). */
  from: readonly CampaignStatus[];
  to: CampaignStatus;
  /** The event it tells the campaign's webhook, if any. */
  event?: CampaignEventType;
  /** A client's action (a mutation and a /v1 route), or a move the service makes by itself. */
  by: 'client' | 'service';
}

/**
 * Every way a campaign's status can change: where each move may start from, where it goes and
 * what it tells. The client's actions are mutations and /v1 routes; the service's own moves
 * start a scheduled campaign at its send_at, finish a running one when no contact is left and no
 * message of it waits, and
 * pause one whose account reached a segment quota (`pausedReason: quota_exceeded`).
 */
export const CAMPAIGN_TRANSITIONS = {
  start: { from: ['scheduled'], to: 'running', event: 'campaign.started', by: 'client' },
  pause: { from: ['running'], to: 'paused', event: 'campaign.paused', by: 'client' },
  resume: { from: ['paused'], to: 'running', event: 'campaign.started', by: 'client' },
  cancel: {
    from: ['scheduled', 'draft', 'running', 'paused'],
    to: 'cancelled',
    event: 'campaign.cancelled',
    by: 'client',
  },
  schedule: { from: ['draft'], to: 'scheduled', by: 'client' },
  unschedule: { from: ['scheduled'], to: 'draft', by: 'client' },
  startAtSendAt: { from: ['scheduled'], to: 'running', event: 'campaign.started', by: 'service' },
  finish: { from: ['running'], to: 'finished', event: 'campaign.finished', by: 'service' },
  pauseAtQuota: { from: ['running'], to: 'paused', event: 'campaign.paused', by: 'service' },
} as const satisfies Record<string, Transition>;

export type CampaignMove = keyof typeof CAMPAIGN_TRANSITIONS;

/** What each status means, as the API describes it. */
export const CAMPAIGN_STATUS_MEANINGS = {
  draft: 'Being prepared; sends nothing',
  scheduled: 'Starts by itself at `sendAt`',
  running: 'Sending its contacts in batches, or waiting for the send window of messages made already',
  paused:
    'Stopped between batches until resumed; its messages waiting for their window are held. `pausedReason` says why when the service paused it',
  finished:
    'Every contact has its message, and none waits for its window any more: each went to the send queue or a carrier, or ended (failed, expired, cancelled)',
  cancelled: 'Stopped for good; what was sent stays sent, what waited is cancelled',
} as const satisfies Record<CampaignStatus, string>;

/** The moves a client may ask for: one mutation and one /v1 route each. */
export type CampaignAction = {
  [Move in CampaignMove]: (typeof CAMPAIGN_TRANSITIONS)[Move]['by'] extends 'client' ? Move : never;
}[CampaignMove];

export const CAMPAIGN_ACTIONS = (Object.keys(CAMPAIGN_TRANSITIONS) as CampaignMove[]).filter(
  (move): move is CampaignAction => CAMPAIGN_TRANSITIONS[move].by === 'client',
);

export function transitionOf(move: CampaignMove): Transition {
  return CAMPAIGN_TRANSITIONS[move];
}

/** `scheduled, draft, running or paused → cancelled`: a move's transition as the API documents it. */
export function describeTransition(move: CampaignMove): string {
  const { from, to } = transitionOf(move);
  const sources = from.length === 1 ? from[0] : `${from.slice(0, -1).join(', ')} or ${from.at(-1)}`;
  return `${sources} → ${to}`;
}

/** The move's rule, when the table allows it from `status`; 409 invalid_state otherwise. */
export function assertMoveAllowed(status: CampaignStatus, move: CampaignMove): Transition {
  const rule = transitionOf(move);
  if (!rule.from.includes(status))
    throw new InvalidStateError(`A ${status} campaign cannot ${move}; allowed from: ${rule.from.join(', ')}`);
  return rule;
}

/**
 * The one place a campaign's status changes: refuses a move its table does not allow from the
 * locked row's status, writes the new status (with what the move sets besides) and its event.
 */
export async function moveCampaign(
  tx: Prisma.TransactionClient,
  campaign: LockedCampaign,
  move: CampaignMove,
  at: Date,
  data: Omit<Prisma.CampaignUpdateInput, 'status'> = {},
): Promise<void> {
  const rule = assertMoveAllowed(campaign.status, move);
  await tx.campaign.update({ where: { id: campaign.id }, data: { ...data, status: rule.to, updatedAt: at } });
  if (rule.event) await writeCampaignEvent(tx, campaign, rule.event, rule.to, at);
}
