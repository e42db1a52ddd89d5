import { describe, expect, it } from 'vitest';
import { allowedMessageMoves, MESSAGE_TRANSITIONS } from '../../src/modules/messages/message-transitions.js';

describe('the message transition table', () => {
  it('moves only forward: nothing leaves delivered, failed or cancelled, nothing goes back to scheduled', () => {
    expect(MESSAGE_TRANSITIONS.delivered).toEqual([]);
    expect(MESSAGE_TRANSITIONS.failed).toEqual([]);
    expect(MESSAGE_TRANSITIONS.cancelled).toEqual([]);
    expect(allowedMessageMoves().to).not.toContain('scheduled');
    expect(MESSAGE_TRANSITIONS.queued).not.toContain('cancelled');
  });

  it('lists each allowed move once, as the status-change statement checks them', () => {
    const { from, to } = allowedMessageMoves();
    expect(from.map((status, index) => `${status}→${to[index]}`)).toEqual([
      'scheduled→queued',
      'scheduled→cancelled',
      'scheduled→failed',
      'queued→sent',
      'queued→delivered',
      'queued→failed',
      'sent→delivered',
      'sent→failed',
    ]);
  });
});
