import { createHash } from 'node:crypto';
import pg from 'pg';
import { withTransactionClient } from '../../db/transaction-client.js';
import { RateLimitedError } from '../../errors.js';
import { Batcher } from '../../lib/batcher.js';

// The limits of a start, decided under transaction locks of its account and number. Starts
// arriving together share one transaction (locks, one read, one write), as sends share their
// acceptance batch: a transaction's round trips and commit are most of a start's cost.

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

/** A number of an account as the batch found it, and as its starts before in the batch left it. */
interface NumberState {
  pending: PlannedRow | null;
  /** Its starts of the last day, newest first. */
  starts: Date[];
}

/** A row the batch writes, with what a new one needs besides. */
interface Written {
  row: PlannedRow;
  isNew: boolean;
  accountId: string;
  country: string | null;
}

type PlanOutcome = Planned | RateLimitedError;

/**
 * Plans starts: a resend of the pending verification of the number, or a new one, or a
 * RateLimitedError past a limit. The locks are taken in one order by every batch, so batches
 * side by side (in any process) cannot deadlock, and each number's starts are decided one by
 * one: within the batch in their order, across batches by the lock.
 */
export class VerificationPlans {
  // One transaction at a time, as the acceptance batch runs: the starts arriving meanwhile share
  // the next one, which then spends its round trips and commit on more of them.
  private readonly plans = new Batcher((requests: PlanRequest[]) => this.planMany(requests), {
    maxBatch: 100,
    maxInFlight: 1,
  });

  constructor(private readonly pool: pg.Pool) {}

  async plan(request: PlanRequest): Promise<Planned> {
    const outcome = await this.plans.add(request);
    if (outcome instanceof RateLimitedError) throw outcome;
    return outcome;
  }

  private planMany(requests: PlanRequest[]): Promise<PlanOutcome[]> {
    const locks = [...new Set(requests.map(({ accountId, to }) => lockKeyOf(accountId, to)))];
    locks.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    // The keys are numbers of our own making, taken in the order of the array.
    const lock = `SELECT count(pg_advisory_xact_lock(key)) FROM unnest(ARRAY[${locks.join(', ')}]::bigint[]) AS key`;
    return inTransaction(this.pool, `${lock}; ${readNumbers(requests)}`, (rows) => {
      const numbers = new Map(
        rows.map(({ account_id, to, pending, starts }) => [
          numberOf({ accountId: account_id, to }),
          { pending: pending ? rowOf(to, pending) : null, starts },
        ]),
      );
      const written = new Map<string, Written>();
      const outcomes = requests.map((request) => {
        try {
          return decide(numbers.get(numberOf(request))!, request, written);
        } catch (error) {
          if (error instanceof RateLimitedError) return error;
          throw error;
        }
      });
      return { result: outcomes, write: writeStatement([...written.values()]) };
    });
  }
}

interface NumberRow {
  account_id: string;
  to: string;
  pending: PendingJson | null;
  starts: Date[];
}

/**
 * A transaction in two round trips: `BEGIN` and `read` in the first (each statement of a round
 * trip reads what committed before it, so the read sees the work of whoever held the locks), then
 * what `work` makes of the read's rows, and `COMMIT`, in the second; rolled back if either fails.
 * Statements sent together take no parameters: their values are written into the text as literals.
 */
function inTransaction<T>(
  pool: pg.Pool,
  read: string,
  work: (rows: NumberRow[]) => { result: T; write: string | null },
): Promise<T> {
  return withTransactionClient(pool, async (client) => {
    const results = (await client.query(`BEGIN; ${read}`)) as unknown as pg.QueryResult<NumberRow>[];
    const { result, write } = work(results.at(-1)!.rows);
    await client.query(write ? `${write}; COMMIT` : 'COMMIT');
    return result;
  });
}

/** An array of values as a literal of SQL, quoted by the driver. */
function arrayOf(values: (string | number | Date | null)[], type: 'text' | 'int' | 'timestamptz'): string {
  const literals = values.map((value) =>
    value === null
      ? 'NULL'
      : typeof value === 'number'
        ? String(Math.trunc(value))
        : pg.escapeLiteral(value instanceof Date ? value.toISOString() : value),
  );
  return `ARRAY[${literals.join(', ')}]::${type}[]`;
}

/** 64 bits of SHA-256 of the account and number: the transaction lock of their starts. */
function lockKeyOf(accountId: string, to: string): bigint {
  return createHash('sha256').update(`verification:${accountId}:${to}`).digest().readBigInt64BE(0);
}

function numberOf({ accountId, to }: { accountId: string; to: string }): string {
  return `${accountId}\n${to}`;
}

/**
 * The statement reading each number's pending verification and starts of the last day, once it
 * is locked, as of the earliest start of the batch for it (each start then judges them at its own time).
 */
function readNumbers(requests: PlanRequest[]): string {
  const earliest = new Map<string, PlanRequest>();
  for (const request of requests) {
    const seen = earliest.get(numberOf(request));
    if (!seen || request.now < seen.now) earliest.set(numberOf(request), request);
  }
  const firsts = [...earliest.values()];
  const accounts = arrayOf(
    firsts.map((first) => first.accountId),
    'text',
  );
  const tos = arrayOf(
    firsts.map((first) => first.to),
    'text',
  );
  const nows = arrayOf(
    firsts.map((first) => first.now),
    'timestamptz',
  );
  return `SELECT n.account_id, n."to",
      (SELECT json_build_object('id', id, 'attempts', attempts, 'sends', sends, 'code_hmac', code_hmac,
          'last_sent_at', last_sent_at, 'message_id', message_id, 'expires_at', expires_at, 'created_at', created_at)
        FROM verifications v WHERE v.account_id = n.account_id AND v."to" = n."to" AND v.status = 'pending'
          AND v.expires_at > n.now ORDER BY v.created_at DESC LIMIT 1) AS pending,
      ARRAY(SELECT created_at FROM verifications v WHERE v.account_id = n.account_id AND v."to" = n."to"
        AND v.created_at > n.now - interval '1 day' ORDER BY v.created_at DESC LIMIT ${STARTS_PER_DAY}) AS starts
    FROM unnest(${accounts}, ${tos}, ${nows}) AS n(account_id, "to", now)`;
}

/** One start against its number as the starts before it left it; what it writes goes into `written`. */
function decide(number: NumberState, request: PlanRequest, written: Map<string, Written>): Planned {
  const { now } = request;
  const pending = number.pending && number.pending.expiresAt > now ? number.pending : null;
  if (pending) {
    assertResendAllowed(pending, now);
    const row: PlannedRow = {
      ...pending,
      codeHmac: request.hmacFor(pending.id),
      sends: pending.sends + 1,
      lastSentAt: now,
      messageId: request.messageId,
      expiresAt: request.expiresAt,
    };
    number.pending = row;
    const isNew = written.get(row.id)?.isNew ?? false;
    written.set(row.id, { row, isNew, accountId: request.accountId, country: request.country });
    return { row, before: pending };
  }
  assertStartAllowed(
    number.starts.filter((start) => start.getTime() > now.getTime() - DAY_MS),
    now,
  );
  const row: PlannedRow = {
    id: request.newId,
    to: request.to,
    status: 'pending',
    attempts: 0,
    sends: 1,
    codeHmac: request.hmacFor(request.newId),
    lastSentAt: now,
    messageId: request.messageId,
    expiresAt: request.expiresAt,
    createdAt: now,
    approvedAt: null,
  };
  number.pending = row;
  number.starts.unshift(now);
  written.set(row.id, { row, isNew: true, accountId: request.accountId, country: request.country });
  return { row, before: null };
}

/** The statement writing the batch's new verifications and resends; null when there are none. */
function writeStatement(written: Written[]): string | null {
  if (written.length === 0) return null;
  const added = written.filter((each) => each.isNew);
  const resent = written.filter((each) => !each.isNew).map(({ row }) => row);
  const addedOf = (
    pick: (each: Written) => string | number | Date | null,
    type: 'text' | 'int' | 'timestamptz',
  ) => arrayOf(added.map(pick), type);
  const resentOf = (
    pick: (row: PlannedRow) => string | number | Date | null,
    type: 'text' | 'int' | 'timestamptz',
  ) => arrayOf(resent.map(pick), type);
  return `WITH added AS (
      INSERT INTO verifications (id, account_id, "to", country, code_hmac, sends, last_sent_at, message_id, expires_at, created_at)
      SELECT * FROM unnest(${addedOf((each) => each.row.id, 'text')}, ${addedOf((each) => each.accountId, 'text')},
        ${addedOf((each) => each.row.to, 'text')}, ${addedOf((each) => each.country, 'text')},
        ${addedOf((each) => each.row.codeHmac, 'text')}, ${addedOf((each) => each.row.sends, 'int')},
        ${addedOf((each) => each.row.lastSentAt, 'timestamptz')}, ${addedOf((each) => each.row.messageId, 'text')},
        ${addedOf((each) => each.row.expiresAt, 'timestamptz')}, ${addedOf((each) => each.row.createdAt, 'timestamptz')})),
    resent AS (
      UPDATE verifications v SET code_hmac = r.code_hmac, sends = r.sends, last_sent_at = r.last_sent_at,
        message_id = r.message_id, expires_at = r.expires_at
      FROM unnest(${resentOf((row) => row.id, 'text')}, ${resentOf((row) => row.codeHmac, 'text')},
        ${resentOf((row) => row.sends, 'int')}, ${resentOf((row) => row.lastSentAt, 'timestamptz')},
        ${resentOf((row) => row.messageId, 'text')}, ${resentOf((row) => row.expiresAt, 'timestamptz')})
        AS r(id, code_hmac, sends, last_sent_at, message_id, expires_at)
      WHERE v.id = r.id)
    SELECT 1`;
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
