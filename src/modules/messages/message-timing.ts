import { z } from 'zod';
import type { PrismaClient } from '../../generated/prisma/client.js';
import type { Clock } from '../../lib/clock.js';
import { issue } from '../../lib/validation.js';
import { type SendWindow, storedWindow, windowOpening } from '../settings/send-window.js';

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
  /** While scheduled: when it may first go out (its send_at, or its window's opening). */
  releaseAt: Date | null;
  expiresAt: Date;
}

/** What a message's timing is read from: its window (null: any time), its validity, and the zone its window is read in. */
export interface TimingRules {
  window: SendWindow | null;
  validitySeconds: number;
  /** The account's: a contact without a time zone of its own is read in it. */
  timeZone: string;
}

/**
 * The timing rules of an account's messages, with a campaign's or a send's own window and
 * validity before the account's settings, and the defaults after them: the one place both
 * single sends and campaigns read them.
 */
export async function timingRulesOf(
  db: Pick<PrismaClient, 'accountSettings'>,
  accountId: string,
  own: { window?: unknown; validitySeconds?: number | null } = {},
): Promise<TimingRules> {
  const settings = await db.accountSettings.findUnique({
    where: { accountId },
    select: { timezone: true, sendWindow: true, messageValidity: true },
  });
  return {
    window: storedWindow(own.window) ?? storedWindow(settings?.sendWindow),
    validitySeconds: own.validitySeconds ?? settings?.messageValidity ?? DEFAULT_MESSAGE_VALIDITY,
    timeZone: settings?.timezone ?? 'UTC',
  };
}

/**
 * A message may first go out at its send_at (or now), or if a send window applies, at the
 * window's next opening from then in `timeZone`; its validity counts from that moment, so a
 * message waiting for its window never expires before the window opens. It goes at once when
 * that moment is now, and is scheduled for it otherwise.
 */
export function messageTiming(options: {
  now: Date;
  sendAt: Date | null;
  rules: TimingRules;
  /** The recipient's own time zone, when it has one: the window is read in it. */
  timeZone?: string | null;
}): MessageTiming {
  const { now, sendAt, rules } = options;
  const due = windowOpening(sendAt ?? now, rules.window, options.timeZone ?? rules.timeZone);
  const expiresAt = new Date(due.getTime() + rules.validitySeconds * 1000);
  if (due.getTime() <= now.getTime()) return { status: 'queued', sendAt, releaseAt: null, expiresAt };
  return { status: 'scheduled', sendAt, releaseAt: due, expiresAt };
}
