import { NotFoundError } from '../../errors.js';
import type { Prisma, PrismaClient } from '../../generated/prisma/client.js';
import type { Clock } from '../../lib/clock.js';
import { parseInput } from '../../lib/validation.js';
import {
  verificationApprovedPayload,
  verificationExpiredPayload,
  writeEvent,
} from '../webhooks/webhook-events.js';
import { codeMatches } from './verification-codes.js';
import { checkVerificationInput } from './verification-input.js';

/** Checks one verification takes at most, right or wrong: past them even the right code is refused. */
export const MAX_CHECKS = 5;

export type CheckStatus = 'approved' | 'denied' | 'expired' | 'max_attempts_reached';

export interface VerificationCheck {
  id: string;
  status: CheckStatus;
}

interface CheckedRow {
  id: string;
  to: string;
  code_hmac: string;
  status: 'pending' | 'approved' | 'expired' | 'max_attempts_reached';
  attempts: number;
  expires_at: Date;
}

const EXPIRY_BATCH = 1_000;

/**
 * Checks of codes, and the expiry of verifications nobody approved. A check locks its row
 * (FOR UPDATE), so checks of one verification run one after another, in any process: a code is
 * approved once, and the attempts are counted exactly.
 */
export class VerificationChecks {
  constructor(
    private readonly prisma: PrismaClient,
    private readonly clock: Clock,
    private readonly codeKey: Buffer,
  ) {}

  async check(accountId: string, id: string, input: unknown): Promise<VerificationCheck> {
    const { code } = parseInput(checkVerificationInput, input);
    return this.prisma.$transaction(async (tx) => {
      const [row] = await tx.$queryRaw<CheckedRow[]>`
        SELECT id, "to", code_hmac, status::text AS status, attempts, expires_at FROM verifications
        WHERE id = ${id} AND account_id = ${accountId} FOR UPDATE`;
      if (!row) throw new NotFoundError('Verification');
      const now = this.clock.now();
      // Already approved: a replayed or repeated check approves nothing more.
      if (row.status === 'approved') return { id, status: 'denied' };
      if (row.status !== 'pending') return { id, status: row.status };
      if (row.expires_at.getTime() <= now.getTime()) {
        await expire(tx, accountId, row, now);
        return { id, status: 'expired' };
      }
      if (row.attempts >= MAX_CHECKS) return { id, status: 'max_attempts_reached' };
      const attempts = row.attempts + 1;
      if (codeMatches(this.codeKey, row.id, code, row.code_hmac)) {
        await tx.verification.update({
          where: { id },
          data: { attempts, status: 'approved', approvedAt: now },
        });
        await writeEvent(tx, {
          type: 'verification.approved',
          payload: verificationApprovedPayload(row, now),
          accountId,
          campaignId: null,
          at: now,
        });
        return { id, status: 'approved' };
      }
      await tx.verification.update({
        where: { id },
        data: { attempts, ...(attempts >= MAX_CHECKS ? { status: 'max_attempts_reached' } : {}) },
      });
      return { id, status: 'denied' };
    });
  }

  /**
   * Marks the pending verifications past their expiry as expired, each with its
   * `verification.expired` event, in one transaction; how many (a batch at most). Run by the workers' recovery
   * sweep, at their clock.
   */
  async expireDue(): Promise<number> {
    const now = this.clock.now();
    return this.prisma.$transaction(async (tx) => {
      const due = await tx.$queryRaw<(CheckedRow & { account_id: string })[]>`
        SELECT id, account_id, "to", code_hmac, status::text AS status, attempts, expires_at FROM verifications
        WHERE status = 'pending' AND expires_at <= ${now}
        ORDER BY expires_at LIMIT ${EXPIRY_BATCH} FOR UPDATE SKIP LOCKED`;
      for (const row of due) await expire(tx, row.account_id, row, now);
      return due.length;
    });
  }
}

/** Its event tells when it expired, whenever the check or the sweep notices it. */
async function expire(
  tx: Prisma.TransactionClient,
  accountId: string,
  row: CheckedRow,
  now: Date,
): Promise<void> {
  await tx.verification.update({ where: { id: row.id }, data: { status: 'expired' } });
  await writeEvent(tx, {
    type: 'verification.expired',
    payload: verificationExpiredPayload(row, row.expires_at),
    accountId,
    campaignId: null,
    at: now,
  });
}
