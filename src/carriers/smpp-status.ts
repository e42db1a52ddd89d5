import smpp from 'smpp';

/** SMPP command_status names (ESME_ROK, ESME_RTHROTTLED, …) to their values. */
export const STATUS = smpp.errors;

/** What the SMPP carrier counts of its trouble, for GET /health. */
export interface SmppErrorCounts {
  bind_failures: number;
  disconnects: number;
  response_timeouts: number;
  throttled: number;
  rejected: number;
  receipt_failures: number;
  inbound_failures: number;
}

export function noSmppErrors(): SmppErrorCounts {
  return { bind_failures: 0, disconnects: 0, response_timeouts: 0, throttled: 0, rejected: 0, receipt_failures: 0, inbound_failures: 0 };
}

/** A pause that doubles with every attempt, up to half a minute. */
export function backoffMs(baseMs: number, attempt: number): number {
  return Math.min(baseMs * 2 ** attempt, 30_000);
}

export function statusName(status: number): string {
  const name = Object.keys(STATUS).find((key) => STATUS[key] === status);
  return `${name ?? 'unknown status'} (0x${status.toString(16).padStart(8, '0')})`;
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
