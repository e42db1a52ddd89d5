import { z } from 'zod';
import type { Clock } from '../../lib/clock.js';
import { issue } from '../../lib/validation.js';
import { type SendWindow, windowOpening } from '../settings/send-window.js';

/** A message's validity, in seconds: from a minute to three days. */
export const MIN_VALIDITY_SECONDS = 60;
export const MAX_VALIDITY_SECONDS = 259_200;
/** How far ahead a single send may be scheduled. */
export const MAX_SCHEDULE_AHEAD_DAYS = 35;

/** The error of a message not handed to a carrier before its validity ran out. */
export const EXPIRED = {
  code: 'expired',
  message: 'Its validity ran out before a carrier took it',
} as const;

/** The setting message_validity when an account has not changed it. */
export const DEFAULT_MESSAGE_VALIDITY = 86_400;

export const messageValidityInput = z.number().int().min(MIN_VALIDITY_SECONDS).max(MAX_VALIDITY_SECONDS);

/** `send_at`: ISO 8601 with an offset, in the future, at most 35 days ahead of the clock. */
export function sendAtInput(clock: Clock) {
  return z.iso
    .datetime({ offset: true })
    .meta({
      description: `ISO 8601 time with offset at which the message goes (status \`scheduled\` until then), at most ${MAX_SCHEDULE_AHEAD_DAYS} days ahead`,
    })
    .transform((value) => new Date(value))
    .refine(
      (at) => {
        const ahead = at.getTime() - clock.now().getTime();
        return ahead > 0 && ahead <= MAX_SCHEDULE_AHEAD_DAYS * 24 * 60 * 60 * 1000;
      },
      {
        ...issue('invalid_value', `in the future, at most ${MAX_SCHEDULE_AHEAD_DAYS} days ahead`),
        message: `send_at must be in the future and at most ${MAX_SCHEDULE_AHEAD_DAYS} days ahead`,
      },
    );
}

/** When a new message goes and until when it may: what its row is made with. */
export interface MessageTiming {
  status: 'queued' | 'scheduled';
  /** The time the client asked for, if any. */
  sendAt: Date | null;
  /** While scheduled: when it is due (never after it expires). */
  releaseAt: Date | null;
  expiresAt: Date;
}

/**
 * A message goes at its send_at (or now), or if a send window applies, at the window's next
 * opening in `timeZone`; it expires `validitySeconds` after its send_at (or now), whether it
 * waited for a window or not. One due after it expires is released when it expires, and fails.
 */
export function messageTiming(options: {
  now: Date;
  sendAt: Date | null;
  validitySeconds: number;
  window: SendWindow | null;
  timeZone: string;
}): MessageTiming {
  const { now, sendAt } = options;
  const start = sendAt ?? now;
  const expiresAt = new Date(start.getTime() + options.validitySeconds * 1000);
  const due = windowOpening(start, options.window, options.timeZone);
  if (due.getTime() <= now.getTime()) return { status: 'queued', sendAt, releaseAt: null, expiresAt };
  return {
    status: 'scheduled',
    sendAt,
    releaseAt: new Date(Math.min(due.getTime(), expiresAt.getTime())),
    expiresAt,
  };
}
