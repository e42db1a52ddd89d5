import { NotFoundError } from '../../errors.js';
import { Prisma, type PrismaClient } from '../../generated/prisma/client.js';
import { Batcher } from '../../lib/batcher.js';
import type { Clock } from '../../lib/clock.js';
import { newId } from '../../lib/ids.js';
import { parseInput } from '../../lib/validation.js';
import { STATEMENT_BATCHING } from '../messages/message-status-changes.js';
import {
  insertEvents,
  verificationApprovedPayload,
  verificationExpiredPayload,
} from '../webhooks/webhook-events.js';
import { codeHmac } from './verification-codes.js';
import { checkVerificationInput } from './verification-input.js';

/** Checks one verification takes at most, right or wrong: past them even the right code is refused. */
export const MAX_CHECKS = 5;

export type CheckStatus = 'approved' | 'denied' | 'expired' | 'max_attempts_reached';

export interface VerificationCheck {
  id: string;
  status: CheckStatus;
}

type StoredStatus = 'pending' | 'approved' | 'expired' | 'max_attempts_reached';

interface CheckedRow {
  id: string;
  to: string;
  status: StoredStatus;
  attempts: number;
  expires_at: Date;
}

/** One check waiting for its batch: the HMAC of the code it was given, made for the verification it names. */
interface PendingCheck {
  accountId: string;
  id: string;
  codeHmac: string;
  now: Date;
}

/** What the statement did with a check: the row as locked (null: none of the account) and, if it counted, the status it left. */
interface CheckOutcome {
  row: CheckedRow | null;
  counted: StoredStatus | null;
}

const EXPIRY_BATCH = 1_000;

/**
 * Checks of codes, and the expiry of verifications nobody approved. Checks arriving together
 * share one statement (batched as message status changes are): it locks their rows, counts each
 * attempt on a pending, unexpired row under the limit, and approves the one whose stored HMAC is
 * the HMAC of the code given. Under the row lock, checks of one verification count one by one in
 * any process: a code is approved once, and the attempts are counted exactly.
 */
export class VerificationChecks {
  private readonly checks = new Batcher(
    (checks: PendingCheck[]) => this.countMany(checks),
    STATEMENT_BATCHING,
  );

  constructor(
    private readonly prisma: PrismaClient,
    private readonly clock: Clock,
    private readonly codeKey: Buffer,
  ) {}

  async check(accountId: string, id: string, input: unknown): Promise<VerificationCheck> {
    const { code } = parseInput(checkVerificationInput, input);
    const now = this.clock.now();
    const { row, counted } = await this.checks.add({
      accountId,
      id,
      codeHmac: codeHmac(this.codeKey, id, code),
      now,
    });
    if (!row) throw new NotFoundError('Verification');
    if (counted) return { id, status: counted === 'approved' ? 'approved' : 'denied' };
    // Already approved: a replayed or repeated check approves nothing more.
    if (row.status === 'approved') return { id, status: 'denied' };
    if (row.status !== 'pending') return { id, status: row.status };
    if (row.expires_at.getTime() <= now.getTime()) {
      await this.expire(accountId, row, now);
      return { id, status: 'expired' };
    }
    // Pending, unexpired and not counted: its attempts are spent.
    return { id, status: 'max_attempts_reached' };
  }

  /** A verification checked twice in one batch goes through a second statement, which then sees the first. */
  private async countMany(checks: PendingCheck[]): Promise<CheckOutcome[]> {
    const seen = new Set<string>();
    const first = checks.map(({ id }) => !seen.has(id) && Boolean(seen.add(id)));
    const outcomes = await this.countDistinct(checks.filter((_, index) => first[index]));
    const repeats = checks.filter((_, index) => !first[index]);
    const repeatOutcomes = repeats.length > 0 ? await this.countMany(repeats) : [];
    let [distinct, repeat] = [0, 0];
    return checks.map((_, index) => (first[index] ? outcomes[distinct++]! : repeatOutcomes[repeat++]!));
  }

  /**
   * One statement for checks of different verifications. Rows are locked in id order (batches
   * side by side cannot deadlock), and the locked rows are the latest committed: what the
   * attempt's CASE and the answer read. The HMACs are compared in SQL: both are keyed digests,
   * so how long a comparison takes tells nothing usable about the code (docs/security.md).
   */
  private async countDistinct(checks: PendingCheck[]): Promise<CheckOutcome[]> {
    const column = <T>(pick: (check: PendingCheck) => T) => checks.map(pick);
    const rows = await this.prisma.$queryRaw<(CheckedRow & { counted: StoredStatus | null })[]>`
      WITH c AS (
        SELECT * FROM unnest(${column((c) => c.id)}::text[], ${column((c) => c.accountId)}::text[],
          ${column((c) => c.codeHmac)}::text[], ${column((c) => c.now.toISOString())}::timestamptz[],
          ${column(() => newId('evt'))}::text[],
          ${column((c) => JSON.stringify(verificationApprovedPayload({ id: c.id, to: '' }, c.now)))}::jsonb[])
          WITH ORDINALITY AS c(id, account_id, code_hmac, at, event_id, payload, ord)),
      target AS (
        SELECT v.id, v."to", v.status, v.attempts, v.expires_at FROM verifications v
        JOIN c ON v.id = c.id AND v.account_id = c.account_id ORDER BY v.id FOR UPDATE OF v),
      checked AS (
        UPDATE verifications v SET attempts = v.attempts + 1,
          status = CASE WHEN v.code_hmac = c.code_hmac THEN 'approved'::"VerificationStatus"
            WHEN v.attempts + 1 >= ${MAX_CHECKS} THEN 'max_attempts_reached'::"VerificationStatus" ELSE v.status END,
          approved_at = CASE WHEN v.code_hmac = c.code_hmac THEN c.at ELSE v.approved_at END
        FROM c, target t
        WHERE v.id = c.id AND t.id = c.id AND t.status = 'pending' AND t.attempts < ${MAX_CHECKS}
          AND t.expires_at > c.at
        RETURNING c.ord, v.account_id, v."to", v.status, c.event_id, c.payload, c.at),
      told AS (${insertEvents(Prisma.sql`
        SELECT event_id, account_id, 'verification.approved', payload || jsonb_build_object('to', "to"), NULL, NULL, at
        FROM checked WHERE status = 'approved'`)})
      SELECT t.id, t."to", t.status::text AS status, t.attempts, t.expires_at, checked.status::text AS counted
      FROM c LEFT JOIN target t ON t.id = c.id LEFT JOIN checked ON checked.ord = c.ord ORDER BY c.ord`;
    return rows.map(({ counted, ...row }) => ({ row: row.id ? row : null, counted }));
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
      SELECT id, account_id, "to", status::text AS status, attempts, expires_at FROM verifications
      WHERE status = 'pending' AND expires_at <= ${now}::timestamptz
      ORDER BY expires_at LIMIT ${EXPIRY_BATCH}`;
    for (const row of due) await this.expire(row.account_id, row, now);
    return due.length;
  }
}
