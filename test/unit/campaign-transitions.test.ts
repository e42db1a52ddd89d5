import { describe, expect, it } from 'vitest';
import { InvalidStateError } from '../../src/errors.js';
import {
  assertMoveAllowed,
  CAMPAIGN_ACTIONS,
  CAMPAIGN_TRANSITIONS,
  describeTransition,
  transitionOf,
} from '../../src/modules/campaigns/campaign-transitions.js';
import { routes } from '../../src/rest/route-table.js';

describe('the campaign transition table', () => {
  it('describes each action as the API documents it', () => {
    expect(
      Object.fromEntries(CAMPAIGN_ACTIONS.map((action) => [action, describeTransition(action)])),
    ).toEqual({
      start: 'scheduled → running',
      pause: 'running → paused',
      resume: 'paused → running',
      cancel: 'scheduled, draft, running or paused → cancelled',
      schedule: 'draft → scheduled',
      unschedule: 'scheduled → draft',
    });
  });

  it('lets no action leave a finished or cancelled campaign', () => {
    for (const { from } of Object.values(CAMPAIGN_TRANSITIONS)) {
      expect(from).not.toContain('finished');
      expect(from).not.toContain('cancelled');
    }
  });

  it('tells the webhook of starts, pauses and cancellations, not of scheduling', () => {
    expect(
      Object.fromEntries(CAMPAIGN_ACTIONS.map((action) => [action, transitionOf(action).event ?? null])),
    ).toEqual({
      start: 'campaign.started',
      pause: 'campaign.paused',
      resume: 'campaign.started',
      cancel: 'campaign.cancelled',
      schedule: null,
      unschedule: null,
    });
  });

  it('gives every action a /v1 route that runs its mutation and documents its transition', () => {
    for (const action of CAMPAIGN_ACTIONS) {
      const route = routes.find(
        (candidate) => candidate.method === 'POST' && candidate.path === `/v1/campaigns/:campaign/${action}`,
      );
      expect(route, action).toMatchObject({
        operation: `${action[0]!.toUpperCase()}${action.slice(1)}Campaign`,
        status: 200,
        description: `${describeTransition(action)}; 409 invalid_state from any other status`,
      });
    }
  });

  it('holds the service its own moves too, and refuses every move the table does not list', () => {
    expect(describeTransition('startAtSendAt')).toBe('scheduled → running');
    expect(describeTransition('finish')).toBe('running → finished');
    expect(CAMPAIGN_ACTIONS).not.toContain('finish');
    expect(() => assertMoveAllowed('paused', 'finish')).toThrow(/A paused campaign cannot finish/);
    expect(() => assertMoveAllowed('draft', 'startAtSendAt')).toThrow(InvalidStateError);
    expect(assertMoveAllowed('running', 'finish').to).toBe('finished');
  });
});
