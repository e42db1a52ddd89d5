import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import type pg from 'pg';
import type { Logger } from 'pino';
import { RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import { withTransactionClient } from '../../db/transaction-client.js';
import { RateLimitedError, ServiceUnavailableError } from '../../errors.js';
import type { Prisma } from '../../generated/prisma/client.js';
import { TAKE_LEASED_SLOT } from '../../lib/leased-slots.js';

/** What bounds one account's statistics reads, so that they cannot stall other accounts. */
export interface StatsReadLimits {
  /** Reads one account may have running at once, over every process. */
  concurrency: number;
  /** What one account's reads may cost in a window, in days × groups (statsReadCost). */
  budget: number;
  windowSeconds: number;
  /** The longest one read's statements may run, and wait for a connection of the statistics pool. */
  statementTimeoutMs: number;
}

export interface StatsReadsOptions {
  /** A pool of its own, so statistics never hold the connections sends and logins need. */
  pool: pg.Pool;
  redis: Redis;
  prefix: string;
  limits: StatsReadLimits;
  logger: Logger;
}

/** Runs one statement of a read, on the read's connection, inside its time limit. */
export type StatsQuery = <Row>(statement: Prisma.Sql) => Promise<Row[]>;

/**
 * What a read costs: the days of its range (at least one) times its groups, one for the range's
 * own rows and one more for each key it is split by (COUNTRY, CARRIER, CAMPAIGN), since each
 * multiplies the rows it scans. A 30-day split by country costs 60, ten aliases of it 600.
 */
export function statsReadCost(from: Date, to: Date, splits: number): number {
  const days = Math.max(1, Math.ceil((to.getTime() - from.getTime()) / 86_400_000));
  return days * (1 + splits);
}

/** PostgreSQL's code for a statement cancelled by statement_timeout. */
const QUERY_CANCELED = '57014';

/**
 * The gate every statistics read goes through: a slot among the account's `concurrency`
 * (counted in Redis over every process, a lease that ends by itself if its process dies), then
 * its cost charged to the account's budget (one atomic Redis script), then its statements in
 * one read-only transaction on the statistics pool with `SET LOCAL statement_timeout` (no session
 * state, so PgBouncer in transaction pooling is fine). Past the slots or the budget: 429
 * `rate_limited`; past the time: 503 `service_unavailable`, never an internal error. While
 * Redis is away, slots and budget are not counted (the pool and the time limit still hold).
 */
export class StatsReads {
  private readonly budget: RateLimiterRedis;
  private readonly leaseMs: number;

  constructor(private readonly options: StatsReadsOptions) {
    const { redis, prefix, limits } = options;
    this.budget = new RateLimiterRedis({
      storeClient: redis,
      keyPrefix: `${prefix}:stats-budget`,
      points: limits.budget,
      duration: limits.windowSeconds,
    });
    // A read waits for a connection, then runs its statements, each within the time limit.
    this.leaseMs = 4 * limits.statementTimeoutMs + 1_000;
  }

  async run<T>(accountId: string, cost: number, read: (query: StatsQuery) => Promise<T>): Promise<T> {
    const release = await this.takeSlot(accountId);
    try {
      await this.charge(accountId, cost);
      return await this.inTransaction(read);
    } finally {
      release();
    }
  }

  private async takeSlot(accountId: string): Promise<() => void> {
    const { redis, prefix, limits, logger } = this.options;
    const key = `${prefix}:stats-slots:${accountId}`;
    const slot = randomUUID();
    let taken: unknown;
    try {
      taken = await redis.eval(TAKE_LEASED_SLOT, 1, key, limits.concurrency, this.leaseMs, slot);
    } catch (error) {
      logger.warn({ err: error, account: accountId }, 'statistics read not counted: Redis unavailable');
      return () => undefined;
    }
    if (taken !== 1)
      throw new RateLimitedError(
        1,
        `The account already has ${limits.concurrency} statistics reads running; wait for them to finish`,
      );
    return () => {
      redis.zrem(key, slot).catch((error: unknown) => {
        logger.warn({ err: error, account: accountId }, 'statistics slot not released; its lease ends it');
      });
    };
  }

  private async charge(accountId: string, cost: number): Promise<void> {
    const { limits, logger } = this.options;
    const points = Math.min(cost, limits.budget);
    try {
      await this.budget.consume(accountId, points);
    } catch (outcome) {
      if (!(outcome instanceof RateLimiterRes)) {
        logger.warn({ err: outcome, account: accountId }, 'statistics budget not counted: Redis unavailable');
        return;
      }
      // A refused read read nothing: its points go back, so the budget admits exactly what it holds.
      await this.budget.reward(accountId, points).catch(() => undefined);
      throw new RateLimitedError(
        Math.max(1, Math.ceil(outcome.msBeforeNext / 1000)),
        `Statistics reads cost their days times their groups, at most ${limits.budget} a window of ${limits.windowSeconds} s: this one (${cost}) is past what is left`,
      );
    }
  }

  private async inTransaction<T>(read: (query: StatsQuery) => Promise<T>): Promise<T> {
    const { pool, limits } = this.options;
    let connected = false;
    try {
      return await withTransactionClient(pool, async (client) => {
        connected = true;
        await client.query('BEGIN READ ONLY');
        await client.query(`SET LOCAL statement_timeout = ${Math.floor(limits.statementTimeoutMs)}`);
        const answer = await read(
          async (statement) => (await client.query(statement.text, statement.values)).rows,
        );
        await client.query('COMMIT');
        return answer;
      });
    } catch (error) {
      // No connection of the statistics pool within its wait, or a statement past its time.
      const noConnection = !connected && error instanceof Error && /timeout/i.test(error.message);
      if (noConnection || (error as { code?: unknown }).code === QUERY_CANCELED) throw this.timedOut();
      throw error;
    }
  }

  private timedOut(): ServiceUnavailableError {
    return new ServiceUnavailableError(
      `The statistics read took longer than ${this.options.limits.statementTimeoutMs} ms and was stopped: ask for a shorter range or fewer groups, or try again in a few seconds`,
    );
  }
}
