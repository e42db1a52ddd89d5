import { NotFoundError } from '../../errors.js';
import { Prisma, type PrismaClient } from '../../generated/prisma/client.js';
import type { Clock } from '../../lib/clock.js';
import { newId } from '../../lib/ids.js';
import { parseInput } from '../../lib/validation.js';
import {
  insertEvents,
  verificationApprovedPayload,
  verificationExpiredPayload,
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
 * Checks of codes, and the expiry of verifications nobody approved. A check reads its row,
 * compares the code, then counts the attempt in one statement that holds only while the row is
 * as it read it, so checks of one verification count one by one in any process: a code is
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
    for (;;) {
      const checked = await this.attempt(accountId, id, code);
      if (checked) return checked;
    }
  }

  /** One reading of the row and what it makes of the code; null when the row changed meanwhile. */
  private async attempt(accountId: string, id: string, code: string): Promise<VerificationCheck | null> {
    const [row] = await this.prisma.$queryRaw<CheckedRow[]>`
      SELECT id, "to", code_hmac, status::text AS status, attempts, expires_at FROM verifications
      WHERE id = ${id} AND account_id = ${accountId}`;
    if (!row) throw new NotFoundError('Verification');
    const now = this.clock.now();
    // Already approved: a replayed or repeated check approves nothing more.
    if (row.status === 'approved') return { id, status: 'denied' };
    if (row.status !== 'pending') return { id, status: row.status };
    if (row.expires_at.getTime() <= now.getTime()) {
      await this.expire(accountId, row, now);
      return { id, status: 'expired' };
    }
    if (row.attempts >= MAX_CHECKS) return { id, status: 'max_attempts_reached' };
    const matches = codeMatches(this.codeKey, row.id, code, row.code_hmac);
    // Null: another check, a resend or the expiry changed the row since it was read.
    const counted = await this.count(accountId, row, matches, now);
    return counted ? { id, status: counted === 'approved' ? 'approved' : 'denied' } : null;
  }

  /**
   * The check's attempt, in one statement that holds only while the row is as it was read
   * (pending, under the limit, unexpired, the same code): under its row lock, exactly one check
   * approves, and attempts are counted one by one, whatever process makes them.
   */
  private async count(
    accountId: string,
    row: CheckedRow,
    matches: boolean,
    now: Date,
  ): Promise<string | null> {
    const payload = JSON.stringify(verificationApprovedPayload(row, now));
    const [counted] = await this.prisma.$queryRaw<{ status: string }[]>`
      WITH checked AS (
        UPDATE verifications SET attempts = attempts + 1,
          status = CASE WHEN ${matches}::boolean THEN 'approved'::"VerificationStatus"
            WHEN attempts + 1 >= ${MAX_CHECKS} THEN 'max_attempts_reached'::"VerificationStatus" ELSE status END,
          approved_at = CASE WHEN ${matches}::boolean THEN ${now}::timestamptz ELSE approved_at END
        WHERE id = ${row.id} AND account_id = ${accountId} AND status = 'pending' AND attempts < ${MAX_CHECKS}
          AND expires_at > ${now}::timestamptz AND code_hmac = ${row.code_hmac}
        RETURNING account_id, status),
      told AS (${insertEvents(Prisma.sql`
        SELECT ${newId('evt')}, account_id, 'verification.approved', ${payload}::jsonb, NULL, NULL, ${now}::timestamptz
        FROM checked WHERE status = 'approved'`)})
      SELECT status::text AS status FROM checked`;
    return counted?.status ?? null;
  }

  /** Its event tells when it expired, whenever a check or the sweep notices it; told once. */
  private async expire(accountId: string, row: CheckedRow, now: Date): Promise<void> {
    const payload = JSON.stringify(verificationExpiredPayload(row, row.expires_at));
    await this.prisma.$executeRaw`
      WITH expired AS (
        UPDATE verifications SET status = 'expired'
        WHERE id = ${row.id} AND account_id = ${accountId} AND status = 'pending' AND expires_at <= ${now}::timestamptz
        RETURNING account_id)
      ${insertEvents(Prisma.sql`
        SELECT ${newId('evt')}, account_id, 'verification.expired', ${payload}::jsonb, NULL, NULL, ${now}::timestamptz
        FROM expired`)}`;
  }

  /**
   * Marks the pending verifications past their expiry as expired, each with its
   * `verification.expired` event (a check that noticed first has told it); how many it found (a
   * batch at most). Run by the workers' recovery sweep, at their clock.
   */
  async expireDue(): Promise<number> {
    const now = this.clock.now();
    const due = await this.prisma.$queryRaw<(CheckedRow & { account_id: string })[]>`
      SELECT id, account_id, "to", code_hmac, status::text AS status, attempts, expires_at FROM verifications
      WHERE status = 'pending' AND expires_at <= ${now}::timestamptz
      ORDER BY expires_at LIMIT ${EXPIRY_BATCH}`;
    for (const row of due) await this.expire(row.account_id, row, now);
    return due.length;
  }
}
