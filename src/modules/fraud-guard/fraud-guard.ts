import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { z } from 'zod';
import type { FraudGuardDefaults } from '../../config/fraud-guard.js';
import { FraudBlockedError, type FraudRule, ServiceUnavailableError } from '../../errors.js';
import { Prisma, type PrismaClient } from '../../generated/prisma/client.js';
import { Batcher } from '../../lib/batcher.js';
import type { Clock } from '../../lib/clock.js';
import { countryOf, KNOWN_COUNTRY_COUNT } from '../../lib/phone.js';
import { parseInput } from '../../lib/validation.js';
import type { Metrics } from '../../metrics/metrics.js';
import { countryBlockedPayload, writeEvent } from '../webhooks/webhook-events.js';
import type { GuardRuleBook, GuardRules } from './guard-rules.js';
import { GuardWindows, type MessageLimits, type WindowVerdict } from './guard-windows.js';

/** A message as the guard sees it, before anything of it is stored or reserved. */
export interface GuardedMessage {
  id: string;
  accountId: string;
  to: string;
  text: string;
}

/**
 * The most per-day rows a read of decisions answers, the newest kept: a quarter in a few countries
 * can hold thousands. The totals by rule and by country count every row of the days, whatever this is.
 */
export const MAX_DECISION_ROWS = 500;
/** The most rows of totals by country: each country of a numbering plan, and none. */
export const MAX_DECISION_COUNTRIES = KNOWN_COUNTRY_COUNT + 1;

export const decisionsInput = z.strictObject({
  days: z
    .number()
    .int()
    .min(1)
    // A quarter: the dashboard's longest period.
    .max(92)
    .default(7)
    .meta({ description: 'The last N UTC days, today included' }),
});

/** One day's count of one rule's decisions in one country. */
export interface GuardDecisionCount {
  /** The UTC day, YYYY-MM-DD. */
  day: string;
  rule: FraudRule;
  /** ISO 3166; null for a number of no country's plan. */
  country: string | null;
  decision: 'blocked' | 'monitored';
  count: number;
}

/** Messages refused (`blocked`) and, in monitor mode, would-be refused (`monitored`) over the days. */
export interface GuardDecisionTotal {
  blocked: number;
  monitored: number;
}

/** The guard's decisions over some days: per day (bounded), and in total by rule and by country (exact). */
export interface GuardDecisions {
  /** Newest day first, then by rule, country and decision; at most MAX_DECISION_ROWS, the newest. */
  rows: GuardDecisionCount[];
  /** Whether the days hold more rows than `rows`: the oldest were left out. */
  truncated: boolean;
  /** The most decisions first. */
  totalsByRule: (GuardDecisionTotal & { rule: FraudRule })[];
  /** The most decisions first; `country` null for numbers of no country's plan. */
  totalsByCountry: (GuardDecisionTotal & { country: string | null })[];
}

/** The parts of GuardDecisions, each read when first asked for. */
export interface GuardDecisionsReader {
  rows(): Promise<Pick<GuardDecisions, 'rows' | 'truncated'>>;
  totals(): Promise<Pick<GuardDecisions, 'totalsByRule' | 'totalsByCountry'>>;
}

/** A country the guard refuses for an account until its cool-off ends. */
export interface CountryBlock {
  country: string;
  until: Date;
}

interface Decision {
  accountId: string;
  day: string;
  rule: FraudRule;
  country: string;
  decision: 'blocked' | 'monitored';
}

export interface FraudGuardOptions {
  prisma: PrismaClient;
  redis: Redis;
  prefix: string;
  clock: Clock;
  metrics: Metrics;
  logger: Logger;
  rules: GuardRuleBook;
  defaults: FraudGuardDefaults;
}

/**
 * The fraud guard against SMS pumping: each message, before a segment of it is reserved, against
 * its account's flood limit per number, velocity per number range and caps per country, counted
 * cluster-wide in Redis (guard-windows.ts). In `block` mode a message over a rule is refused; in
 * `monitor` mode it goes, and the decision is logged and counted. Decisions are counted per day,
 * rule and country (fraud_guard_counts) and in `tern_fraud_blocked_total`.
 */
export class FraudGuard {
  readonly windows: GuardWindows;
  private readonly prisma: PrismaClient;
  private readonly clock: Clock;
  private readonly metrics: Metrics;
  private readonly logger: Logger;
  private readonly rules: GuardRuleBook;
  private readonly defaults: FraudGuardDefaults;
  // Decisions of concurrent sends are counted in one statement.
  private readonly counts = new Batcher((decisions: Decision[]) => this.writeCounts(decisions), {
    maxBatch: 500,
    maxInFlight: 1,
  });
  /** Whether Redis's absence has been logged since it last answered: logged once per outage. */
  private unavailableLogged = false;

  constructor(options: FraudGuardOptions) {
    ({
      prisma: this.prisma,
      clock: this.clock,
      metrics: this.metrics,
      logger: this.logger,
      rules: this.rules,
      defaults: this.defaults,
    } = options);
    this.windows = new GuardWindows(options.redis, options.prefix);
  }

  /** A single send: FraudBlockedError (422) when the guard refuses it. */
  async assertAllowed(message: GuardedMessage): Promise<void> {
    const rule = await this.check(message);
    if (rule) throw new FraudBlockedError(rule);
  }

  /** The rule that refuses the message, or null when it may go (always null in monitor mode). */
  async check(message: GuardedMessage): Promise<FraudRule | null> {
    const rules = await this.rules.rulesOf(message.accountId);
    const now = this.clock.now();
    const limits = limitsOf(message.to, rules);
    // Every limit off: nothing to count, and nothing asked of Redis.
    if (!limits.floodIdentical && !limits.floodAny && !limits.velocity && !limits.country) return null;
    let verdict: WindowVerdict;
    try {
      verdict = await this.windows.check(message, limits, now);
      this.unavailableLogged = false;
    } catch (error) {
      return this.unchecked(error);
    }
    if (!verdict.rule) return null;
    const country = limits.country || (countryOf(message.to) ?? '');
    if (verdict.blockedUntil)
      await this.countryBlocked(message.accountId, country, verdict.rule, verdict.blockedUntil);
    const decision = rules.mode === 'monitor' ? 'monitored' : 'blocked';
    (decision === 'blocked' ? this.metrics.fraudBlocked : this.metrics.fraudMonitored).inc({
      rule: verdict.rule,
    });
    if (decision === 'monitored')
      this.logger.info(
        { account: message.accountId, message: message.id, to: message.to, rule: verdict.rule, country },
        'fraud guard (monitor mode): would have refused this message; sent',
      );
    await this.counts.add({
      accountId: message.accountId,
      day: utcDay(now),
      rule: verdict.rule,
      country,
      decision,
    });
    return decision === 'blocked' ? verdict.rule : null;
  }

  /** Redis cannot count: the deployment's choice, counted, and logged once per outage. */
  private unchecked(error: unknown): null {
    const refuse = this.defaults.whenRedisDown === 'refuse';
    this.metrics.fraudUnchecked.inc({ outcome: refuse ? 'refused' : 'allowed' });
    if (!this.unavailableLogged) {
      this.unavailableLogged = true;
      this.logger.warn(
        { err: error },
        refuse
          ? 'fraud guard cannot count (Redis unavailable): sends are refused until it is back'
          : 'fraud guard cannot count (Redis unavailable): sends go unchecked until it is back',
      );
    }
    if (refuse)
      throw new ServiceUnavailableError('The fraud guard cannot check sends now; try again in a few seconds');
    return null;
  }

  /** Written once per block: the script started it for this message alone. */
  private async countryBlocked(
    accountId: string,
    country: string,
    rule: FraudRule,
    until: Date,
  ): Promise<void> {
    if (rule !== 'country_hourly' && rule !== 'country_daily') return;
    this.logger.warn(
      { account: accountId, country, rule, until },
      'fraud guard: country blocked for the account',
    );
    await writeEvent(this.prisma, {
      type: 'account.country_blocked',
      payload: countryBlockedPayload(country, rule, until),
      accountId,
      campaignId: null,
      at: this.clock.now(),
    });
  }

  /** The operator's change of an account's rules (guard-rules.ts); answers them as they apply now. */
  setRules(accountId: string, input: unknown): Promise<GuardRules> {
    return this.rules.setRules(accountId, input);
  }

  /** The account's rules as they apply now, the countries blocked, and the last days' decisions. */
  async view(accountId: string) {
    const [rules, blocked, decisions] = await Promise.all([
      this.rules.rulesOf(accountId),
      this.windows.blocked(accountId, this.clock.now()),
      this.decisions(accountId, { days: 7 }).rows(),
    ]);
    return {
      rules,
      blocked: Object.fromEntries(
        Object.entries(blocked).map(([country, until]) => [country, until.toISOString()]),
      ),
      decisions: decisions.rows,
      decisionsTruncated: decisions.truncated,
    };
  }

  /** The countries blocked for the account now, the soonest to end first. */
  async blockedCountries(accountId: string): Promise<CountryBlock[]> {
    const blocked = await this.windows.blocked(accountId, this.clock.now());
    return Object.entries(blocked)
      .map(([country, until]) => ({ country, until }))
      .sort((a, b) => a.until.getTime() - b.until.getTime() || a.country.localeCompare(b.country));
  }

  /**
   * The guard's decisions of the last `days` UTC days (today included): what it refused (`blocked`)
   * and, in monitor mode, would have (`monitored`), by day, rule, country and decision, and in total.
   * The input is checked now; each part is read the first time it is asked for, and once.
   */
  decisions(accountId: string, input: unknown): GuardDecisionsReader {
    const { days } = parseInput(decisionsInput, input);
    const since = utcDay(new Date(this.clock.now().getTime() - (days - 1) * 24 * 60 * 60 * 1000));
    let rows: Promise<Pick<GuardDecisions, 'rows' | 'truncated'>> | undefined;
    let totals: Promise<Pick<GuardDecisions, 'totalsByRule' | 'totalsByCountry'>> | undefined;
    return {
      rows: () => {
        rows ??= this.decisionRows(accountId, since);
        return rows;
      },
      totals: () => {
        totals ??= this.decisionTotals(accountId, since);
        return totals;
      },
    };
  }

  /** The newest MAX_DECISION_ROWS rows since the day, and whether older ones were left out. */
  private async decisionRows(accountId: string, since: string) {
    const rows = await this.prisma.fraudGuardCount.findMany({
      where: { accountId, day: { gte: new Date(since) } },
      orderBy: [{ day: 'desc' }, { rule: 'asc' }, { country: 'asc' }, { decision: 'asc' }],
      take: MAX_DECISION_ROWS + 1,
    });
    return {
      rows: rows.slice(0, MAX_DECISION_ROWS).map(({ day, rule, country, decision, count }) => ({
        day: day.toISOString().slice(0, 10),
        rule: rule as FraudRule,
        country: country || null,
        decision: decision as Decision['decision'],
        count,
      })),
      truncated: rows.length > MAX_DECISION_ROWS,
    };
  }

  /** Every decision since the day, summed by rule and by country in one pass over the rows. */
  private async decisionTotals(accountId: string, since: string) {
    // The table holds no null rule or country: a row whose rule is null is a total by country.
    const sums = await this.prisma.$queryRaw<
      { rule: FraudRule | null; country: string | null; blocked: bigint; monitored: bigint }[]
    >`
      SELECT rule, country,
        COALESCE(SUM(count) FILTER (WHERE decision = 'blocked'), 0) AS blocked,
        COALESCE(SUM(count) FILTER (WHERE decision = 'monitored'), 0) AS monitored
      FROM fraud_guard_counts
      WHERE account_id = ${accountId} AND day >= ${since}::date
      GROUP BY GROUPING SETS ((rule), (country))
      ORDER BY SUM(count) DESC, rule, country`;
    const total = (sum: (typeof sums)[number]) => ({
      blocked: Number(sum.blocked),
      monitored: Number(sum.monitored),
    });
    return {
      totalsByRule: sums.flatMap((sum) => (sum.rule === null ? [] : [{ rule: sum.rule, ...total(sum) }])),
      totalsByCountry: sums.flatMap((sum) =>
        sum.rule === null ? [{ country: sum.country || null, ...total(sum) }] : [],
      ),
    };
  }

  private async writeCounts(decisions: Decision[]): Promise<undefined[]> {
    const totals = new Map<string, Decision & { count: number }>();
    for (const decision of decisions) {
      const key = JSON.stringify([
        decision.accountId,
        decision.day,
        decision.rule,
        decision.country,
        decision.decision,
      ]);
      const total = totals.get(key);
      if (total) total.count += 1;
      else totals.set(key, { ...decision, count: 1 });
    }
    const rows = [...totals.values()].map(
      (row) =>
        Prisma.sql`(${row.accountId}, ${row.day}::date, ${row.rule}, ${row.country}, ${row.decision}, ${row.count})`,
    );
    await this.prisma.$executeRaw`
      INSERT INTO fraud_guard_counts (account_id, day, rule, country, decision, count)
      VALUES ${Prisma.join(rows)}
      ON CONFLICT (account_id, day, rule, country, decision)
      DO UPDATE SET count = fraud_guard_counts.count + EXCLUDED.count`;
    return decisions.map(() => undefined);
  }
}

/** What applies to a message to `to`: the account's limits, and its country's caps when it has any. */
function limitsOf(to: string, rules: GuardRules): MessageLimits {
  // The country is parsed only for an account with caps: a parse costs more than the rest of the check.
  const country = Object.keys(rules.countryCaps).length > 0 ? (countryOf(to) ?? '') : '';
  const cap = country ? rules.countryCaps[country] : undefined;
  return {
    floodIdentical: rules.floodIdentical,
    floodAny: rules.floodAny,
    velocity: rules.velocity,
    countryHourly: cap?.hourly ?? 0,
    countryDaily: cap?.daily ?? 0,
    country: cap ? country : '',
    coolOffMs: rules.coolOffSeconds * 1000,
    monitor: rules.mode === 'monitor',
  };
}

function utcDay(at: Date): string {
  return at.toISOString().slice(0, 10);
}
