import { settleBatch } from '../../../src/modules/stats/stats-settle.js';
import type { Bench, Service } from '../bench.js';
import type { ReadResult, RunnableScenario } from './scenario.js';

const MESSAGES = Number(process.env.BENCH_STATS_MESSAGES ?? 10_000_000);
const DAYS = 90;
const CHUNK = 1_000_000;
const CAMPAIGNS = 20;
const WARMUP = 5;
const REQUESTS = 60;
const END = new Date('2026-10-01T00:00:00Z');
const SETTLE_BENCH_BATCH = 100_000;

const DAILY = `query ($from: DateTime, $to: DateTime) {
  messageStats(from: $from, to: $to, interval: DAY, groupBy: [STATUS]) {
    ... on MessageStats { buckets { start messages delivered failed queued sent } totals { messages delivered failed } }
  }
}`;

const HOURLY = `query ($from: DateTime, $to: DateTime) {
  messageStats(from: $from, to: $to, interval: HOUR, groupBy: [STATUS]) {
    ... on MessageStats { buckets { start messages delivered failed queued sent } totals { messages delivered failed } }
  }
}`;

/** A 30-day split by one key, as a dashboard asks for it. */
const splitBy = (group: 'COUNTRY' | 'CARRIER' | 'CAMPAIGN') => `query ($from: DateTime, $to: DateTime) {
  messageStats(from: $from, to: $to, interval: DAY, groupBy: [${group}]) {
    ... on MessageStats { buckets { start country carrier campaignId messages delivered failed } totals { country carrier campaignId messages } }
  }
}`;

/**
 * The bench account's messages, spread evenly over DAYS days: five countries, two carriers, half
 * of them in one of CAMPAIGNS campaigns; 90% delivered, 7% failed, 3% still sent. Written a
 * million at a time straight into PostgreSQL, then their statistics counted from them with the
 * same grouping the message statements keep, so that the two agree, spread over the four slots
 * as statements on several connections spread them.
 */
async function seed(bench: Bench): Promise<string> {
  const { rows } = await bench.database.query<{ id: string }>('SELECT id FROM accounts LIMIT 1');
  const account = rows[0]!.id;
  await bench.database.query(
    `INSERT INTO campaigns (id, account_id, name, updated_at) SELECT 'cmp_stats_' || n, $1, 'Campaign ' || n, now()
     FROM generate_series(0, $2::int - 1) AS n ON CONFLICT DO NOTHING`,
    [account, CAMPAIGNS],
  );
  const spacing = (DAYS * 86_400) / MESSAGES;
  for (let from = 0; from < MESSAGES; from += CHUNK) {
    await bench.database.query(
      `INSERT INTO messages (id, account_id, campaign_id, "to", country, text, encoding, segments, status, carrier, created_at)
       SELECT 'msg_stats_' || n, $1, CASE WHEN n % 2 = 0 THEN 'cmp_stats_' || (n / 2) % $5 END,
         (ARRAY['55119', '44770', '35191', '91987', '12025'])[n % 5 + 1] || lpad(n::text, 8, '0'),
         (ARRAY['BR', 'GB', 'PT', 'IN', 'US'])[n % 5 + 1], 'Counted', 'GSM-7', 1 + n % 2,
         (CASE WHEN n % 100 < 90 THEN 'delivered' WHEN n % 100 < 97 THEN 'failed' ELSE 'sent' END)::"MessageStatus",
         CASE WHEN n % 3 = 0 THEN 'carrier-b' ELSE 'carrier-a' END,
         $4::timestamptz - make_interval(secs => (n + 1) * $6::float8)
       FROM generate_series($2::int, $3::int - 1) AS n`,
      [account, from, Math.min(from + CHUNK, MESSAGES), END.toISOString(), CAMPAIGNS, spacing],
    );
  }
  await countStats(bench);
  await settle(bench);
  await bench.database.query(
    'VACUUM ANALYZE messages, message_stats, message_stat_totals, settled_message_stats, settled_message_stat_splits',
  );
  return account;
}

/**
 * What the statistics settler does in the background to quarter-hours older than two hours, with
 * the same statement, in larger batches: every seeded message is older than that.
 */
async function settle(bench: Bench): Promise<void> {
  const statement = settleBatch(new Date(), SETTLE_BENCH_BATCH);
  for (;;) {
    const { rows } = await bench.database.query<{ moved: number }>(statement.text, statement.values);
    if ((rows[0]?.moved ?? 0) < SETTLE_BENCH_BATCH) return;
  }
}

async function countStats(bench: Bench): Promise<void> {
  await bench.database.query(
    `INSERT INTO message_stats (account_id, bucket, campaign_id, country, carrier, slot, messages, segments, sent, delivered, failed)
     SELECT account_id, to_timestamp(floor(extract(epoch FROM created_at) / 900) * 900), COALESCE(campaign_id, ''),
       COALESCE(country, ''), COALESCE(carrier, ''), abs(hashtext(id)) % 4, count(*), sum(segments),
       count(*) FILTER (WHERE status = 'sent'), count(*) FILTER (WHERE status = 'delivered'),
       count(*) FILTER (WHERE status = 'failed')
     FROM messages GROUP BY 1, 2, 3, 4, 5, 6`,
  );
  await bench.database.query(
    `INSERT INTO message_stat_totals (account_id, bucket, slot, messages, segments, sent, delivered, failed)
     SELECT account_id, bucket, slot, sum(messages), sum(segments), sum(sent), sum(delivered), sum(failed)
     FROM message_stats GROUP BY 1, 2, 3`,
  );
}

async function time(service: Service, authorization: string, name: string, query: string, days: number) {
  const variables = {
    from: new Date(END.getTime() - days * 86_400_000).toISOString(),
    to: END.toISOString(),
  };
  const durations: number[] = [];
  for (let i = 0; i < WARMUP + REQUESTS; i++) {
    const started = performance.now();
    const response = await fetch(`${service.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization },
      body: JSON.stringify({ query, variables }),
    });
    const body = (await response.json()) as { data?: { messageStats?: { totals?: { messages: number }[] } } };
    const elapsed = performance.now() - started;
    const counted = body.data?.messageStats?.totals?.reduce((sum, row) => sum + row.messages, 0) ?? 0;
    if (counted === 0)
      throw new Error(`${name} answered ${response.status}: ${JSON.stringify(body).slice(0, 300)}`);
    if (i >= WARMUP) durations.push(elapsed);
  }
  durations.sort((a, b) => a - b);
  const at = (q: number) => durations[Math.min(durations.length - 1, Math.floor(q * durations.length))]!;
  return { name, requests: durations.length, p50Ms: at(0.5), p95Ms: at(0.95), p99Ms: at(0.99) };
}

export const messageStats: RunnableScenario = {
  name: 'message-stats',
  describe: `messageStats of an account with ${MESSAGES.toLocaleString('en')} messages over ${DAYS} days: by day over ${DAYS} days, by hour over 7 days (both split by status), and by day and country, carrier or campaign over 30 days, its quarter-hours settled`,
  async run(bench, layout): Promise<ReadResult> {
    const seeded = performance.now();
    await seed(bench);
    const seconds = Math.round((performance.now() - seeded) / 1000);
    // The reads run back to back, far past an account's statistics budget, which is not what is measured here.
    const service = await bench.startGateway(layout, { workers: false, env: { STATS_BUDGET: '100000000' } });
    try {
      const authorization = await bench.bearer(service);
      const reads = [
        await time(service, authorization, `by day, ${DAYS} days`, DAILY, DAYS),
        await time(service, authorization, 'by hour, 7 days', HOURLY, 7),
        await time(service, authorization, 'by day and country, 30 days', splitBy('COUNTRY'), 30),
        await time(service, authorization, 'by day and carrier, 30 days', splitBy('CARRIER'), 30),
        await time(service, authorization, 'by day and campaign, 30 days', splitBy('CAMPAIGN'), 30),
      ];
      return {
        kind: 'reads',
        data: `${MESSAGES.toLocaleString('en')} messages of one account over ${DAYS} days (written, counted and settled in ${seconds} s)`,
        reads,
        firstError: null,
        profile: null,
      };
    } finally {
      await bench.stopService(service);
    }
  },
};
