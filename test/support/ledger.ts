import pg from 'pg';

// The ledger every test database that holds messages must balance when its file is done: the
// statistics rollups (message_stats summed over slots with the settled rows, each key of the
// settled splits alone, message_stat_totals, delivery_time_stats)
// and the segments reserved on each account's quota equal a count over the messages table.
// Each statement that writes messages keeps them in its own CTEs, so at any committed instant
// they agree; a difference is a statement that forgot one of them.

/** The quarter-hour (UTC) of `instant`, as statsBucket in src/modules/stats/stats-rollups.ts. */
const bucketOf = (instant: string) => `to_timestamp(floor(extract(epoch FROM ${instant}) / 900) * 900)`;

const COUNTERS = ['messages', 'segments', 'scheduled', 'queued', 'sent', 'delivered', 'failed', 'cancelled'];

/** A message's counters: one message, its segments, one in its status. */
const COUNTED = [
  'count(*)',
  'sum(segments)',
  ...COUNTERS.slice(2).map((status) => `count(*) FILTER (WHERE status = '${status}')`),
];

/**
 * One row per key whose rollup differs from the count: each side's counters under the same key,
 * the count added and the rollup taken away, so only the keys that do not sum to zero remain.
 */
function differences(ledger: string, key: string[], counted: string, rolledUp: string, columns: string[]) {
  const sums = columns.map((name) => `sum(${name})::bigint AS ${name}`).join(', ');
  return `
    SELECT '${ledger}' AS ledger, jsonb_build_object(${key.map((name) => `'${name}', ${name}`).join(', ')}) AS key,
      jsonb_build_object(${columns.map((name) => `'${name}', COALESCE(sum(${name}) FILTER (WHERE side = 'counted'), 0)`).join(', ')}) AS counted,
      jsonb_build_object(${columns.map((name) => `'${name}', COALESCE(sum(-${name}) FILTER (WHERE side = 'rolled up'), 0)`).join(', ')}) AS rolled_up
    FROM (
      SELECT 'counted' AS side, ${key.join(', ')}, ${sums} FROM (${counted}) counted GROUP BY ${key.join(', ')}
      UNION ALL
      SELECT 'rolled up', ${key.join(', ')}, ${columns.map((name) => `-sum(${name})::bigint`).join(', ')}
      FROM (${rolledUp}) rolled_up GROUP BY ${key.join(', ')}) sides
    GROUP BY ${key.join(', ')}
    HAVING ${columns.map((name) => `COALESCE(sum(${name}), 0) <> 0`).join(' OR ')}`;
}

const MESSAGE_KEY = ['account_id', 'bucket', 'campaign_id', 'country', 'carrier'];
const messageKeyOf = `account_id, ${bucketOf('created_at')} AS bucket, COALESCE(campaign_id, '') AS campaign_id,
  COALESCE(country, '') AS country, COALESCE(carrier, '') AS carrier`;
const countedByKey = `SELECT ${messageKeyOf}, ${COUNTED.map((sql, index) => `${sql} AS ${COUNTERS[index]}`).join(', ')}
  FROM messages GROUP BY 1, 2, 3, 4, 5`;

/** A message whose failure or cancellation gave its reserved segments back (segmentGiveBack). */
const GIVEN_BACK = `(m.status IN ('failed', 'cancelled') AND NOT (m.sent_at IS NOT NULL OR m.carrier IS NOT NULL
  OR m.error_code IS NOT DISTINCT FROM 'unknown_outcome'))`;

/** The keyed rollups: the rows still in `message_stats` and those the settler moved. */
const ROLLED_UP_BY_KEY = `SELECT ${MESSAGE_KEY.join(', ')}, ${COUNTERS.join(', ')}, replies FROM message_stats
  UNION ALL SELECT ${MESSAGE_KEY.join(', ')}, ${COUNTERS.join(', ')}, replies FROM settled_message_stats`;

/** One key alone: each settled split with the rows not settled yet, under that key's value. */
const splitLedger = (dimension: string, column: string) =>
  differences(
    `settled_message_stat_splits (${dimension})`,
    ['account_id', 'bucket', 'value'],
    `SELECT account_id, bucket, ${column} AS value, ${COUNTERS.join(', ')} FROM (${countedByKey}) counted`,
    `SELECT account_id, bucket, value, ${COUNTERS.join(', ')} FROM settled_message_stat_splits WHERE dimension = '${dimension}'
      UNION ALL SELECT account_id, bucket, ${column}, ${COUNTERS.join(', ')} FROM message_stats`,
    COUNTERS,
  );

const LEDGERS = [
  differences('message_stats', MESSAGE_KEY, countedByKey, ROLLED_UP_BY_KEY, COUNTERS),
  splitLedger('country', 'country'),
  splitLedger('carrier', 'carrier'),
  splitLedger('campaign', 'campaign_id'),
  differences(
    'message_stat_totals',
    ['account_id', 'bucket'],
    countedByKey,
    `SELECT * FROM message_stat_totals`,
    COUNTERS,
  ),
  differences(
    'replies',
    ['account_id'],
    `SELECT account_id, count(*) AS replies FROM inbound_messages WHERE message_id IS NOT NULL GROUP BY 1`,
    `SELECT account_id, replies FROM (${ROLLED_UP_BY_KEY}) rolled_up`,
    ['replies'],
  ),
  differences(
    'delivery_time_stats',
    ['account_id', 'bucket', 'campaign_id', 'bin'],
    `SELECT account_id, ${bucketOf('created_at')} AS bucket, COALESCE(campaign_id, '') AS campaign_id,
      floor(20 * ln(1 + greatest(0, extract(epoch FROM delivered_at - GREATEST(created_at, COALESCE(send_at, created_at))))))::smallint AS bin,
      count(*) AS messages
    FROM messages WHERE status = 'delivered' GROUP BY 1, 2, 3, 4`,
    `SELECT * FROM delivery_time_stats`,
    ['messages'],
  ),
  differences(
    'account_quotas',
    ['account_id'],
    `SELECT m.account_id,
      COALESCE(sum(m.segments) FILTER (WHERE q.account_id IS NULL OR m.quota_day = q.day_start), 0) AS day_segments,
      COALESCE(sum(m.segments) FILTER (WHERE q.account_id IS NULL
        OR date_trunc('month', m.quota_day::timestamp)::date = q.month_start), 0) AS month_segments
    FROM messages m LEFT JOIN account_quotas q USING (account_id)
    WHERE m.quota_day IS NOT NULL AND NOT ${GIVEN_BACK} GROUP BY 1`,
    `SELECT account_id, day_segments, month_segments FROM account_quotas`,
    ['day_segments', 'month_segments'],
  ),
];

const LEDGER = `SELECT * FROM (${LEDGERS.join('\n UNION ALL\n')}) differences
  WHERE NOT (key->>'account_id' = ANY($1::text[]))
  ORDER BY ledger, key::text LIMIT 50`;

/**
 * Throws, with each key that differs, unless the rollups and quota usage of the database at
 * `databaseUrl` equal a count of its messages. A database without messages passes at once.
 * One statement, so it reads one snapshot even while a Tern still writes. `except`: accounts
 * whose message rows a test wrote by hand, past the statements that keep the ledger.
 */
export async function checkLedger(
  databaseUrl: string,
  { except = [] }: { except?: readonly string[] } = {},
): Promise<void> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows: any } = await client.query('SELECT EXISTS (SELECT 1 FROM messages) AS any');
    if (!any[0]?.any) return;
    const { rows } = await client.query(LEDGER, [except]);
    if (rows.length === 0) return;
    const lines = rows.map(
      ({ ledger, key, ...counts }) => `  ${ledger} ${JSON.stringify(key)}: ${JSON.stringify(counts)}`,
    );
    throw new Error(
      `The ledger does not balance: rollups differ from a count of the messages\n${lines.join('\n')}`,
    );
  } finally {
    await client.end();
  }
}
