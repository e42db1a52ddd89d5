import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_QUERY_OBJECTS } from '../src/graphql/query-cost.js';
import { pauseSettingsPolls, startTern, type TestAccount, type TestTern } from './support/tern.js';

// Every list of a GraphQL answer is paged by PostgreSQL, nested ones included, and a request
// that could return more than 20,000 objects is refused before any of it runs.

let t: TestTern;
let alice: TestAccount;
const ROWS = 300;

beforeAll(async () => {
  t = await startTern();
  alice = await t.createAccount();
});
afterAll(() => t.stop());

/**
 * The largest number of rows any one statement of the API's pool brought back since `reset()`:
 * a list paged in memory shows up as a statement returning every row of the list.
 */
function observeRows(pool: pg.Pool) {
  let largest = 0;
  let text = '';
  const record = (statement: unknown, answer: { rows?: unknown[] } | undefined) => {
    const count = answer?.rows?.length ?? 0;
    if (count > largest) text = JSON.stringify(statement).slice(0, 600);
    largest = Math.max(largest, count);
  };
  const watched = new WeakSet<object>();
  pool.on('acquire', (client) => {
    if (watched.has(client)) return;
    watched.add(client);
    const query = client.query.bind(client) as (...args: unknown[]) => unknown;
    // pg's pool calls it with a callback; Prisma's adapter awaits its promise.
    (client as unknown as { query: (...args: unknown[]) => unknown }).query = (...args: unknown[]) => {
      const callback = args.at(-1);
      if (typeof callback === 'function') {
        args[args.length - 1] = (error: unknown, answer: { rows?: unknown[] }) => {
          if (!error) record(args[0], answer);
          return callback(error, answer);
        };
      }
      const result = query(...args) as Promise<{ rows?: unknown[] }> | undefined;
      if (result && typeof result.then === 'function')
        void result.then(
          (answer) => record(args[0], answer),
          () => undefined,
        );
      return result;
    };
  });
  return {
    largest: () => largest,
    text: () => text,
    reset: () => {
      largest = 0;
    },
  };
}

async function createCampaign(name: string): Promise<string> {
  const response = await t.request('POST', '/v1/campaigns', { token: alice.token, body: { name } });
  expect(response.status).toBe(201);
  return response.body.campaign;
}

describe('nested lists', () => {
  let rows: ReturnType<typeof observeRows>;
  const campaigns: string[] = [];
  let message: string;
  let webhook: string;
  let resumeSettingsPolls: () => Promise<void>;
  afterAll(() => resumeSettingsPolls?.());

  beforeAll(async () => {
    rows = observeRows(t.tern.deps.pool);
    // The settings polls read whole tables (21 countries' sender rules) on the same pool.
    resumeSettingsPolls = pauseSettingsPolls(t);
    const db = t.tern.deps.pool;
    t.database.leaveOutOfLedger(alice.account, 'its messages are inserted by hand, in bulk');
    for (const name of ['Older', 'Newer']) {
      const campaign = await createCampaign(name);
      campaigns.push(campaign);
      // Rows made in bulk, each a millisecond after the last so that their order is known.
      await db.query(
        `INSERT INTO contacts (id, account_id, campaign_id, phone, tags, created_at)
         SELECT 'cnt_' || $2 || '_' || g, $1, $2, (5511900000000 + g)::text, CASE WHEN g % 2 = 0 THEN '{even}'::text[] ELSE '{}' END,
                timestamp '2026-01-01' + g * interval '1 ms'
         FROM generate_series(1, ${ROWS}) g`,
        [alice.account, campaign],
      );
      await db.query(
        `INSERT INTO messages (id, account_id, campaign_id, "to", text, status, encoding, segments, created_at)
         SELECT 'msg_' || $2 || '_' || g, $1, $2, '5511900000001', 'Hi', CASE WHEN g % 3 = 0 THEN 'failed' ELSE 'delivered' END::"MessageStatus",
                'GSM-7', 1, timestamp '2026-01-01' + g * interval '1 ms'
         FROM generate_series(1, ${ROWS}) g`,
        [alice.account, campaign],
      );
    }
    message = `msg_${campaigns[0]}_1`;
    await db.query(
      `INSERT INTO inbound_messages (id, account_id, message_id, "from", text, received_at)
       SELECT 'inb_' || g, $1, $2, '5511900000001', 'reply ' || g, timestamp '2026-01-02' + g * interval '1 ms'
       FROM generate_series(1, ${ROWS}) g`,
      [alice.account, message],
    );
    webhook = 'whk_listed';
    await db.query(
      `INSERT INTO webhooks (id, account_id, url, events, updated_at) VALUES ($1, $2, 'https://hooks.example.com/', '{message.delivered}', now())`,
      [webhook, alice.account],
    );
    await db.query(
      // Dispatched already: the workers of this Tern leave them alone.
      `INSERT INTO events (id, account_id, type, payload, dispatched_at) SELECT 'evt_' || g, $1, 'message.delivered', '{}', now() FROM generate_series(1, ${ROWS}) g`,
      [alice.account],
    );
    await db.query(
      `INSERT INTO webhook_deliveries (id, account_id, event_id, webhook_id, url, attempt, created_at)
       SELECT 'dlv_' || g, $1, 'evt_' || g, $2, 'https://hooks.example.com/', 1, timestamp '2026-01-03' + g * interval '1 ms'
       FROM generate_series(1, ${ROWS}) g`,
      [alice.account, webhook],
    );
  });

  it("reads only the asked page of each campaign's contacts and messages", async () => {
    for (const list of ['contacts(perPage: 3, page: 2) { id }', 'messages(perPage: 3, page: 2) { id }']) {
      rows.reset();
      const response = await t.graphql(
        `{ campaigns(perPage: 2) { ... on CampaignPage { nodes { id ${list} } } } }`,
        {},
        alice.token,
      );
      expect(response.body.errors).toBeUndefined();
      expect(response.body.data.campaigns.nodes.map((node: any) => Object.values(node)[1])).toEqual([
        expect.any(Array),
        expect.any(Array),
      ]);
      expect(
        response.body.data.campaigns.nodes.every(
          (node: any) => (Object.values(node)[1] as unknown[]).length === 3,
        ),
      ).toBe(true);
      // Paged in memory, one statement would bring back all 600 rows of both campaigns.
      expect(rows.largest(), `${list}: ${rows.text()}`).toBeLessThanOrEqual(20);
    }
  });

  it("reads the asked page of each campaign's contacts and messages, per alias and filter", async () => {
    rows.reset();
    const response = await t.graphql(
      `{ campaigns(perPage: 2) { ... on CampaignPage { nodes {
           id
           second: contacts(perPage: 3, page: 2) { phone }
           even: contacts(perPage: 2, tag: "even") { phone }
           latest: messages(perPage: 2) { id }
           failed: messages(perPage: 2, status: failed) { id status }
      } } } }`,
      {},
      alice.token,
    );
    expect(response.body.errors).toBeUndefined();
    const nodes = response.body.data.campaigns.nodes as any[];
    // Newest campaign first.
    expect(nodes.map((node) => node.id)).toEqual([...campaigns].reverse());
    for (const node of nodes) {
      expect(node.second.map((c: { phone: string }) => c.phone)).toEqual([
        '5511900000004',
        '5511900000005',
        '5511900000006',
      ]);
      expect(node.even.map((c: { phone: string }) => c.phone)).toEqual(['5511900000002', '5511900000004']);
      expect(node.latest.map((m: { id: string }) => m.id)).toEqual([
        `msg_${node.id}_${ROWS}`,
        `msg_${node.id}_${ROWS - 1}`,
      ]);
      expect(node.failed).toEqual([
        { id: `msg_${node.id}_${ROWS}`, status: 'failed' },
        { id: `msg_${node.id}_${ROWS - 3}`, status: 'failed' },
      ]);
    }
    // A list paged in memory would have read all 600 contacts or messages in one statement.
    expect(rows.largest(), rows.text()).toBeLessThanOrEqual(20);
  });

  it("reads only the asked page of a message's replies and of a webhook's deliveries", async () => {
    rows.reset();
    const response = await t.graphql(
      `{
        message(id: "${message}") { ... on Message { first: replies(perPage: 2) { text } third: replies(perPage: 2, page: 3) { text } all: replies { id } } }
        webhooks { ... on WebhookPage { nodes { id deliveries(perPage: 3) { id } } } }
      }`,
      {},
      alice.token,
    );
    expect(response.body.errors).toBeUndefined();
    const sent = response.body.data.message;
    expect(sent.first.map((reply: { text: string }) => reply.text)).toEqual(['reply 1', 'reply 2']);
    expect(sent.third.map((reply: { text: string }) => reply.text)).toEqual(['reply 5', 'reply 6']);
    // Without perPage, a page of 20, as every list.
    expect(sent.all).toHaveLength(20);
    expect(response.body.data.webhooks.nodes).toEqual([
      {
        id: webhook,
        deliveries: [{ id: `dlv_${ROWS}` }, { id: `dlv_${ROWS - 1}` }, { id: `dlv_${ROWS - 2}` }],
      },
    ]);
    expect(rows.largest()).toBeLessThanOrEqual(20);
  });

  it("lists only the account's own rows under a parent, even a row filed under it by mistake", async () => {
    const bob = await t.createAccount();
    await t.tern.deps.pool.query(
      `INSERT INTO contacts (id, account_id, campaign_id, phone, created_at) VALUES ('cnt_misfiled', $1, $2, '5511900099999', timestamp '2025-01-01')`,
      [bob.account, campaigns[0]],
    );
    const response = await t.graphql(
      `{ campaign(id: "${campaigns[0]}") { ... on Campaign { contacts(perPage: 1) { id } } } }`,
      {},
      alice.token,
    );
    expect(response.body.data.campaign.contacts).toEqual([{ id: `cnt_${campaigns[0]}_1` }]);
  });
});

describe('the cost of a request', () => {
  let campaign: string;
  beforeAll(async () => {
    campaign = await createCampaign('Costed');
  });

  // 1 for the campaign and 99 contacts: 100 objects at most.
  const hundred = (alias: string) =>
    `${alias}: campaign(id: $id) { ... on Campaign { contacts(perPage: 99) { id } } }`;
  const operation = (aliases: number, extra = '') =>
    `query ($id: ID!) { ${Array.from({ length: aliases }, (_, i) => hundred(`c${i}`)).join(' ')} ${extra} }`;

  it(`takes a batch whose worst case is exactly ${MAX_QUERY_OBJECTS.toLocaleString('en')} objects`, async () => {
    const batch = Array.from({ length: 10 }, () => ({ query: operation(20), variables: { id: campaign } }));
    const response = await t.request('POST', '/graphql', { token: alice.token, body: batch });
    expect(response.status).toBe(200);
    expect(response.body.every((result: any) => result.errors === undefined)).toBe(true);
  });

  it('refuses one object more with 400 QUERY_TOO_LARGE, and runs none of the batch', async () => {
    // 1 (the mutation's result) + 6 × 30 × 100 + 20 × 100 = 20,001.
    const batch = [
      { query: 'mutation { createTemplate(input: { name: "Never", content: "Hi" }) { __typename } }' },
      ...Array.from({ length: 6 }, () => ({ query: operation(30), variables: { id: campaign } })),
      { query: operation(20), variables: { id: campaign } },
    ];
    const response = await t.request('POST', '/graphql', { token: alice.token, body: batch });
    expect(response.status).toBe(400);
    expect(response.body.errors[0].extensions.code).toBe('QUERY_TOO_LARGE');
    expect(response.body.errors[0].message).toContain('20,001');
    expect(await t.tern.deps.prisma.template.count({ where: { accountId: alice.account } })).toBe(0);
  });

  it('multiplies nested pages: 30 aliases of 100 campaigns of 100 contacts are refused before they run', async () => {
    const aliases = Array.from(
      { length: 30 },
      (_, i) =>
        `c${i}: campaigns(perPage: 100) { ... on CampaignPage { nodes { contacts(perPage: 100) { id } } } }`,
    );
    const response = await t.graphql(`{ ${aliases.join(' ')} }`, {}, alice.token);
    expect(response.status).toBe(400);
    expect(response.body.errors[0].extensions.code).toBe('QUERY_TOO_LARGE');
    // 30 × (1 page + 100 × (1 campaign + 100 contacts)).
    expect(response.body.errors[0].message).toContain('303,030');
  });

  it('reads page sizes from variables, and counts the default page when none is given', async () => {
    const nested =
      'query ($n: Int) { a: campaigns(perPage: $n) { ... on CampaignPage { nodes { contacts(perPage: $n) { id } } } } b: campaigns(perPage: $n) { ... on CampaignPage { nodes { contacts(perPage: $n) { id } } } } }';
    expect((await t.graphql(nested, { n: 100 }, alice.token)).status).toBe(400);
    // 2 × (1 + 20 × 21) with the default of 20.
    expect((await t.graphql(nested, {}, alice.token)).status).toBe(200);
  });

  it('counts a document again for other page sizes: a small page first does not let a large one through', async () => {
    const paged =
      'query ($id: ID!, $n: Int, $deep: Boolean!) { campaign(id: $id) { ... on Campaign { contacts(perPage: $n) { id } } } a: campaigns(perPage: $n) { ... on CampaignPage { nodes @include(if: $deep) { contacts(perPage: $n) { id } } } } b: campaigns(perPage: $n) { ... on CampaignPage { nodes { contacts(perPage: $n) { id } } } } }';
    expect((await t.graphql(paged, { id: campaign, n: 5, deep: true }, alice.token)).status).toBe(200);
    expect((await t.graphql(paged, { id: campaign, n: 5, deep: false }, alice.token)).status).toBe(200);
    const large = await t.graphql(paged, { id: campaign, n: 100, deep: true }, alice.token);
    expect(large.status).toBe(400);
    expect(large.body.errors[0].extensions.code).toBe('QUERY_TOO_LARGE');
  });

  it("leaves documents that do not validate to GraphQL's own errors", async () => {
    const response = await t.graphql(
      '{ campaigns(perPage: 100) { ... on CampaignPage { nodes { nope } } } }',
      {},
      alice.token,
    );
    expect(response.body.errors[0].extensions.code).toBe('GRAPHQL_VALIDATION_FAILED');
  });
});
