import type { Logger } from 'pino';
import { z } from 'zod';
import type { PrismaClient } from '../../generated/prisma/client.js';
import { isKnownCountry } from '../../lib/phone.js';
import { issue, parseInput } from '../../lib/validation.js';

// The countries' rules for senders, as this process applies them: read from PostgreSQL, kept in
// memory and read again every few seconds, so that choosing a sender reads nothing per message and
// an operator's change reaches every process within one poll (as carriers and routes do).

export type AlphanumericRule = 'allowed' | 'replaced' | 'refused' | 'required';

export interface CountrySenderRule {
  country: string;
  /**
   * What becomes of an alphanumeric sender there: it reaches as sent (`allowed`), reaches with
   * the network's own sender in its place (`replaced`), does not reach (`refused`), or is the only
   * kind that reaches (`required`: numbers are refused).
   */
  alphanumeric: AlphanumericRule;
  /** Its networks replace a numeric sender by one of their own. */
  numericReplaced: boolean;
}

/** The rule of a country without a row of its own: any sender reaches it as sent. */
const OPEN: Omit<CountrySenderRule, 'country'> = { alphanumeric: 'allowed', numericReplaced: false };

export const setCountryRuleInput = z.strictObject({
  country: z
    .string()
    .transform((code) => code.trim().toUpperCase())
    .refine(isKnownCountry, issue('invalid_value', 'an ISO 3166 alpha-2 code, e.g. US')),
  alphanumeric: z.enum(['allowed', 'replaced', 'refused', 'required']).optional(),
  numericReplaced: z.boolean().optional(),
});

/** Whether a sender as stored (a number without '+', else a name) is a number. */
export function isNumericSender(sender: string): boolean {
  return /^[0-9]+$/.test(sender);
}

/** Whether a sender may reach a country under its rule (replaced on the way or not). */
export function compliesWith(
  rule: Pick<CountrySenderRule, 'alphanumeric'> | undefined,
  sender: string,
): boolean {
  if (!rule || rule.alphanumeric === 'allowed' || rule.alphanumeric === 'replaced') return true;
  return isNumericSender(sender) === (rule.alphanumeric === 'refused');
}

export class CountrySenderRules {
  private rules = new Map<string, CountrySenderRule>();
  private signature = '';
  private loaded: Promise<void> | null = null;
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly prisma: PrismaClient,
    private readonly logger: Logger,
    private readonly pollMs: number,
  ) {}

  /** Resolves once the rules were read for the first time. */
  ready(): Promise<void> {
    this.loaded ??= this.refresh();
    return this.loaded;
  }

  /** Reads the rules, then again every poll. */
  async start(): Promise<void> {
    await this.ready();
    if (this.timer) return;
    this.timer = setInterval(() => {
      this.refresh().catch((error: unknown) =>
        this.logger.warn({ err: error }, 'country sender rules not read; the last ones read stay in force'),
      );
    }, this.pollMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  async refresh(): Promise<void> {
    const rows = await this.list();
    const signature = JSON.stringify(rows);
    if (signature === this.signature) return;
    this.signature = signature;
    this.rules = new Map(rows.map((row) => [row.country, row]));
  }

  /** The rule this process applies to a country (null: unknown, which any sender reaches). */
  ruleOf(country: string | null): CountrySenderRule | undefined {
    return country === null ? undefined : this.rules.get(country);
  }

  /** Whether a sender as stored may reach a number's country, by the rules last read. */
  allows(sender: string, country: string | null): boolean {
    return compliesWith(this.ruleOf(country), sender);
  }

  /** Every country with a rule, by code, as PostgreSQL holds them (at most one per ISO 3166 code). */
  async list(): Promise<CountrySenderRule[]> {
    const rows = await this.prisma.countrySenderRule.findMany({
      orderBy: { country: 'asc' },
      select: { country: true, alphanumeric: true, numericReplaced: true },
    });
    return rows;
  }

  /**
   * Sets a country's rule (an option left out keeps its value, or the open rule's for a new
   * country). Every process applies it from its next poll; this one at once.
   */
  async set(input: unknown): Promise<CountrySenderRule> {
    const { country, alphanumeric, numericReplaced } = parseInput(setCountryRuleInput, input);
    const row = await this.prisma.countrySenderRule.upsert({
      where: { country },
      create: {
        country,
        alphanumeric: alphanumeric ?? OPEN.alphanumeric,
        numericReplaced: numericReplaced ?? OPEN.numericReplaced,
      },
      update: { alphanumeric, numericReplaced },
      select: { country: true, alphanumeric: true, numericReplaced: true },
    });
    await this.refresh();
    return row;
  }
}
