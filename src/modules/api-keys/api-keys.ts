import type pg from 'pg';
import type { Logger } from 'pino';
import { z } from 'zod';
import { ConflictError, ForbiddenError, NotFoundError, UnauthorizedError } from '../../errors.js';
import type { Prisma, PrismaClient } from '../../generated/prisma/client.js';
import { Batcher } from '../../lib/batcher.js';
import type { Clock } from '../../lib/clock.js';
import { newId } from '../../lib/ids.js';
import { newestFirst, type PageRequest } from '../../lib/pagination.js';
import { issue, parseInput } from '../../lib/validation.js';
import type { Credential } from '../accounts/authentication.js';
import { generateApiKeySecret, hashApiKey, isWellFormedApiKey } from './api-key-secret.js';

/** Keys an account may hold at once, expired ones included: a bound on what one tenant can store. */
export const MAX_API_KEYS_PER_ACCOUNT = 100;
/** `last_used_at` is kept to the minute: a key's row is written at most once a minute, not per request. */
export const LAST_USED_PRECISION_MS = 60_000;

const BATCHING = { maxBatch: 100, maxInFlight: 2 };
/** Keys a process remembers having found valid; past this the least recently seen is forgotten. */
const REMEMBERED_KEYS = 10_000;

export interface CreatedApiKey {
  id: string;
  name: string;
  /** The key itself: in this answer only. */
  key: string;
  prefix: string;
  createdAt: Date;
  expiresAt: Date | null;
  lastUsedAt: null;
}

export interface DeletedApiKey {
  id: string;
  deleted: true;
}

/** The body of a new key: its name and, optionally, when it stops working (in the future). */
export function apiKeyCreateInput(clock: Clock) {
  return z
    .strictObject({
      name: z.string().trim().min(1).max(80).meta({ description: 'A name, to tell keys apart' }),
      expiresAt: z.iso
        .datetime({ offset: true })
        .meta({
          description: 'ISO 8601 time in the future after which the key is refused; absent or null: never',
        })
        .transform((value) => new Date(value))
        .refine((at) => at.getTime() > clock.now().getTime(), {
          ...issue('invalid_value'),
          message: 'expires_at must be in the future',
        })
        .nullable()
        .optional(),
    })
    .meta({ description: 'A new API key' });
}

/** Who manages keys: the owner with a login token, or an operator through the CLI. */
export type KeyManager = Credential | 'operator';

type ApiKeyQuery = Omit<Prisma.ApiKeyFindManyArgs, 'where' | 'orderBy' | 'skip' | 'take'>;

interface KeyRow {
  key_hash: string;
  id: string;
  account_id: string;
  expires_at: Date | null;
  last_used_at: Date | null;
  account_disabled_at: Date | null;
}

export interface ApiKeysOptions {
  prisma: PrismaClient;
  // For the lookup on every request that presents a key: Prisma's per-query cost was twice the statement's.
  pool: pg.Pool;
  clock: Clock;
  logger: Logger;
}

export class ApiKeys {
  // Every request that presents a key looks it up: concurrent lookups share one statement.
  private readonly lookups = new Batcher((hashes: string[]) => this.findByHash(hashes), BATCHING);
  /** Keys whose last_used_at is being written by this process, so a burst writes it once. */
  private readonly touching = new Set<string>();
  /**
   * The account of each key this process last found valid, by hash, least recently seen first:
   * what the request budget charges before the lookup (see accountKnownFor). It decides nothing
   * else; every request's key is still looked up.
   */
  private readonly validKeys = new Map<string, string>();
  private readonly createInput: z.ZodType<{ name: string; expiresAt?: Date | null }>;
  private readonly prisma: PrismaClient;
  // For the lookup on every request that presents a key: Prisma's per-query cost was twice the statement's.
  private readonly pool: pg.Pool;
  private readonly clock: Clock;
  private readonly logger: Logger;

  constructor(options: ApiKeysOptions) {
    ({ prisma: this.prisma, pool: this.pool, clock: this.clock, logger: this.logger } = options);
    const { clock } = options;
    this.createInput = apiKeyCreateInput(clock);
  }

  /**
   * A new key for the account, shown once. Creations for one account queue on its row, so
   * MAX_API_KEYS_PER_ACCOUNT holds however many arrive at once, from however many processes.
   */
  async create(accountId: string, input: unknown, by: KeyManager): Promise<CreatedApiKey> {
    assertMayManageKeys(by);
    const data = parseInput(this.createInput, input);
    const secret = generateApiKeySecret();
    const row = {
      id: newId('key'),
      accountId,
      name: data.name,
      prefix: secret.prefix,
      keyHash: secret.hash,
      createdAt: this.clock.now(),
      expiresAt: data.expiresAt ?? null,
    };
    await this.prisma.$transaction(async (tx) => {
      // NO KEY UPDATE: it queues key creations without holding up the account's other rows,
      // whose foreign-key checks take KEY SHARE locks on it.
      const locked = await tx.$queryRaw<
        unknown[]
      >`SELECT 1 FROM accounts WHERE id = ${accountId} FOR NO KEY UPDATE`;
      if (locked.length === 0) throw new NotFoundError('Account');
      if ((await tx.apiKey.count({ where: { accountId } })) >= MAX_API_KEYS_PER_ACCOUNT) {
        throw new ConflictError(
          `An account can hold at most ${MAX_API_KEYS_PER_ACCOUNT} API keys, expired ones included: delete one first`,
        );
      }
      await tx.apiKey.create({ data: row, select: { id: true } });
    });
    return {
      id: row.id,
      name: row.name,
      key: secret.key,
      prefix: row.prefix,
      createdAt: row.createdAt,
      expiresAt: row.expiresAt,
      lastUsedAt: null,
    };
  }

  list(accountId: string, page: PageRequest, query: ApiKeyQuery = {}) {
    return this.prisma.apiKey.findMany({
      ...query,
      ...newestFirst({ accountId }, page),
    });
  }

  count(accountId: string): Promise<number> {
    return this.prisma.apiKey.count({ where: { accountId } });
  }

  /** Deletes the key: the next request that presents it, to any process, is refused. */
  async revoke(accountId: string, id: string, by: KeyManager): Promise<DeletedApiKey> {
    assertMayManageKeys(by);
    const { count } = await this.prisma.apiKey.deleteMany({ where: { id, accountId } });
    if (count === 0) throw new NotFoundError('API key');
    return { id, deleted: true };
  }

  /**
   * The account a presented key acts for; UnauthorizedError when the key is malformed, unknown
   * (never issued, or revoked), expired, or its account is disabled. Read from PostgreSQL on
   * every request, so a revocation holds at once everywhere; no cache can outlive it.
   */
  async authenticate(key: string): Promise<string> {
    if (!isWellFormedApiKey(key)) throw new UnauthorizedError('The API key is malformed');
    const hash = hashApiKey(key);
    const row = await this.lookups.add(hash);
    const now = this.clock.now();
    this.validKeys.delete(hash);
    if (!row) throw new UnauthorizedError('The API key is not valid (unknown or revoked)');
    if (row.expires_at && row.expires_at.getTime() <= now.getTime())
      throw new UnauthorizedError('The API key has expired');
    if (row.account_disabled_at) throw new UnauthorizedError('The account of this API key is disabled');
    this.validKeys.set(hash, row.account_id);
    if (this.validKeys.size > REMEMBERED_KEYS) this.validKeys.delete(this.validKeys.keys().next().value!);
    if (!row.last_used_at || now.getTime() - row.last_used_at.getTime() >= LAST_USED_PRECISION_MS)
      this.touch(row.id, now);
    return row.account_id;
  }

  /**
   * The account this process found the key valid for when it last looked it up, without a
   * lookup; null for a key it has not (or no longer) found valid. Only for charging the right
   * budget before the lookup: the lookup alone says whether the key is valid now.
   */
  accountKnownFor(key: string): string | null {
    if (!isWellFormedApiKey(key)) return null;
    return this.validKeys.get(hashApiKey(key)) ?? null;
  }

  private async findByHash(hashes: string[]): Promise<(KeyRow | null)[]> {
    const { rows } = await this.pool.query<KeyRow>({
      text: `SELECT k.key_hash, k.id, k.account_id, k.expires_at, k.last_used_at, a.disabled_at AS account_disabled_at
             FROM api_keys k JOIN accounts a ON a.id = k.account_id
             WHERE k.key_hash = ANY($1::text[])`,
      values: [hashes],
    });
    const byHash = new Map(rows.map((row) => [row.key_hash, row]));
    return hashes.map((hash) => byHash.get(hash) ?? null);
  }

  /** Not awaited by the request: a failed write only leaves last_used_at a minute older. */
  private touch(id: string, now: Date): void {
    if (this.touching.has(id)) return;
    this.touching.add(id);
    const stale = new Date(now.getTime() - LAST_USED_PRECISION_MS);
    this.prisma.apiKey
      .updateMany({
        where: { id, OR: [{ lastUsedAt: null }, { lastUsedAt: { lte: stale } }] },
        data: { lastUsedAt: now },
      })
      .catch((error: unknown) =>
        this.logger.warn({ err: error, apiKey: id }, 'last_used_at of an API key not written'),
      )
      .finally(() => this.touching.delete(id));
  }
}

/** Keys are managed with a login token (or by an operator): a leaked key cannot mint or remove keys. */
function assertMayManageKeys(by: KeyManager): void {
  if (by === 'api_key')
    throw new ForbiddenError('API keys cannot create or delete API keys: use a login token');
}
