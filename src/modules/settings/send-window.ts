import { Temporal } from 'temporal-polyfill';
import { z } from 'zod';
import { issue } from '../../lib/validation.js';

export const WEEKDAYS = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'] as const;
export type Weekday = (typeof WEEKDAYS)[number];

/**
 * When messages may go, in the recipient's local time: on each of `days`, from `start` to
 * `end`. An `end` before `start` crosses midnight: the window opened on a listed day closes the
 * next day at `end`.
 */
export interface SendWindow {
  days: Weekday[];
  start: string;
  end: string;
}

const CLOCK_TIME = /^([01][0-9]|2[0-3]):[0-5][0-9]$/;
const clockTime = z
  .string()
  .max(5)
  .refine((value) => CLOCK_TIME.test(value), issue('invalid_format', 'HH:MM, from 00:00 to 23:59'))
  .meta({ pattern: CLOCK_TIME.source });

export const sendWindowInput = z
  .strictObject({
    days: z
      .array(z.enum(WEEKDAYS))
      .min(1)
      .max(7)
      .refine((days) => new Set(days).size === days.length, {
        ...issue('invalid_value'),
        message: 'Each day once',
      })
      .meta({
        description: 'The days it opens on, each once: mon, tue, wed, thu, fri, sat, sun',
        uniqueItems: true,
      }),
    start: clockTime.meta({ description: 'When it opens, local time HH:MM', examples: ['09:00'] }),
    end: clockTime.meta({
      description:
        'When it closes, local time HH:MM, not the same as `start` (for any time, leave the window null); before `start`, it closes the next day',
      examples: ['20:00'],
    }),
  })
  .refine((window) => window.start !== window.end, {
    path: ['end'],
    ...issue('invalid_value'),
    message: 'end must differ from start (for any time, leave the window null)',
  })
  .meta({ description: 'When messages may go, in the recipient’s local time' });

function minutesOf(clock: string): number {
  return Number(clock.slice(0, 2)) * 60 + Number(clock.slice(3, 5));
}

function weekdayOf(date: { dayOfWeek: number }): Weekday {
  return WEEKDAYS[date.dayOfWeek - 1]!;
}

/** Whether the window is open at a local wall-clock time. */
function isOpen(window: SendWindow, local: Temporal.ZonedDateTime): boolean {
  const minute = local.hour * 60 + local.minute;
  const start = minutesOf(window.start);
  const end = minutesOf(window.end);
  const today = window.days.includes(weekdayOf(local));
  if (start < end) return today && minute >= start && minute < end;
  const yesterday = window.days.includes(weekdayOf(local.subtract({ days: 1 })));
  return (today && minute >= start) || (yesterday && minute < end);
}

/**
 * The instant a day's window opens. When its start does not exist that day (the clocks went
 * forward over it), the window opens at the first minute that does; when it exists twice (the
 * clocks went back), at the first of the two.
 */
function openingOn(date: Temporal.PlainDate, start: string, timeZone: string): Temporal.ZonedDateTime {
  const minutes = minutesOf(start);
  const wall = { hour: Math.floor(minutes / 60), minute: minutes % 60 };
  const opening = date.toZonedDateTime({ timeZone, plainTime: Temporal.PlainTime.from(wall) });
  if (opening.hour === wall.hour && opening.minute === wall.minute) return opening;
  return opening.getTimeZoneTransition('previous') ?? opening;
}

/**
 * When a message may go at the earliest, from `at`: `at` itself when the window is open (or
 * there is none), otherwise its next opening, read in `timeZone` (an IANA name) with that zone's
 * real rules.
 */
export function windowOpening(at: Date, window: SendWindow | null, timeZone: string): Date {
  if (!window) return at;
  const local = Temporal.Instant.fromEpochMilliseconds(at.getTime()).toZonedDateTimeISO(timeZone);
  if (isOpen(window, local)) return at;
  const today = local.toPlainDate();
  for (let day = 0; day <= 7; day++) {
    const date = today.add({ days: day });
    if (!window.days.includes(weekdayOf(date))) continue;
    const opening = openingOn(date, window.start, timeZone);
    if (opening.epochMilliseconds > at.getTime()) return new Date(opening.epochMilliseconds);
  }
  throw new Error('a send window with at least one day opens within a week');
}

/** A stored window (JSON) as the rules read it; null for none. */
export function storedWindow(value: unknown): SendWindow | null {
  const parsed = sendWindowInput.safeParse(value);
  return parsed.success ? parsed.data : null;
}
