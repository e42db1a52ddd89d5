import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTern, type TestAccount, type TestTern } from './support/tern.js';

// Paging by cursor (`first`/`after`): a walk through a list that grows meanwhile sees every row
// once, a cursor that is not one is refused, and another account's cursor shows nothing of it.

let t: TestTern;
let alice: TestAccount;
let bob: TestAccount;
const ROWS = 130;

const MESSAGES = `query ($first: Int, $after: String, $page: Int) {
  messages(first: $first, after: $after, page: $page) {
    __typename
    ... on MessagePage { nodes { id } pageInfo { endCursor hasNextPage } }
    ... on ValidationError { code details { field issue } }
  }
}`;

/**
 * `count` messages of the account, created `startSeconds` seconds after a fixed time and
 * onwards, two per second so that every page boundary can fall between rows of the same time.
 */
async function insertMessages(account: string, prefix: string, count: number, startSeconds: number) {
  t.database.leaveOutOfLedger(account, 'its messages are inserted by hand, two per second');
  await t.tern.deps.pool.query(
    `INSERT INTO messages (id, account_id, "to", text, encoding, segments, created_at)
     SELECT $2 || lpad(n::text, 6, '0'), $1, '351910000000', 'cursor', 'GSM-7', 1,
            timestamptz '2026-01-01T00:00:00Z' + (($3 + n / 2) * interval '1 second')
     FROM generate_series(1, $4) AS n`,
    [account, `msg_${prefix}`, startSeconds, count],
  );
}

async function page(account: TestAccount, variables: Record<string, unknown>) {
  const response = await t.graphql(MESSAGES, variables, account.token);
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  return response.body.data.messages;
}

beforeAll(async () => {
  t = await startTern();
  [alice, bob] = await Promise.all([t.createAccount(), t.createAccount()]);
  await insertMessages(alice.account, 'a', ROWS, 0);
  await insertMessages(bob.account, 'b', 10, 0);
});
afterAll(() => t.stop());

describe('messages by cursor', () => {
  it('visits every row exactly once while rows are inserted meanwhile, where page numbers repeat rows', async () => {
    const seen: string[] = [];
    let after: string | null = null;
    let inserted = 0;
    for (let pages = 1; ; pages++) {
      // 130 rows in pages of 25: a walk that does not move on would never end.
      expect(pages).toBeLessThanOrEqual(6);
      const result: any = await page(alice, { first: 25, after });
      seen.push(...result.nodes.map((node: { id: string }) => node.id));
      if (!result.pageInfo.hasNextPage) break;
      after = result.pageInfo.endCursor;
      // Newer messages arrive between pages: the walk goes on where it was.
      await insertMessages(alice.account, `n${inserted++}x`, 3, 10_000 + inserted * 10);
    }
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen.filter((id) => id.startsWith('msg_a')).length).toBe(ROWS);
    expect(seen.every((id) => id.startsWith('msg_a'))).toBe(true);

    // The same walk by page number slips by the rows inserted meanwhile.
    const first = await t.graphql(
      '{ messages(page: 1, perPage: 25) { ... on MessagePage { nodes { id } } } }',
      {},
      alice.token,
    );
    await insertMessages(alice.account, 'late', 5, 20_000);
    const second = await t.graphql(
      '{ messages(page: 2, perPage: 25) { ... on MessagePage { nodes { id } } } }',
      {},
      alice.token,
    );
    const firstIds = new Set(first.body.data.messages.nodes.map((node: { id: string }) => node.id));
    const repeated = second.body.data.messages.nodes.filter((node: { id: string }) => firstIds.has(node.id));
    expect(repeated.length).toBe(5);
  });

  it('answers an empty last page with no cursor and no next page', async () => {
    const all: any = await page(bob, { first: 10 });
    expect(all.nodes).toHaveLength(10);
    expect(all.pageInfo.hasNextPage).toBe(false);
    const beyond: any = await page(bob, { first: 10, after: all.pageInfo.endCursor });
    expect(beyond).toMatchObject({ nodes: [], pageInfo: { endCursor: null, hasNextPage: false } });
  });

  it('refuses a cursor that is not one, and page mixed with a cursor, with 422-style details', async () => {
    for (const after of [
      'nonsense',
      Buffer.from('["2026-01-01","msg_x"]').toString('base64url'),
      'x'.repeat(201),
    ]) {
      const refused: any = await page(alice, { first: 5, after });
      expect(refused.__typename).toBe('ValidationError');
      expect(refused.details[0].field).toBe('after');
    }
    const mixed: any = await page(alice, { first: 5, page: 2 });
    expect(mixed).toMatchObject({
      code: 'validation_error',
      details: [{ field: 'page', issue: 'invalid_value' }],
    });
    const tooMany: any = await page(alice, { first: 101 });
    expect(tooMany.details[0].field).toBe('first');
  });

  it('gives a numbered page a pageInfo that a cursor walk continues from', async () => {
    const numbered = await t.graphql(
      '{ messages(page: 2, perPage: 4) { ... on MessagePage { nodes { id } pageInfo { endCursor hasNextPage } } } }',
      {},
      bob.token,
    );
    const { nodes, pageInfo } = numbered.body.data.messages;
    expect(pageInfo.hasNextPage).toBe(true);
    const next: any = await page(bob, { first: 4, after: pageInfo.endCursor });
    const third = await t.graphql(
      '{ messages(page: 3, perPage: 4) { ... on MessagePage { nodes { id } } } }',
      {},
      bob.token,
    );
    expect(nodes).toHaveLength(4);
    expect(next.nodes).toEqual(third.body.data.messages.nodes);
  });

  it("shows nothing of another account through its cursor: only the caller's own rows after that point", async () => {
    const alicePage: any = await page(alice, { first: 100 });
    const foreign: any = await page(bob, { first: 100, after: alicePage.pageInfo.endCursor });
    expect(foreign.nodes.every((node: { id: string }) => node.id.startsWith('msg_b'))).toBe(true);
  });
});

describe('opt-outs by cursor (they have no id: a cursor names the phone)', () => {
  it('visits every number once, ties of the same second included, and pageInfo works', async () => {
    const carol = await t.createAccount();
    // 45 numbers, three per second: page ends fall between numbers opted out at the same time.
    await t.tern.deps.pool.query(
      `INSERT INTO opt_outs (account_id, phone, created_at)
       SELECT $1, '3519100' || lpad(n::text, 5, '0'), timestamptz '2026-01-01T00:00:00Z' + (n / 3) * interval '1 second'
       FROM generate_series(1, 45) AS n`,
      [carol.account],
    );
    const seen: string[] = [];
    let after: string | null = null;
    for (let pages = 1; pages <= 10; pages++) {
      const response = await t.graphql(
        `query ($after: String) { optOuts(first: 10, after: $after) {
           ... on OptOutPage { nodes { phone } pageInfo { endCursor hasNextPage } } } }`,
        { after },
        carol.token,
      );
      expect(response.body.errors, JSON.stringify(response.body)).toBeUndefined();
      const result = response.body.data.optOuts;
      seen.push(...result.nodes.map((node: { phone: string }) => node.phone));
      if (!result.pageInfo.hasNextPage) break;
      after = result.pageInfo.endCursor;
    }
    expect(seen).toHaveLength(45);
    expect(new Set(seen).size).toBe(45);
    expect(seen[0]).toBe('351910000045');
  });
});

describe('the cost of pages by cursor', () => {
  it('counts `first` like perPage, nested pages multiplied', async () => {
    const aliases = Array.from(
      { length: 30 },
      (_, i) =>
        `c${i}: campaigns(first: 100) { ... on CampaignPage { nodes { contacts(perPage: 100) { id } } } }`,
    );
    const response = await t.graphql(`{ ${aliases.join(' ')} }`, {}, alice.token);
    expect(response.status).toBe(400);
    expect(response.body.errors[0].message).toContain('303,030');
  });

  it('pages every top-level list by cursor', async () => {
    for (const list of ['campaigns', 'templates', 'webhooks', 'apiKeys', 'optOuts']) {
      const response = await t.graphql(
        `{ ${list}(first: 1) { __typename ... on Error { code } } }`,
        {},
        alice.token,
      );
      expect(response.body.errors, `${list}: ${JSON.stringify(response.body)}`).toBeUndefined();
    }
  });
});
