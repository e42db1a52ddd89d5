import { pollUntil } from '../../support/tern-processes.js';
import type { Bench, Service } from '../bench.js';
import { HARNESS_SQL } from '../profile.js';
import type { FlowResult, RunnableScenario } from './scenario.js';

export const CONTACTS = 20_000;
const BATCH_SIZE = 1_000;
// One batch: the dispatcher and the send workers are known to run, and their code is warm.
const WARMUP_CONTACTS = 500;
// At the 1,000/s target the work takes 20 s; past this bound the scenario reports how far it got
// rather than holding up the run, whose budget every later scenario shares.
const DEADLINE_MS = 120_000;
// The figures come from the rows' own timestamps, so polling more often would only load PostgreSQL.
const POLL_MS = 250;
const TEMPLATE = 'Hi {{name}}, your order has shipped and arrives tomorrow';

/** What only this scenario measures; the report adds a row for it. */
export interface DispatchFigures {
  /** From the harness's `start` request to the campaign's `finished_at`; null when it did not finish in time. */
  startToFinishedSeconds: number | null;
}

export type DispatchResult = FlowResult & { dispatch: DispatchFigures };

async function call(service: Service, authorization: string, path: string, body?: unknown): Promise<any> {
  const response = await fetch(`${service.url}${path}`, {
    method: 'POST',
    headers: { authorization, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const answer = await response.json();
  if (response.status >= 300)
    throw new Error(`POST ${path} answered ${response.status}: ${JSON.stringify(answer)}`);
  return answer;
}

/**
 * A campaign created through the API, its contacts inserted in one statement: the import path
 * has a scenario of its own, and 20,000 single adds would take longer than the dispatch.
 */
async function campaignWith(
  bench: Bench,
  service: Service,
  authorization: string,
  template: string,
  contacts: number,
  areaCode: string,
): Promise<string> {
  const { campaign } = (await call(service, authorization, '/v1/campaigns', {
    name: `Dispatch bench ${contacts}`,
    template,
    delay: 0,
    batch_size: BATCH_SIZE,
  })) as { campaign: string };
  // Numbers ending 0001 or 0002 are skipped: the simulator fails the one and replies to the other.
  await bench.database.query(
    `INSERT INTO contacts (id, account_id, campaign_id, phone, name, tags, created_at)
     SELECT 'cnt_' || md5(random()::text), c.account_id, c.id, '55' || $2 || '9' || lpad(n::text, 8, '0'), 'Contact ' || n, '{}', now()
     FROM campaigns c, generate_series(1, $3::int * 2) AS n
     WHERE c.id = $1 AND n % 10000 NOT IN (1, 2)
     ORDER BY n
     LIMIT $3`,
    [campaign, areaCode, contacts],
  );
  return campaign;
}

/**
 * Polls until the campaign has finished and none of its messages is still queued; false when
 * `timeoutMs` passed first. The queued messages are counted only once the campaign has finished,
 * through the (campaign, status) index: a poll must not cost PostgreSQL what the service needs.
 */
async function settled(
  bench: Bench,
  service: Service,
  campaign: string,
  timeoutMs: number,
): Promise<boolean> {
  try {
    await pollUntil(
      'the campaign to finish and its messages to leave queued',
      async () => {
        service.assertRunning();
        const { rows } = await bench.database.query<{ status: string; queued: string | null }>(
          `${HARNESS_SQL} SELECT c.status::text AS status,
                  CASE WHEN c.status = 'finished' THEN (SELECT count(*) FROM messages m WHERE m.campaign_id = c.id AND m.status = 'queued') END AS queued
           FROM campaigns c WHERE c.id = $1`,
          [campaign],
        );
        const { status, queued } = rows[0]!;
        if (status !== 'running' && status !== 'finished') throw new Error(`the campaign went ${status}`);
        return status === 'finished' && Number(queued) === 0 ? true : undefined;
      },
      { timeoutMs: Math.max(timeoutMs, 0), intervalMs: POLL_MS },
    );
    return true;
  } catch (error) {
    if (!(error instanceof Error) || !error.message.startsWith('timed out')) throw error;
    return false;
  }
}

/** Where the campaign got to, from its rows: counts, when it finished, and created → sent latencies. */
async function figures(bench: Bench, campaign: string) {
  const { rows } = await bench.database.query<{
    status: string;
    finished_at: Date | null;
    created: string;
    sent: string;
    failed: string;
    last_sent: Date | null;
    p50: number | null;
    p99: number | null;
  }>(
    `SELECT c.status::text AS status, c.finished_at, m.*
     FROM campaigns c,
          LATERAL (SELECT count(*) AS created,
                          count(*) FILTER (WHERE status IN ('sent', 'delivered')) AS sent,
                          count(*) FILTER (WHERE status = 'failed') AS failed,
                          max(sent_at) FILTER (WHERE status IN ('sent', 'delivered')) AS last_sent,
                          percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM sent_at - created_at)) FILTER (WHERE status IN ('sent', 'delivered')) * 1000 AS p50,
                          percentile_cont(0.99) WITHIN GROUP (ORDER BY extract(epoch FROM sent_at - created_at)) FILTER (WHERE status IN ('sent', 'delivered')) * 1000 AS p99
                   FROM messages WHERE campaign_id = c.id) AS m
     WHERE c.id = $1`,
    [campaign],
  );
  const row = rows[0]!;
  return { ...row, created: Number(row.created), sent: Number(row.sent), failed: Number(row.failed) };
}

export const campaignDispatch: RunnableScenario = {
  name: 'campaign-dispatch',
  describe:
    `a campaign of ${CONTACTS.toLocaleString('en')} contacts (template with \`{{name}}\`, \`batch_size\` ${BATCH_SIZE.toLocaleString('en')}, \`delay\` 0) started with \`POST /v1/campaigns/{id}/start\` and dispatched by the workers through the send pipeline (simulator, delay 0), ` +
    'after a warm-up campaign of 500. Timed from the `start` request to the last message `sent` (or `delivered`); latency is message `created_at` → `sent_at`. ' +
    'Rows below: messages created / sent or delivered / failed; "intake" is messages created per second, from `start` until the campaign is `finished` (every contact has a message)',
  async run(bench, layout) {
    const service = await bench.startGateway(layout, { workers: true });
    const campaigns: string[] = [];
    return bench.withService(service, async () => {
      try {
        const authorization = await bench.bearer(service);
        const { template } = (await call(service, authorization, '/v1/templates', {
          name: 'Dispatch bench',
          content: TEMPLATE,
        })) as { template: string };

        const warm = await campaignWith(bench, service, authorization, template, WARMUP_CONTACTS, '21');
        campaigns.push(warm);
        await call(service, authorization, `/v1/campaigns/${warm}/start`);
        if (!(await settled(bench, service, warm, 60_000))) {
          throw new Error(
            `the warm-up campaign of ${WARMUP_CONTACTS} contacts was not finished and sent within 60 s`,
          );
        }

        const campaign = await campaignWith(bench, service, authorization, template, CONTACTS, '31');
        campaigns.push(campaign);
        const watch = await bench.watch(service);
        const start = new Date();
        await call(service, authorization, `/v1/campaigns/${campaign}/start`);
        const done = await settled(bench, service, campaign, DEADLINE_MS - (Date.now() - start.getTime()));
        const waitedSeconds = (Date.now() - start.getTime()) / 1000;
        const reached = await figures(bench, campaign);
        // Per message sent, so that a campaign cut short by the deadline is not credited with the messages it never sent.
        const window = await watch.stop(Math.max(reached.sent, 1));
        const startToFinishedSeconds = reached.finished_at
          ? (reached.finished_at.getTime() - start.getTime()) / 1000
          : null;
        const wallSeconds = reached.last_sent
          ? (reached.last_sent.getTime() - start.getTime()) / 1000
          : waitedSeconds;
        return {
          result: {
            kind: 'flow' as const,
            items: CONTACTS,
            intakePerSecond: reached.created / (startToFinishedSeconds ?? waitedSeconds),
            accepted: reached.created,
            completed: reached.sent,
            failed: reached.failed,
            wallSeconds,
            perSecond: reached.sent / wallSeconds,
            p50Ms: reached.p50 ?? 0,
            p99Ms: reached.p99 ?? 0,
            incomplete: done
              ? null
              : `campaign ${reached.status}; ${reached.created} of ${CONTACTS} messages created, ${reached.sent} sent within ${Math.round(DEADLINE_MS / 1000)} s`,
            costs: { ...window.costs, pgTransactionsPerMessage: null },
            profile: null,
            dispatch: { startToFinishedSeconds },
          } satisfies DispatchResult,
          window,
        };
      } finally {
        // The next scenario's workers share the database: their recovery sweep would dispatch a campaign left running.
        await bench.database.query(
          `UPDATE campaigns SET status = 'cancelled' WHERE id = ANY($1) AND status IN ('running', 'paused')`,
          [campaigns],
        );
      }
    });
  },
};
