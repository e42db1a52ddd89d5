import type { PrismaClient } from '../../generated/prisma/client.js';

// The two statements of a webhook attempt (src/modules/webhooks/webhook-deliveries.ts), each made
// for the attempts of many jobs at once: the claim before it, and its log and outcome after it.

// A claimed attempt holds its delivery this much longer than the callback may take, for the
// secret, the log write and a busy event loop; a crash mid-attempt frees it once this is over.
const CLAIM_MARGIN_MS = 30_000;
// BullMQ's delays and the clocks of several processes may disagree by this much.
const CLOCK_TOLERANCE_MS = 1_000;

/** A delivery and the attempt a job is to make of it. */
export interface Claim {
  delivery: string;
  attempt: number;
}

export interface AttemptRow {
  id: string;
  attempts: number;
  account_id: string;
  event_id: string;
  webhook_id: string | null;
  body: string | null;
  url: string | null;
  secret_sealed: string | null;
}

/** One attempt for the log, and what it means for its pending delivery. */
export interface AttemptRecord {
  id: string;
  delivery: string;
  accountId: string;
  eventId: string;
  webhookId: string | null;
  url: string;
  attempt: number;
  statusCode: number | null;
  durationMs: number;
  error: string | null;
  createdAt: Date;
  /** When the next attempt is due; null when the delivery is over. */
  nextAttemptAt: Date | null;
}

/**
 * Claims attempts: a delivery that still owes the attempt and is due is held until the attempt
 * is over (its next attempt pushed past the callback's timeout), and answered with what the
 * attempt needs; any other claim is answered null.
 */
export async function claimAttempts(
  prisma: PrismaClient,
  claims: Claim[],
  now: number,
  timeoutMs: number,
): Promise<(AttemptRow | null)[]> {
  const rows = await prisma.$queryRaw<AttemptRow[]>`
    WITH claimed AS (
      UPDATE pending_webhook_deliveries p
      SET next_attempt_at = ${new Date(now + timeoutMs + CLAIM_MARGIN_MS)}
      FROM unnest(${claims.map((claim) => claim.delivery)}::text[], ${claims.map((claim) => claim.attempt)}::int[])
        AS v(id, attempt)
      WHERE p.id = v.id AND p.attempts = v.attempt - 1 AND p.next_attempt_at <= ${new Date(now + CLOCK_TOLERANCE_MS)}
      RETURNING p.id, p.attempts, p.account_id, p.event_id, p.webhook_id, p.campaign_id
    )
    SELECT d.id, d.attempts, d.account_id, d.event_id, d.webhook_id, e.body,
      COALESCE(w.url, c.webhook) AS url, a.webhook_secret_sealed AS secret_sealed
    FROM claimed d
    JOIN events e ON e.id = d.event_id
    JOIN accounts a ON a.id = d.account_id
    LEFT JOIN webhooks w ON w.id = d.webhook_id AND w.deleted_at IS NULL
    LEFT JOIN campaigns c ON c.id = d.campaign_id AND c.deleted_at IS NULL`;
  const claimed = new Map(rows.map((row) => [row.id, row]));
  return claims.map((claim) => {
    const row = claimed.get(claim.delivery);
    if (!row || row.attempts !== claim.attempt - 1) return null;
    // The same claim twice in one batch: the attempt is made once.
    claimed.delete(claim.delivery);
    return row;
  });
}

/** Logs attempts and moves their deliveries on (next attempt due, or over) in one statement. */
export async function writeAttempts(prisma: PrismaClient, records: AttemptRecord[]): Promise<undefined[]> {
  const column = <T>(pick: (record: AttemptRecord) => T) => records.map(pick);
  await prisma.$executeRaw`
    WITH v AS (
      SELECT * FROM unnest(
        ${column((r) => r.id)}::text[], ${column((r) => r.delivery)}::text[], ${column((r) => r.accountId)}::text[],
        ${column((r) => r.eventId)}::text[], ${column((r) => r.webhookId)}::text[], ${column((r) => r.url)}::text[],
        ${column((r) => r.attempt)}::int[], ${column((r) => r.statusCode)}::int[], ${column((r) => r.durationMs)}::int[],
        ${column((r) => r.error)}::text[], ${column((r) => r.createdAt.toISOString())}::timestamptz[],
        ${column((r) => r.nextAttemptAt?.toISOString() ?? null)}::timestamptz[])
      AS v(id, delivery, account_id, event_id, webhook_id, url, attempt, status_code, duration_ms, error, created_at, next_attempt_at)
    ), logged AS (
      INSERT INTO webhook_deliveries (id, account_id, event_id, webhook_id, url, attempt, status_code, duration_ms, error, created_at)
      SELECT id, account_id, event_id, webhook_id, url, attempt, status_code, duration_ms, error, created_at FROM v
    ), over AS (
      DELETE FROM pending_webhook_deliveries p USING v WHERE p.id = v.delivery AND v.next_attempt_at IS NULL
    )
    UPDATE pending_webhook_deliveries p SET attempts = v.attempt, next_attempt_at = v.next_attempt_at
    FROM v WHERE p.id = v.delivery AND v.next_attempt_at IS NOT NULL AND p.attempts = v.attempt - 1`;
  return records.map(() => undefined);
}
