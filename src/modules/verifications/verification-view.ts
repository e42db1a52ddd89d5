import type { MessageStatus, VerificationStatus } from '../../generated/prisma/client.js';

// What a verification answers: never its code, nor the code's HMAC.

/** `failed`: the message of its last code failed (the `error` says why); the others as stored. */
export type VerificationShownStatus = VerificationStatus | 'failed';

export interface VerificationView {
  id: string;
  to: string;
  status: VerificationShownStatus;
  attempts: number;
  sends: number;
  messageId: string | null;
  error: { code: string; message: string } | null;
  expiresAt: Date;
  createdAt: Date;
  approvedAt: Date | null;
}

interface ViewRow {
  id: string;
  to: string;
  status: VerificationStatus;
  attempts: number;
  sends: number;
  messageId: string | null;
  expiresAt: Date;
  createdAt: Date;
  approvedAt: Date | null;
}

interface ViewMessage {
  status: MessageStatus;
  errorCode: string | null;
  errorMessage: string | null;
}

/** A pending verification past its expiry is shown expired before the sweep records it. */
export function viewOf(row: ViewRow, message: ViewMessage | null, now: Date): VerificationView {
  const failed = row.status === 'pending' && message?.status === 'failed';
  const expired = row.status === 'pending' && row.expiresAt.getTime() <= now.getTime();
  return {
    id: row.id,
    to: row.to,
    status: failed ? 'failed' : expired ? 'expired' : row.status,
    attempts: row.attempts,
    sends: row.sends,
    messageId: row.messageId,
    error: failed ? { code: message.errorCode ?? 'failed', message: message.errorMessage ?? '' } : null,
    expiresAt: row.expiresAt,
    createdAt: row.createdAt,
    approvedAt: row.approvedAt,
  };
}
