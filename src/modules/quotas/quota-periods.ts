import { Temporal } from 'temporal-polyfill';

export type QuotaPeriod = 'daily' | 'monthly';

/** Whole seconds from `at` until the local day (or month) of `at` ends in the time zone; at least 1. */
export function secondsToPeriodEnd(at: Date, timeZone: string, period: QuotaPeriod): number {
  const local = Temporal.Instant.fromEpochMilliseconds(at.getTime()).toZonedDateTimeISO(timeZone);
  const today = local.toPlainDate();
  const next = period === 'daily' ? today.add({ days: 1 }) : today.with({ day: 1 }).add({ months: 1 });
  const end = next.toZonedDateTime({ timeZone }).epochMilliseconds;
  return Math.max(1, Math.ceil((end - at.getTime()) / 1000));
}
