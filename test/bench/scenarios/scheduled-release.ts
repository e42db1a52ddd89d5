import { pollUntil } from '../../support/tern-processes.js';
import { HARNESS_SQL } from '../profile.js';
import type { FlowResult, RunnableScenario } from './scenario.js';

export const SCHEDULED = 100_000;
// The gateway and its workers are up and idle well before the minute the messages are due.
const DUE_IN_MS = 20_000;
const DEADLINE_MS = 150_000;
const POLL_MS = 500;

/**
 * 100,000 messages scheduled for the same instant, written straight into PostgreSQL (as 100,000
 * scheduled sends would have left them), then released by the workers' loop and delivered.
 * Timed from the instant they are due to the last `delivered`; latency is due → `sent_at`, the
 * lag of the release and the hand-over together.
 */
export const scheduledRelease: RunnableScenario = {
  name: 'scheduled-release',
  describe:
    `${SCHEDULED.toLocaleString('en')} messages scheduled for the same instant (inserted in one statement), released by the workers' loop and delivered (simulator, delay 0). ` +
    'Timed from the instant they are due to the last `delivered`; latency is due → `sent_at`; compare messages/s with end-to-end',
  async run(bench, layout) {
    const service = await bench.startGateway(layout, { workers: true });
    return bench.withService(service, async () => {
      const due = new Date(Date.now() + DUE_IN_MS);
      // Numbers ending 0001 or 0002 are skipped: the simulator fails the one and replies to the other.
      await bench.database.query(
        `INSERT INTO messages (id, account_id, "to", text, encoding, segments, status, send_at, release_at, expires_at, created_at)
         SELECT 'msg_sched' || n, a.id, '5541' || lpad(n::text, 8, '0') || '7', 'Your appointment is tomorrow at 10:00', 'GSM-7', 1,
                'scheduled', $1, $1, $1::timestamptz + interval '1 day', now()
         FROM (SELECT id FROM accounts ORDER BY created_at LIMIT 1) a, generate_series(1, $2::int) AS n`,
        [due, SCHEDULED],
      );
      await bench.database.query('ANALYZE messages');
      const watch = await bench.watch(service);
      await pollUntil(
        'the scheduled messages to be delivered',
        async () => {
          service.assertRunning();
          const { rows } = await bench.database.query<{ left: string }>(
            `${HARNESS_SQL} SELECT count(*) AS left FROM messages WHERE id LIKE 'msg_sched%' AND status IN ('scheduled', 'queued', 'sent')`,
          );
          return Number(rows[0]!.left) === 0 ? true : undefined;
        },
        { timeoutMs: DUE_IN_MS + DEADLINE_MS, intervalMs: POLL_MS },
      ).catch((error: unknown) => {
        if (!(error instanceof Error) || !error.message.startsWith('timed out')) throw error;
      });
      const { rows } = await bench.database.query<{
        delivered: string;
        failed: string;
        last: Date | null;
        p50: number | null;
        p99: number | null;
      }>(
        `SELECT count(*) FILTER (WHERE status = 'delivered') AS delivered,
                count(*) FILTER (WHERE status = 'failed') AS failed,
                max(delivered_at) AS last,
                percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM sent_at - send_at)) * 1000 AS p50,
                percentile_cont(0.99) WITHIN GROUP (ORDER BY extract(epoch FROM sent_at - send_at)) * 1000 AS p99
         FROM messages WHERE id LIKE 'msg_sched%'`,
      );
      const row = rows[0]!;
      const delivered = Number(row.delivered);
      const window = await watch.stop(Math.max(delivered, 1));
      const wallSeconds = row.last ? (row.last.getTime() - due.getTime()) / 1000 : DEADLINE_MS / 1000;
      const result: FlowResult = {
        kind: 'flow',
        items: SCHEDULED,
        intakePerSecond: 0,
        accepted: SCHEDULED,
        completed: delivered,
        failed: Number(row.failed),
        wallSeconds,
        perSecond: delivered / wallSeconds,
        p50Ms: row.p50 ?? 0,
        p99Ms: row.p99 ?? 0,
        incomplete:
          delivered + Number(row.failed) === SCHEDULED
            ? null
            : `${delivered} of ${SCHEDULED} delivered within ${Math.round(DEADLINE_MS / 1000)} s of their due time`,
        costs: { ...window.costs, pgTransactionsPerMessage: null },
        profile: null,
      };
      return { result, window };
    });
  },
};
