import { encodeCursor } from '../../../src/lib/pagination.js';
import type { Bench, Service } from '../bench.js';
import type { ReadResult, RunnableScenario } from './scenario.js';

const MESSAGES = 1_000_000;
const PER_PAGE = 100;
const DEEP_PAGE = 1_000;
const WARMUP = 5;
const REQUESTS = 40;

const BY_CURSOR = `query ($after: String) {
  messages(first: ${PER_PAGE}, after: $after) {
    ... on MessagePage { nodes { id to status createdAt } pageInfo { endCursor hasNextPage } }
  }
}`;

const BY_NUMBER = `query ($page: Int) {
  messages(page: $page, perPage: ${PER_PAGE}) { ... on MessagePage { nodes { id to status createdAt } } }
}`;

/**
 * A million messages of the bench's account in one statement, a millisecond apart (the precision
 * of the times Tern itself writes), then analysed so that the planner knows the table's size.
 */
async function seed(bench: Bench): Promise<string> {
  const { rows } = await bench.database.query<{ id: string }>('SELECT id FROM accounts LIMIT 1');
  const account = rows[0]!.id;
  await bench.database.query(
    `INSERT INTO messages (id, account_id, "to", text, encoding, segments, status, created_at)
     SELECT 'msg_' || lpad(to_hex(n), 8, '0'), $1, '55119' || lpad(n::text, 8, '0'), 'Deep page', 'GSM-7', 1, 'delivered',
            timestamptz '2026-01-01T00:00:00Z' + n * interval '1 millisecond'
     FROM generate_series(1, $2::int) AS n`,
    [account, MESSAGES],
  );
  await bench.database.query('VACUUM ANALYZE messages');
  return account;
}

/** The cursor a client holds after reading pages 1..page-1 by cursor: the end of page-1. */
async function cursorBefore(bench: Bench, page: number): Promise<string> {
  const { rows } = await bench.database.query<{ id: string; created_at: Date }>(
    'SELECT id, created_at FROM messages ORDER BY created_at DESC, id DESC OFFSET $1 LIMIT 1',
    [(page - 1) * PER_PAGE - 1],
  );
  return encodeCursor({ id: rows[0]!.id, createdAt: rows[0]!.created_at });
}

async function time(
  service: Service,
  authorization: string,
  name: string,
  query: string,
  variables: Record<string, unknown>,
) {
  const durations: number[] = [];
  for (let i = 0; i < WARMUP + REQUESTS; i++) {
    const started = performance.now();
    const response = await fetch(`${service.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization },
      body: JSON.stringify({ query, variables }),
    });
    const body = (await response.json()) as { data?: { messages?: { nodes?: unknown[] } } };
    const elapsed = performance.now() - started;
    if (body.data?.messages?.nodes?.length !== PER_PAGE)
      throw new Error(`${name} answered ${response.status}: ${JSON.stringify(body).slice(0, 300)}`);
    if (i >= WARMUP) durations.push(elapsed);
  }
  durations.sort((a, b) => a - b);
  const at = (q: number) => durations[Math.min(durations.length - 1, Math.floor(q * durations.length))]!;
  return { name, requests: durations.length, p50Ms: at(0.5), p99Ms: at(0.99) };
}

export const deepPages: RunnableScenario = {
  name: 'deep-pages',
  describe: `page ${DEEP_PAGE.toLocaleString('en')} of a message list (${PER_PAGE} a page) by cursor against page 1, and by page number (OFFSET) for contrast`,
  async run(bench, layout): Promise<ReadResult> {
    await seed(bench);
    const service = await bench.startGateway(layout, { workers: false });
    try {
      const authorization = await bench.bearer(service);
      const deep = await cursorBefore(bench, DEEP_PAGE);
      const reads = [
        await time(service, authorization, 'page 1 by cursor (`first`)', BY_CURSOR, {}),
        await time(service, authorization, `page ${DEEP_PAGE} by cursor (\`after\`)`, BY_CURSOR, {
          after: deep,
        }),
        await time(service, authorization, 'page 1 by number', BY_NUMBER, { page: 1 }),
        await time(service, authorization, `page ${DEEP_PAGE} by number (OFFSET)`, BY_NUMBER, {
          page: DEEP_PAGE,
        }),
      ];
      return {
        kind: 'reads',
        data: `${MESSAGES.toLocaleString('en')} messages of one account`,
        reads,
        firstError: null,
        profile: null,
      };
    } finally {
      await bench.stopService(service);
    }
  },
};
