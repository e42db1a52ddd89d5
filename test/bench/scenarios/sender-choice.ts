import type { CountrySenderRule } from '../../../src/modules/senders/country-sender-rules.js';
import { choiceOf, type PoolSender, poolTiers } from '../../../src/modules/senders/sender-choice.js';
import type { Bench } from '../bench.js';
import { MESSAGES } from './end-to-end.js';
import type { FlowResult, RunnableScenario } from './scenario.js';
import { restSend } from './send-rest.js';

const DEADLINE_MS = 90_000;
const POOL_SIZE = 100;
const CHOICES = 100_000;

/** The bench account's pool: half numbers, half names, every one for every country. */
const POOL: PoolSender[] = Array.from({ length: POOL_SIZE }, (_, index) => ({
  sender: index % 2 === 0 ? `4477009${String(index).padStart(5, '0')}` : `BENCH${index}`,
  countries: [],
}));

async function configure(bench: Bench): Promise<void> {
  await unconfigure(bench);
  await bench.database.query(
    'INSERT INTO account_senders (account_id, sender, pool) SELECT $1, unnest($2::text[]), true',
    [bench.account.id, POOL.map((entry) => entry.sender)],
  );
}

async function unconfigure(bench: Bench): Promise<void> {
  await bench.database.query('DELETE FROM account_senders WHERE account_id = $1', [bench.account.id]);
  await bench.database.query('DELETE FROM recipient_senders WHERE account_id = $1', [bench.account.id]);
}

/**
 * CPU of one choice in this process, as a single send makes it: the number's country, its rule
 * (the shipped table), the pool's senders for it out of 100, the pick; every number a new one.
 */
async function senderChoiceUs(bench: Bench): Promise<number> {
  const { rows } = await bench.database.query<{
    country: string;
    alphanumeric: string;
    numeric_replaced: boolean;
  }>('SELECT country, alphanumeric::text, numeric_replaced FROM country_sender_rules');
  const rules = new Map<string, CountrySenderRule>(
    rows.map((row) => [
      row.country,
      {
        country: row.country,
        alphanumeric: row.alphanumeric as CountrySenderRule['alphanumeric'],
        numericReplaced: row.numeric_replaced,
      },
    ]),
  );
  const ruleOf = (country: string | null) => (country === null ? undefined : rules.get(country));
  const setup = { defaultSender: null, pool: POOL };
  const numbers = Array.from({ length: CHOICES }, (_, index) => `55119${10_000_000 + index}`);
  const started = process.cpuUsage();
  for (const to of numbers)
    choiceOf(setup, to, { ruleOf }, (country, rule) => poolTiers(setup.pool, country, rule));
  const used = process.cpuUsage(started);
  return (used.user + used.system) / CHOICES;
}

export const senderChoice: RunnableScenario = {
  name: 'sender-choice',
  describe: `end-to-end (${MESSAGES.toLocaleString('en')} messages over REST, workers delivering) from an account whose sends name no sender and take one of a pool of ${POOL_SIZE}, made sticky per recipient; and the CPU of one choice in memory, below the table`,
  async run(bench, layout) {
    await configure(bench);
    try {
      const service = await bench.startGateway(layout, { workers: true });
      const result = await bench.withService(service, async () =>
        bench.flow(service, restSend(await bench.bearer(service)), MESSAGES, DEADLINE_MS),
      );
      return { ...result, senderChoiceUs: await senderChoiceUs(bench) } as FlowResult;
    } finally {
      await unconfigure(bench);
    }
  },
};
