import type { CampaignStatus } from '../../generated/prisma/enums.js';
import type { CampaignEventType } from '../webhooks/webhook-events.js';

interface Transition {
  /** The statuses the action may leave; from any other it is refused (409 invalid_state). */
  from: readonly CampaignStatus[];
  to: CampaignStatus;
  /** The event it tells the campaign's webhook, if any. */
  event?: CampaignEventType;
}

/**
 * The actions a client may take on a campaign: where each may start from, where it goes and
 * what it tells. The only other moves are the service's own: a scheduled campaign starting at
 * its send_at, as `start` does, and a running one finishing when no contact is left.
 */
export const CAMPAIGN_TRANSITIONS = {
  start: { from: ['scheduled'], to: 'running', event: 'campaign.started' },
  pause: { from: ['running'], to: 'paused', event: 'campaign.paused' },
  resume: { from: ['paused'], to: 'running', event: 'campaign.started' },
  cancel: { from: ['scheduled', 'draft', 'running', 'paused'], to: 'cancelled', event: 'campaign.cancelled' },
  schedule: { from: ['draft'], to: 'scheduled' },
  unschedule: { from: ['scheduled'], to: 'draft' },
} as const satisfies Record<string, Transition>;

export type CampaignAction = keyof typeof CAMPAIGN_TRANSITIONS;

export const CAMPAIGN_ACTIONS = Object.keys(CAMPAIGN_TRANSITIONS) as CampaignAction[];

export function transitionOf(action: CampaignAction): Transition {
  return CAMPAIGN_TRANSITIONS[action];
}

/** `scheduled, draft, running or paused → cancelled`: an action's transition as the API documents it. */
export function describeTransition(action: CampaignAction): string {
  const { from, to } = transitionOf(action);
  const sources = from.length === 1 ? from[0] : `${from.slice(0, -1).join(', ')} or ${from.at(-1)}`;
  return `${sources} → ${to}`;
}
