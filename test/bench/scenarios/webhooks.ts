import { randomUUID } from 'node:crypto';
import { verifyWebhook } from '../../../src/client/verify-webhook.js';
import { pollUntil } from '../../support/tern-processes.js';
import { WebhookReceiver } from '../../support/webhook-receiver.js';
import type { Bench, Service } from '../bench.js';
import type { RunnableScenario } from './scenario.js';

export const EVENTS = 10_000;
// Offered above the 500/s target, so that keeping up with it shows the target met.
const EVENTS_PER_SECOND = 600;
const TICK_MS = 50;
const WARMUP_EVENTS = 300;
// Beyond this the scenario reports how far it got instead of waiting: the run must end by itself.
const DEADLINE_MS = 60_000;
const PATH = '/bench';

export const webhooks: RunnableScenario = {
  name: 'webhooks',
  describe:
    `${EVENTS.toLocaleString('en')} \`message.delivered\` event rows written at ${EVENTS_PER_SECOND}/s (as the message pipeline writes them) while the workers ` +
    'dispatch them to a registered webhook: a receiver on loopback in the harness answers 200 and every callback is checked with `verifyWebhook` afterwards. ' +
    'Timed from the first event to the last callback; latency is event `created_at` → callback received. Rows below: events written / callbacks verified / failing verification',
  async run(bench, layout) {
    const receiver = await WebhookReceiver.start();
    try {
      const service = await bench.startGateway(layout, {
        workers: true,
        env: { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', WEBHOOK_ALLOW_INSECURE: 'true' },
      });
      return await bench.withService(service, async () => {
        const { webhook, secret } = await register(service, await bench.bearer(service), `${receiver.url}${PATH}`);
        try {
          const { rows } = await bench.database.query<{ id: string }>('SELECT id FROM accounts ORDER BY created_at LIMIT 1');
          const account = rows[0]!.id;
          // The warm-up also shows that the dispatcher and the delivery worker are running.
          await produce(bench, account, WARMUP_EVENTS);
          await received(service, receiver, 1 + WARMUP_EVENTS, 60_000);

          const before = receiver.at(PATH).length;
          const watch = await bench.watch(service);
          const start = Date.now();
          const written = await produce(bench, account, EVENTS);
          const intakeSeconds = (Date.now() - start) / 1000;
          const done = await received(service, receiver, before + EVENTS, DEADLINE_MS - (Date.now() - start));
          const window = await watch.stop(EVENTS);

          const callbacks = receiver.at(PATH).slice(before);
          const firstReceipt = new Map<string, number>();
          let failed = 0;
          for (const callback of callbacks) {
            const verified = verifyWebhook(secret, callback.headers, callback.body, new Date(callback.at));
            if (!verified.ok) {
              failed += 1;
              continue;
            }
            const latency = callback.at - Date.parse(verified.event.created_at);
            if (!firstReceipt.has(verified.event.id)) firstReceipt.set(verified.event.id, latency);
          }
          const latencies = [...firstReceipt.values()].sort((a, b) => a - b);
          const last = callbacks.at(-1)?.at ?? Date.now();
          const wallSeconds = (last - start) / 1000;
          return {
            result: {
              kind: 'flow' as const,
              items: EVENTS,
              intakePerSecond: written / intakeSeconds,
              accepted: written,
              completed: firstReceipt.size,
              failed,
              wallSeconds,
              perSecond: firstReceipt.size / wallSeconds,
              p50Ms: percentile(latencies, 0.5),
              p99Ms: percentile(latencies, 0.99),
              incomplete: done ? null : `${firstReceipt.size} of ${written} events reached the receiver within ${Math.round(DEADLINE_MS / 1000)} s`,
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

async function register(service: Service, authorization: string, url: string): Promise<{ webhook: string; secret: string }> {
  const response = await fetch(`${service.url}/v1/webhooks`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization },
    body: JSON.stringify({ url, events: ['message.delivered'] }),
  });
  const body = (await response.json()) as { webhook?: string; secret?: string };
  if (response.status !== 201 || !body.webhook || !body.secret) throw new Error(`webhook registration failed with ${response.status}: ${JSON.stringify(body)}`);
  return { webhook: body.webhook, secret: body.secret };
}

/** Writes `count` event rows at EVENTS_PER_SECOND, in a batch every TICK_MS; answers how many it wrote. */
async function produce(bench: Bench, account: string, count: number): Promise<number> {
  const start = Date.now();
  let written = 0;
  while (written < count) {
    const due = Math.min(count, Math.ceil(((Date.now() - start + TICK_MS) / 1000) * EVENTS_PER_SECOND)) - written;
    if (due > 0) {
      const now = new Date();
      const ids = Array.from({ length: due }, () => `evt_${randomUUID().replaceAll('-', '')}`);
      const payloads = ids.map(() =>
        JSON.stringify({
          event: 'message.delivered',
          message: `msg_${randomUUID().replaceAll('-', '')}`,
          to: '5511900000000',
          status: 'delivered',
          delivered_at: now.toISOString(),
          campaign: null,
        }),
      );
      await bench.database.query(
        `INSERT INTO events (id, account_id, type, payload, created_at)
         SELECT id, $2, 'message.delivered', payload, $4 FROM unnest($1::text[], $3::jsonb[]) AS v(id, payload)`,
        [ids, account, payloads, now],
      );
      written += due;
    }
    await new Promise((resolve) => setTimeout(resolve, TICK_MS));
  }
  return written;
}

/** Waits until the receiver has `count` callbacks; false when `timeoutMs` passed first. */
async function received(service: Service, receiver: WebhookReceiver, count: number, timeoutMs: number): Promise<boolean> {
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
