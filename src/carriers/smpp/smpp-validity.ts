/**
 * A validity period in SMPP 3.4's relative form (YYMMDDhhmmss, then `000R`, which the smpp
 * library adds): how long the SMSC may keep trying the message. Whole seconds, rounded down, at
 * least one; years and months stay 0 (a validity is at most three days).
 */
export function relativeValidityPeriod(seconds: number): string {
  let rest = Math.max(1, Math.floor(seconds));
  const days = Math.floor(rest / 86_400);
  rest -= days * 86_400;
  const hours = Math.floor(rest / 3_600);
  rest -= hours * 3_600;
  const minutes = Math.floor(rest / 60);
  const two = (value: number) => String(value).padStart(2, '0');
  return `0000${two(days)}${two(hours)}${two(minutes)}${two(rest - minutes * 60)}`;
}
