import smpp from 'smpp';

/** SMPP command_status names (ESME_ROK, ESME_RTHROTTLED, …) to their values. */
export const STATUS = smpp.errors;

/** What the SMPP carrier counts of its trouble, for GET /health. */
export interface SmppErrorCounts {
  bindFailures: number;
  disconnects: number;
  responseTimeouts: number;
  throttled: number;
  rejected: number;
  receiptFailures: number;
  inboundFailures: number;
}

export function noSmppErrors(): SmppErrorCounts {
  return {
    bindFailures: 0,
    disconnects: 0,
    responseTimeouts: 0,
    throttled: 0,
    rejected: 0,
    receiptFailures: 0,
    inboundFailures: 0,
  };
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
