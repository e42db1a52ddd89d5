import type { PrismaClient } from '../../generated/prisma/client.js';
import type { Clock } from '../../lib/clock.js';
import { countryOf } from '../../lib/phone.js';
import {
  type CountrySenderRule,
  type CountrySenderRules,
  compliesWith,
  isNumericSender,
} from './country-sender-rules.js';

// Which sender each message goes from, decided when it is accepted: its `from`, else the
// account's default sender, else one of the account's pool (sticky per recipient) — always one
// its destination country allows.

/** How long a recipient keeps the pool sender it last got, from its last use. */
export const STICKY_SENDER_MS = 30 * 24 * 60 * 60 * 1000;

/** No sender of the account may reach the number's country. */
export const NO_COMPLIANT_SENDER = {
  code: 'no_compliant_sender',
  message: 'No sender of the account may reach this country',
};

/** A message's sender: a name or digits; null for the carrier's own; `refused` for none the country allows. */
export type SenderOutcome = string | null | 'refused';

export interface PoolSender {
  sender: string;
  /** The countries it is approved for; empty for every country. Senders hold no comma: the statement joins them with one. */
  countries: string[];
}

/** What an account sends from when a message names no `from`. */
export interface AccountSenderSetup {
  defaultSender: string | null;
  pool: PoolSender[];
}

/** The pool senders a country may get: the preferred ones (approved for it by name), and every one it allows. */
interface PoolTiers {
  preferred: string[];
  eligible: string[];
}

type RawQueries = Pick<PrismaClient, '$queryRaw'>;

/**
 * The pool senders that may reach a country. Preferred: those approved for the country by name,
 * else any it allows; of those, the kind its networks do not replace when it has one of each.
 */
export function poolTiers(
  pool: readonly PoolSender[],
  country: string | null,
  rule?: CountrySenderRule,
): PoolTiers {
  // One pass, no intermediate arrays: it runs for each message a single send accepts.
  const eligible: string[] = [];
  const named: string[] = [];
  for (const { sender, countries } of pool) {
    const forCountry = country !== null && countries.length > 0 && countries.includes(country);
    if ((countries.length === 0 || forCountry) && compliesWith(rule, sender)) {
      eligible.push(sender);
      if (forCountry) named.push(sender);
    }
  }
  const preferred = named.length > 0 ? named : eligible;
  // Where the networks replace one kind, the other reaches as sent.
  const replaced = rule?.alphanumeric === 'replaced' ? false : rule?.numericReplaced ? true : null;
  if (replaced === null) return { preferred, eligible };
  const kept = preferred.filter((sender) => isNumericSender(sender) !== replaced);
  return { preferred: kept.length > 0 ? kept : preferred, eligible };
}

/** A recipient's place in a list: the same number lands on the same sender while the list holds. */
export function spread(recipient: string, count: number): number {
  // FNV-1a: cheap, and even over numbers that differ in their last digits only.
  let hash = 0x811c9dc5;
  for (let index = 0; index < recipient.length; index++) {
    hash ^= recipient.charCodeAt(index);
    hash = Math.imul(hash, 0x01000193);
  }
  return (hash >>> 0) % count;
}

/** A pool choice still to be made sticky: the sender offered, and every one the recipient may keep. */
interface PoolPick {
  candidate: string;
  eligible: string[];
}

/**
 * The sender of a message without `from`, or its pool pick: the default sender where the
 * country allows it, else the pool; `refused` when the account has senders and none reaches the
 * country; null when it has none (the carrier's own is used, and checked at hand-over).
 */
export function choiceOf(
  setup: AccountSenderSetup,
  to: string,
  rules: Pick<CountrySenderRules, 'ruleOf'>,
  tiersOf: (country: string | null, rule?: CountrySenderRule) => PoolTiers,
): string | null | 'refused' | PoolPick {
  const country = countryOf(to);
  const rule = rules.ruleOf(country);
  if (setup.defaultSender && compliesWith(rule, setup.defaultSender)) return setup.defaultSender;
  const { preferred, eligible } = tiersOf(country, rule);
  if (eligible.length === 0) return setup.defaultSender || setup.pool.length > 0 ? 'refused' : null;
  return { candidate: preferred[spread(to, preferred.length)]!, eligible };
}

/** One message's sender to choose: its account, the `from` it names (or null), its recipient. */
export interface SenderRequest {
  accountId: string;
  from: string | null;
  to: string;
}

const NO_SENDERS: AccountSenderSetup = { defaultSender: null, pool: [] };

/** A key of an account and a recipient or sender; NUL is in neither. */
const keyOf = (accountId: string, value: string) => `${accountId}\u0000${value}`;

export class SenderChoice {
  constructor(
    private readonly prisma: PrismaClient,
    private readonly rules: CountrySenderRules,
    private readonly clock: Clock,
  ) {}

  /** The sender of each message of an account to the recipients, in their order (a campaign's batch). */
  choose(db: RawQueries, accountId: string, from: string | null, recipients: readonly string[]) {
    return this.chooseAll(
      db,
      recipients.map((to) => ({ accountId, from, to })),
    );
  }

  /**
   * The sender of each message, in their order, whatever their accounts: a `from` kept where it
   * is still approved for the country and the country's rule allows it; without one, the
   * default sender or a pool pick, made sticky in one statement on `db`. At most three
   * statements for the whole batch (named senders, the accounts' senders, the sticky upsert).
   */
  async chooseAll(db: RawQueries, requests: readonly SenderRequest[]): Promise<SenderOutcome[]> {
    await this.rules.ready();
    const named = requests.filter((request) => request.from !== null);
    const unnamed = [...new Set(requests.filter((request) => request.from === null).map((r) => r.accountId))];
    const [approved, setups] = await Promise.all([
      named.length > 0 ? approvedCountries(db, named) : new Map<string, string[]>(),
      unnamed.length > 0 ? senderSetups(db, unnamed) : new Map<string, AccountSenderSetup>(),
    ]);
    const memo = new Map<string, PoolTiers>();
    const choices = requests.map((request) => {
      if (request.from !== null)
        return this.namedOutcome(approved, request as SenderRequest & { from: string });
      const setup = setups.get(request.accountId) ?? NO_SENDERS;
      return choiceOf(setup, request.to, this.rules, (country, rule) => {
        const key = keyOf(request.accountId, country ?? '');
        const known = memo.get(key);
        if (known) return known;
        const tiers = poolTiers(setup.pool, country, rule);
        memo.set(key, tiers);
        return tiers;
      });
    });
    const picks = new Map<string, PoolPick & { accountId: string; to: string }>();
    choices.forEach((choice, index) => {
      const { accountId, to } = requests[index]!;
      if (typeof choice === 'object' && choice !== null)
        picks.set(keyOf(accountId, to), { ...choice, accountId, to });
    });
    const kept = picks.size > 0 ? await this.keepSticky(db, [...picks.values()]) : new Map<string, string>();
    return choices.map((choice, index): SenderOutcome => {
      if (typeof choice !== 'object' || choice === null) return choice;
      const { accountId, to } = requests[index]!;
      return kept.get(keyOf(accountId, to))!;
    });
  }

  /**
   * A named sender, where it is still approved for the recipient's country (a campaign's can
   * have been removed since it was created) and the country's rule allows it.
   */
  private namedOutcome(
    approved: Map<string, string[]>,
    { accountId, from, to }: SenderRequest & { from: string },
  ) {
    const countries = approved.get(keyOf(accountId, from));
    const country = countryOf(to);
    const approvedThere =
      countries !== undefined &&
      (countries.length === 0 || (country !== null && countries.includes(country)));
    return approvedThere && this.rules.allows(from, country) ? from : 'refused';
  }

  /**
   * The sender a message of the account to a number would go from now without a `from`, and why
   * (the operator's `routes explain`); it reads the sticky mapping without writing it.
   */
  async preview(accountId: string, to: string): Promise<{ sender: SenderOutcome; reason: string }> {
    await this.rules.ready();
    const setup = (await senderSetups(this.prisma, [accountId])).get(accountId) ?? NO_SENDERS;
    const choice = choiceOf(setup, to, this.rules, (country, rule) => poolTiers(setup.pool, country, rule));
    if (choice === null)
      return { sender: null, reason: 'the account has no default sender and no pool: the carrier’s own' };
    if (choice === 'refused')
      return {
        sender: choice,
        reason: 'no sender of the account may reach the country: no_compliant_sender',
      };
    if (typeof choice === 'string') return { sender: choice, reason: 'the account’s default sender' };
    const [kept] = await this.prisma.$queryRaw<{ sender: string }[]>`
      SELECT sender FROM recipient_senders WHERE account_id = ${accountId} AND recipient = ${to}
        AND last_used_at > ${new Date(this.clock.now().getTime() - STICKY_SENDER_MS)}`;
    if (kept && choice.eligible.includes(kept.sender))
      return { sender: kept.sender, reason: 'the pool sender this number last got (sticky for 30 days)' };
    return { sender: choice.candidate, reason: 'a pool sender the country allows, for this number' };
  }

  /**
   * One upsert for every recipient: a recipient whose mapping is recent (used within 30 days) and
   * whose sender is still one it may get keeps it, any other takes the pick. Its row lock makes
   * concurrent sends to one recipient agree.
   */
  private async keepSticky(db: RawQueries, picks: (PoolPick & { accountId: string; to: string })[]) {
    const now = this.clock.now();
    const rows = await db.$queryRaw<{ account_id: string; recipient: string; sender: string }[]>`
      WITH v AS (
        SELECT * FROM unnest(${picks.map((p) => p.accountId)}::text[], ${picks.map((p) => p.to)}::text[],
          ${picks.map((p) => p.candidate)}::text[], ${picks.map((p) => p.eligible.join(','))}::text[])
          AS v(account_id, recipient, candidate, eligible))
      INSERT INTO recipient_senders AS r (account_id, recipient, sender, last_used_at)
      SELECT v.account_id, v.recipient, v.candidate, ${now} FROM v
      ON CONFLICT (account_id, recipient) DO UPDATE SET
        sender = CASE WHEN r.last_used_at > ${new Date(now.getTime() - STICKY_SENDER_MS)}
          AND r.sender = ANY (string_to_array((SELECT eligible FROM v
            WHERE v.account_id = EXCLUDED.account_id AND v.recipient = EXCLUDED.recipient), ','))
          THEN r.sender ELSE EXCLUDED.sender END,
        last_used_at = EXCLUDED.last_used_at
      RETURNING r.account_id, r.recipient, r.sender`;
    return new Map(rows.map((row) => [keyOf(row.account_id, row.recipient), row.sender]));
  }
}

/** The countries each named sender is approved for (empty: every one), by account and sender; absent: not approved. */
async function approvedCountries(db: RawQueries, named: readonly SenderRequest[]) {
  const rows = await db.$queryRaw<{ account_id: string; sender: string; countries: string[] }[]>`
    SELECT account_id, sender, countries FROM account_senders
    WHERE (account_id, sender) IN (
      SELECT * FROM unnest(${named.map((r) => r.accountId)}::text[], ${named.map((r) => r.from)}::text[]))`;
  return new Map(rows.map((row) => [keyOf(row.account_id, row.sender), row.countries]));
}

/** Each account's default sender and pool, in one read. */
async function senderSetups(db: RawQueries, accountIds: readonly string[]) {
  const rows = await db.$queryRaw<
    { account_id: string; default_sender: string | null; pool: PoolSender[] }[]
  >`
    SELECT a.id AS account_id, s.default_sender,
      COALESCE((SELECT json_agg(json_build_object('sender', p.sender, 'countries', p.countries) ORDER BY p.sender)
        FROM account_senders p WHERE p.account_id = a.id AND p.pool), '[]') AS pool
    FROM unnest(${accountIds}::text[]) AS a(id) LEFT JOIN account_settings s ON s.account_id = a.id`;
  return new Map(
    rows.map((row): [string, AccountSenderSetup] => [
      row.account_id,
      { defaultSender: row.default_sender, pool: row.pool },
    ]),
  );
}
