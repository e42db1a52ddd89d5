import { z } from 'zod';
import {
  type CountryCap,
  type FraudGuardDefaults,
  type GuardMode,
  MAX_COOL_OFF_SECONDS,
  MAX_GUARD_LIMIT,
} from '../../config/fraud-guard.js';
import { NotFoundError } from '../../errors.js';
import type { Prisma, PrismaClient } from '../../generated/prisma/client.js';
import { Batcher } from '../../lib/batcher.js';
import type { Clock } from '../../lib/clock.js';
import { isKnownCountry } from '../../lib/phone.js';
import { issue, parseInput } from '../../lib/validation.js';

/** The rules the guard applies to an account: its own where it has them, else the deployment's. */
export type GuardRules = Omit<FraudGuardDefaults, 'whenRedisDown'>;

/** The most countries an account has caps for, and so the most it can have blocked at once. */
export const MAX_CAPPED_COUNTRIES = 300;

const limit = z.number().int().min(0).max(MAX_GUARD_LIMIT);
const cap = limit.nullable();

/** What the operator changes (`accounts guard`); a field left out keeps its value, null returns to the default. */
export const guardRulesInput = z.strictObject({
  floodIdentical: limit.nullable().optional(),
  floodAny: limit.nullable().optional(),
  velocity: limit.nullable().optional(),
  /** Caps of the countries named; a country with both caps null loses its own caps. */
  countryCaps: z
    .record(
      z.string().refine(isKnownCountry, issue('invalid_value', 'ISO 3166 alpha-2 codes, e.g. GB')),
      z.strictObject({ hourly: cap, daily: cap }),
    )
    .refine(
      (caps) => Object.keys(caps).length <= MAX_CAPPED_COUNTRIES,
      issue('too_long', `at most ${MAX_CAPPED_COUNTRIES} countries`),
    )
    .optional(),
  coolOffSeconds: z.number().int().min(1).max(MAX_COOL_OFF_SECONDS).nullable().optional(),
  mode: z.enum(['block', 'monitor']).nullable().optional(),
});

type RuleRow = {
  accountId: string;
  floodIdentical: number | null;
  floodAny: number | null;
  velocity: number | null;
  countryCaps: Prisma.JsonValue;
  coolOffSeconds: number | null;
  mode: string | null;
};

function capsOf(value: Prisma.JsonValue | undefined): Record<string, CountryCap> {
  return value && typeof value === 'object' && !Array.isArray(value)
    ? (value as unknown as Record<string, CountryCap>)
    : {};
}

/** The account's own caps over the deployment's: a country the account names replaces the default's caps of it. */
function rulesOf(row: RuleRow | undefined, defaults: FraudGuardDefaults): GuardRules {
  const caps = { ...defaults.countryCaps, ...capsOf(row?.countryCaps) };
  for (const [country, { hourly, daily }] of Object.entries(caps))
    if (hourly === null && daily === null) delete caps[country];
  return {
    floodIdentical: row?.floodIdentical ?? defaults.floodIdentical,
    floodAny: row?.floodAny ?? defaults.floodAny,
    velocity: row?.velocity ?? defaults.velocity,
    countryCaps: caps,
    coolOffSeconds: row?.coolOffSeconds ?? defaults.coolOffSeconds,
    mode: (row?.mode as GuardMode | null) ?? defaults.mode,
  };
}

/**
 * How long a process keeps an account's rules before reading them again: a change the operator
 * makes from another process (the CLI) applies within this and one more send of the account (at
 * most RULES_STALE_MS); one made here applies at once. A read per send would cost more CPU than
 * the rest of the check.
 */
const RULES_FRESH_MS = 1_000;
/**
 * Past RULES_FRESH_MS, a send still takes the rules it has while a read replaces them in the
 * background, so that an account's steady traffic never waits on PostgreSQL for them (a read on
 * the path once a second showed at p95 and p99); past this, a send waits for the read.
 */
const RULES_STALE_MS = 10_000;
/** Accounts whose rules a process keeps at most; past it, it forgets them all and reads again. */
const MAX_KEPT_ACCOUNTS = 10_000;

interface KeptRules {
  rules: Promise<GuardRules>;
  readAt: number;
  /** Set once `rules` has resolved: only rules read successfully are served stale. */
  answered: boolean;
  refreshing: boolean;
}

/** The guard's rules of each account, kept a second and read per batch of concurrent sends; the operator's changes. */
export class GuardRuleBook {
  // Concurrent sends share one read of their accounts' rules.
  private readonly reads = new Batcher((ids: string[]) => this.readRules(ids), {
    maxBatch: 100,
    maxInFlight: 2,
  });
  private readonly kept = new Map<string, KeptRules>();

  constructor(
    private readonly prisma: PrismaClient,
    private readonly clock: Clock,
    private readonly defaults: FraudGuardDefaults,
  ) {}

  rulesOf(accountId: string): Promise<GuardRules> {
    const now = this.clock.now().getTime();
    const kept = this.kept.get(accountId);
    const age = kept ? now - kept.readAt : Number.POSITIVE_INFINITY;
    if (kept && age < RULES_FRESH_MS) return kept.rules;
    if (kept?.answered && age < RULES_STALE_MS) {
      if (!kept.refreshing) this.refresh(accountId, kept);
      return kept.rules;
    }
    return this.read(accountId, now).rules;
  }

  /** A read whose sends wait for it. */
  private read(accountId: string, now: number): KeptRules {
    if (this.kept.size >= MAX_KEPT_ACCOUNTS) this.kept.clear();
    const kept: KeptRules = {
      rules: this.reads.add(accountId),
      readAt: now,
      answered: false,
      refreshing: false,
    };
    this.kept.set(accountId, kept);
    kept.rules.then(
      () => {
        kept.answered = true;
      },
      // A failed read is not kept: the next send reads again.
      () => {
        if (this.kept.get(accountId) === kept) this.kept.delete(accountId);
      },
    );
    return kept;
  }

  /** A read in the background that replaces `kept` once it answers; a failure leaves `kept` to age. */
  private refresh(accountId: string, kept: KeptRules): void {
    kept.refreshing = true;
    const started = this.clock.now().getTime();
    this.reads.add(accountId).then(
      (rules) => {
        if (this.kept.get(accountId) === kept)
          this.kept.set(accountId, {
            rules: Promise.resolve(rules),
            readAt: started,
            answered: true,
            refreshing: false,
          });
      },
      () => {
        kept.refreshing = false;
      },
    );
  }

  /** The operator's change of an account's rules; answers the rules as they apply now. */
  async setRules(accountId: string, input: unknown): Promise<GuardRules> {
    const { countryCaps, ...data } = parseInput(guardRulesInput, input);
    const account = await this.prisma.account.findUnique({ where: { id: accountId }, select: { id: true } });
    if (!account) throw new NotFoundError('Account');
    if (countryCaps !== undefined || Object.values(data).some((value) => value !== undefined)) {
      const row = await this.prisma.fraudGuardRule.findUnique({ where: { accountId } });
      const caps = { ...capsOf(row?.countryCaps), ...(countryCaps ?? {}) } as Prisma.InputJsonObject;
      const now = this.clock.now();
      await this.prisma.fraudGuardRule.upsert({
        where: { accountId },
        create: { accountId, ...data, countryCaps: caps, updatedAt: now },
        update: { ...data, countryCaps: caps, updatedAt: now },
      });
      this.kept.delete(accountId);
    }
    return this.rulesOf(accountId);
  }

  private async readRules(accountIds: string[]): Promise<GuardRules[]> {
    const rows = await this.prisma.fraudGuardRule.findMany({
      where: { accountId: { in: [...new Set(accountIds)] } },
    });
    const byAccount = new Map(rows.map((row) => [row.accountId, row]));
    return accountIds.map((id) => rulesOf(byAccount.get(id), this.defaults));
  }
}
