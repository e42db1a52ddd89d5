import { createHash } from 'node:crypto';
import type pg from 'pg';
import { RateLimitedError } from '../../errors.js';

// The limits of a start, decided under a transaction lock of its account and number: the
// statements run on the pool under Prisma, as a start's transaction is most of its cost.

/** The resend cool-down: the first resend waits this long after the start, each next one twice the last. */
export const RESEND_COOL_DOWN_MS = 30_000;
/** Codes one verification sends at most: its start and four resends. */
export const MAX_SENDS = 5;
/** New verifications of one number in one account: per rolling hour and per rolling day. */
export const STARTS_PER_HOUR = 5;
export const STARTS_PER_DAY = 10;

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

/** What a start wrote of a verification, as a read would answer it. */
export interface PlannedRow {
  id: string;
  to: string;
  status: 'pending';
  attempts: number;
  sends: number;
  codeHmac: string;
  lastSentAt: Date;
  messageId: string | null;
  expiresAt: Date;
  createdAt: Date;
  approvedAt: null;
}

/** What a start changed: a new verification (`before` null) or a resend of a pending one. */
export interface Planned {
  row: PlannedRow;
  before: PlannedRow | null;
}

export interface PlanRequest {
  accountId: string;
  to: string;
  country: string | null;
  now: Date;
  expiresAt: Date;
  messageId: string;
  /** The new verification's id, and the HMAC of the code for a verification id. */
  newId: string;
  hmacFor(verificationId: string): string;
}

interface PendingJson {
  id: string;
  attempts: number;
  sends: number;
  code_hmac: string;
  last_sent_at: string;
  message_id: string | null;
  expires_at: string;
  created_at: string;
}

/** Commits what `work` did, unless it throws. */
async function inTransaction<T>(pool: pg.Pool, lockKey: bigint, work: (client: pg.PoolClient) => Promise<T>) {
  const client = await pool.connect();
  let broken: Error | undefined;
  try {
    // The key is a number of our own making, so it is written into the text: one round trip.
    await client.query(`BEGIN; SELECT pg_advisory_xact_lock(${lockKey})`);
    const result = await work(client);
    await client.query('COMMIT');
    return result;
  } catch (error) {
    await client.query('ROLLBACK').catch((failure: Error) => {
      broken = failure;
    });
    throw error;
  } finally {
    client.release(broken);
  }
}

/** 64 bits of SHA-256 of the account and number: the transaction lock of their starts. */
function lockKeyOf(accountId: string, to: string): bigint {
  return createHash('sha256').update(`verification:${accountId}:${to}`).digest().readBigInt64BE(0);
}

/** A resend of the pending verification of the number, or a new one; RateLimitedError past a limit. */
export function planStart(pool: pg.Pool, request: PlanRequest): Promise<Planned> {
  return inTransaction(pool, lockKeyOf(request.accountId, request.to), async (client) => {
    const { rows } = await client.query<{ pending: PendingJson | null; starts: Date[] }>(
      `SELECT
        (SELECT json_build_object('id', id, 'attempts', attempts, 'sends', sends, 'code_hmac', code_hmac,
            'last_sent_at', last_sent_at, 'message_id', message_id, 'expires_at', expires_at, 'created_at', created_at)
          FROM verifications WHERE account_id = $1 AND "to" = $2 AND status = 'pending' AND expires_at > $3
          ORDER BY created_at DESC LIMIT 1) AS pending,
        ARRAY(SELECT created_at FROM verifications WHERE account_id = $1 AND "to" = $2 AND created_at > $4
          ORDER BY created_at DESC LIMIT ${STARTS_PER_DAY}) AS starts`,
      [request.accountId, request.to, request.now, new Date(request.now.getTime() - DAY_MS)],
    );
    const { pending, starts } = rows[0]!;
    if (pending) return resend(client, request, rowOf(request.to, pending));
    assertStartAllowed(starts, request.now);
    const row: PlannedRow = {
      id: request.newId,
      to: request.to,
      status: 'pending',
      attempts: 0,
      sends: 1,
      codeHmac: request.hmacFor(request.newId),
      lastSentAt: request.now,
      messageId: request.messageId,
      expiresAt: request.expiresAt,
      createdAt: request.now,
      approvedAt: null,
    };
    await client.query(
      `INSERT INTO verifications (id, account_id, "to", country, code_hmac, last_sent_at, message_id, expires_at, created_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $6)`,
      [
        row.id,
        request.accountId,
        row.to,
        request.country,
        row.codeHmac,
        row.lastSentAt,
        row.messageId,
        row.expiresAt,
      ],
    );
    return { row, before: null };
  });
}

async function resend(client: pg.PoolClient, request: PlanRequest, before: PlannedRow): Promise<Planned> {
  assertResendAllowed(before, request.now);
  const row: PlannedRow = {
    ...before,
    codeHmac: request.hmacFor(before.id),
    sends: before.sends + 1,
    lastSentAt: request.now,
    messageId: request.messageId,
    expiresAt: request.expiresAt,
  };
  await client.query(
    'UPDATE verifications SET code_hmac = $2, sends = $3, last_sent_at = $4, message_id = $5, expires_at = $6 WHERE id = $1',
    [row.id, row.codeHmac, row.sends, row.lastSentAt, row.messageId, row.expiresAt],
  );
  return { row, before };
}

function rowOf(to: string, pending: PendingJson): PlannedRow {
  return {
    id: pending.id,
    to,
    status: 'pending',
    attempts: pending.attempts,
    sends: pending.sends,
    codeHmac: pending.code_hmac,
    lastSentAt: new Date(pending.last_sent_at),
    messageId: pending.message_id,
    expiresAt: new Date(pending.expires_at),
    createdAt: new Date(pending.created_at),
    approvedAt: null,
  };
}

/** A resend waits 30 s after the start, then twice as long after each resend; five codes at most. */
function assertResendAllowed(pending: PlannedRow, now: Date): void {
  if (pending.sends >= MAX_SENDS)
    throw new RateLimitedError(
      secondsUntil(pending.expiresAt, now),
      `This verification has sent its ${MAX_SENDS} codes; start a new one once it expires`,
    );
  const due = pending.lastSentAt.getTime() + RESEND_COOL_DOWN_MS * 2 ** (pending.sends - 1);
  if (now.getTime() < due)
    throw new RateLimitedError(secondsUntil(new Date(due), now), 'A code was sent moments ago; resend later');
}

/** Starts of the number in the last day, newest first: under the hour's and the day's limits. */
function assertStartAllowed(starts: Date[], now: Date): void {
  const lastHour = starts.filter((start) => start.getTime() > now.getTime() - HOUR_MS);
  // Room comes back when the oldest start that counts leaves its window.
  if (lastHour.length >= STARTS_PER_HOUR) {
    const freed = lastHour[STARTS_PER_HOUR - 1]!.getTime() + HOUR_MS;
    throw new RateLimitedError(
      secondsUntil(new Date(freed), now),
      'Too many verifications of this number this hour',
    );
  }
  if (starts.length >= STARTS_PER_DAY) {
    const freed = starts[STARTS_PER_DAY - 1]!.getTime() + DAY_MS;
    throw new RateLimitedError(
      secondsUntil(new Date(freed), now),
      'Too many verifications of this number today',
    );
  }
}

function secondsUntil(when: Date, now: Date): number {
  return Math.max(1, Math.ceil((when.getTime() - now.getTime()) / 1000));
}
