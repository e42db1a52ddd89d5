import { randomUUID } from 'node:crypto';
import { verifyWebhook } from '../../../src/client/verify-webhook.js';
import { pollUntil } from '../../support/tern-processes.js';
import { type ReceivedCallback, WebhookReceiver } from '../../support/webhook-receiver.js';
import type { Bench, Service } from '../bench.js';
import type { RunnableScenario } from './scenario.js';

/** Events waiting when the drain starts: what the dispatcher can deliver, not what it is fed. */
export const BACKLOG = 20_000;
// Latency is measured apart from capacity: under a steady rate below it, as the pipeline writes events.
const STEADY_EVENTS = 6_000;
const STEADY_PER_SECOND = 600;
const TICK_MS = 50;
const WARMUP_EVENTS = 300;
// Beyond these the scenario reports how far it got instead of waiting: the run must end by itself.
const DRAIN_DEADLINE_MS = 60_000;
const STEADY_DEADLINE_MS = 40_000;
// Rows per INSERT of the backlog, so that no statement carries 20,000 payloads at once.
const BACKLOG_CHUNK = 2_000;
const PATH = '/bench';

export const webhooks: RunnableScenario = {
  name: 'webhooks',
  describe:
    `a backlog of ${BACKLOG.toLocaleString('en')} \`message.delivered\` event rows written at once, drained by the workers to a registered webhook (a receiver on loopback in the harness that answers 200 at once; every callback checked with \`verifyWebhook\`): callbacks/s from the backlog's commit to its last callback. ` +
    `Then ${STEADY_EVENTS.toLocaleString('en')} more written at a steady ${STEADY_PER_SECOND}/s (as the message pipeline writes them): latency is event \`created_at\` → callback received, over those. Rows below: backlog events / callbacks verified / failing verification; "intake" is the steady phase's rate`,
  async run(bench, layout) {
    const receiver = await WebhookReceiver.start();
    try {
      const service = await bench.startGateway(layout, {
        workers: true,
        env: { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', WEBHOOK_ALLOW_INSECURE: 'true' },
      });
      return await bench.withService(service, async () => {
        const { webhook, secret } = await register(
          service,
          await bench.bearer(service),
          `${receiver.url}${PATH}`,
        );
        try {
          const { rows } = await bench.database.query<{ id: string }>(
            'SELECT id FROM accounts ORDER BY created_at LIMIT 1',
          );
          const account = rows[0]!.id;
          // The warm-up also shows that the dispatcher and the delivery worker are running.
          const warmup = eventRows(account, WARMUP_EVENTS, new Date());
          await bench.database.query(warmup.sql, warmup.values);
          await received(service, receiver, 1 + WARMUP_EVENTS, 60_000);

          const watch = await bench.watch(service);
          const drainStart = Date.now();
          const backlog = await drain(bench, service, receiver, account);
          const window = await watch.stop(BACKLOG);
          const steady = await steadyLatency(bench, service, receiver, account);

          const drained = verified(secret, backlog.callbacks);
          const wallSeconds = ((backlog.callbacks.at(-1)?.at ?? Date.now()) - drainStart) / 1000;
          const latencies = [...verified(secret, steady.callbacks).latencies.values()].sort((a, b) => a - b);
          const incomplete = [
            backlog.done
              ? null
              : `${drained.latencies.size} of ${BACKLOG} backlog events reached the receiver within ${DRAIN_DEADLINE_MS / 1000} s`,
            steady.done
              ? null
              : `${latencies.length} of ${STEADY_EVENTS} steady events reached the receiver within ${STEADY_DEADLINE_MS / 1000} s`,
          ].filter((reason) => reason !== null);
          return {
            result: {
              kind: 'flow' as const,
              items: BACKLOG,
              intakePerSecond: steady.perSecond,
              accepted: BACKLOG,
              completed: drained.latencies.size,
              failed: drained.failed,
              wallSeconds,
              perSecond: drained.latencies.size / wallSeconds,
              p50Ms: percentile(latencies, 0.5),
              p99Ms: percentile(latencies, 0.99),
              incomplete: incomplete.length > 0 ? incomplete.join('; ') : null,
              costs: { ...window.costs, pgTransactionsPerMessage: null },
              profile: null,
            },
            window,
          };
        } finally {
          // The next layout's gateway shares the database: it must not call a receiver that has gone.
          await bench.database.query('UPDATE webhooks SET deleted_at = now() WHERE id = $1', [webhook]);
        }
      });
    } finally {
      await receiver.close();
    }
  },
};

async function register(
  service: Service,
  authorization: string,
  url: string,
): Promise<{ webhook: string; secret: string }> {
  const response = await fetch(`${service.url}/v1/webhooks`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization },
    body: JSON.stringify({ url, events: ['message.delivered'] }),
  });
  const body = (await response.json()) as { webhook?: string; secret?: string };
  if (response.status !== 201 || !body.webhook || !body.secret)
    throw new Error(`webhook registration failed with ${response.status}: ${JSON.stringify(body)}`);
  return { webhook: body.webhook, secret: body.secret };
}

/** The backlog, written in one transaction so that the dispatcher finds it whole; then its callbacks. */
async function drain(
  bench: Bench,
  service: Service,
  receiver: WebhookReceiver,
  account: string,
): Promise<{ callbacks: ReceivedCallback[]; done: boolean }> {
  const before = receiver.at(PATH).length;
  const client = await bench.database.connect();
  try {
    await client.query('BEGIN');
    for (let written = 0; written < BACKLOG; written += BACKLOG_CHUNK) {
      const { sql, values } = eventRows(account, Math.min(BACKLOG_CHUNK, BACKLOG - written), new Date());
      await client.query(sql, values);
    }
    await client.query('COMMIT');
  } finally {
    client.release();
  }
  const done = await received(service, receiver, before + BACKLOG, DRAIN_DEADLINE_MS);
  return { callbacks: receiver.at(PATH).slice(before), done };
}

/** STEADY_EVENTS rows at STEADY_PER_SECOND, a batch every TICK_MS, and their callbacks. */
async function steadyLatency(
  bench: Bench,
  service: Service,
  receiver: WebhookReceiver,
  account: string,
): Promise<{ callbacks: ReceivedCallback[]; done: boolean; perSecond: number }> {
  const before = receiver.at(PATH).length;
  const start = Date.now();
  let written = 0;
  while (written < STEADY_EVENTS) {
    const due =
      Math.min(STEADY_EVENTS, Math.ceil(((Date.now() - start + TICK_MS) / 1000) * STEADY_PER_SECOND)) -
      written;
    if (due > 0) {
      const { sql, values } = eventRows(account, due, new Date());
      await bench.database.query(sql, values);
      written += due;
    }
    await new Promise((resolve) => setTimeout(resolve, TICK_MS));
  }
  const perSecond = written / ((Date.now() - start) / 1000);
  const done = await received(service, receiver, before + STEADY_EVENTS, STEADY_DEADLINE_MS);
  return { callbacks: receiver.at(PATH).slice(before), done, perSecond };
}

/** Event rows as the message pipeline writes them, `count` of them created at `at`. */
function eventRows(account: string, count: number, at: Date): { sql: string; values: unknown[] } {
  const ids = Array.from({ length: count }, () => `evt_${randomUUID().replaceAll('-', '')}`);
  const payloads = ids.map(() =>
    JSON.stringify({
      event: 'message.delivered',
      message: `msg_${randomUUID().replaceAll('-', '')}`,
      to: '5511900000000',
      status: 'delivered',
      delivered_at: at.toISOString(),
      campaign: null,
    }),
  );
  return {
    sql: `INSERT INTO events (id, account_id, type, payload, created_at)
          SELECT id, $2, 'message.delivered', payload, $4 FROM unnest($1::text[], $3::jsonb[]) AS v(id, payload)`,
    values: [ids, account, payloads, at],
  };
}

/** Each event's first verified callback, as latency from the event's creation; and the callbacks failing verification. */
function verified(
  secret: string,
  callbacks: ReceivedCallback[],
): { latencies: Map<string, number>; failed: number } {
  const latencies = new Map<string, number>();
  let failed = 0;
  for (const callback of callbacks) {
    const checked = verifyWebhook(secret, callback.headers, callback.body, new Date(callback.at));
    if (!checked.ok) {
      failed += 1;
      continue;
    }
    if (!latencies.has(checked.event.id))
      latencies.set(checked.event.id, callback.at - Date.parse(checked.event.created_at));
  }
  return { latencies, failed };
}

/** Waits until the receiver has `count` callbacks; false when `timeoutMs` passed first. */
async function received(
  service: Service,
  receiver: WebhookReceiver,
  count: number,
  timeoutMs: number,
): Promise<boolean> {
  try {
    await pollUntil(
      'webhook callbacks',
      async () => {
        service.assertRunning();
        return receiver.at(PATH).length >= count ? true : undefined;
      },
      { timeoutMs: Math.max(timeoutMs, 0), intervalMs: 50 },
    );
    return true;
  } catch (error) {
    if (!(error instanceof Error) || !error.message.startsWith('timed out')) throw error;
    return false;
  }
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)]!;
}
