import type { Queue } from 'bullmq';
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';

/** An HTTP status as the metrics group it: `2xx`, `4xx`, … */
export function statusClass(status: number): string {
  return `${Math.floor(status / 100)}xx`;
}

// A scrape must answer even when Redis or PostgreSQL does not: what cannot be read in time is left out.
const SOURCE_TIMEOUT_MS = 2_000;

async function readOrSkip<T>(read: () => Promise<T>): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), SOURCE_TIMEOUT_MS);
  });
  try {
    return await Promise.race([read().catch(() => undefined), late]);
  } finally {
    clearTimeout(timer);
  }
}

export type QueueDepths = () => Promise<Record<string, Record<string, number>>>;

const QUEUE_STATES = ['wait', 'active', 'delayed', 'prioritized'] as const;

/** Jobs per state of each queue, read from Redis. */
export async function readQueueDepths(
  queues: readonly Queue[],
): Promise<Record<string, Record<string, number>>> {
  const counts = await Promise.all(queues.map((queue) => queue.getJobCounts(...QUEUE_STATES)));
  return Object.fromEntries(queues.map((queue, index) => [queue.name, counts[index]!]));
}

/**
 * What the metrics read of a carrier's health (the carriers' own report has these fields and
 * more): the metrics take the readings, and know nothing of the carriers.
 */
export interface CarrierReading {
  carrier: string;
  state: string;
  window?: { inUse: number };
  errors?: Record<string, number>;
  bindsOpen?: number;
  circuit?: string;
}

/** Error counts under the names operators see them by in GET /health and the metrics: `bind_failures`, … */
export function errorCountsByKind(errors: Record<string, number>): Record<string, number> {
  return Object.fromEntries(
    Object.entries(errors).map(([name, count]) => [
      name.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`),
      count,
    ]),
  );
}

/** What the metrics read at each scrape, rather than count as things happen. */
export interface MetricSources {
  /** Jobs per state of each queue, as BullMQ counts them in Redis. */
  queueDepths?: QueueDepths;
  /** When the oldest message still `queued` was accepted; null when none is. */
  oldestQueuedMessage?: () => Promise<Date | null>;
  /** This process's carriers. */
  carriers?: () => CarrierReading[];
}

/**
 * Every Prometheus series of one Tern process, on a registry of its own (so that several
 * instances in one process, as in the tests, never share counts). Labels are low-cardinality
 * by construction: route templates, operation names known to Tern, queues, carriers, outcomes;
 * never an account, a URL or an id.
 *
 * With WEB_CONCURRENCY above 1 the supervisor sums the processes' series (prom-client's
 * AggregatorRegistry); the series every process reads from the same shared state (queue depths,
 * the oldest queued message) are aggregated with `max` instead, so they are not multiplied.
 */
export class Metrics {
  readonly registry = new Registry();
  private sources: MetricSources = {};

  readonly httpRequests = new Counter({
    name: 'tern_http_requests_total',
    help: 'HTTP requests answered, by method, route template and status class',
    labelNames: ['method', 'route', 'status_class'] as const,
    registers: [this.registry],
  });

  readonly httpDuration = new Histogram({
    name: 'tern_http_request_duration_seconds',
    help: 'Time from the request arriving to its answer being sent, by method, route template and status class',
    labelNames: ['method', 'route', 'status_class'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [this.registry],
  });

  readonly graphqlOperations = new Counter({
    name: 'tern_graphql_operations_total',
    help: 'GraphQL operations run, through /graphql or a /v1 route, by operation name (Tern\'s own, else "other"), type and the status class of the answer',
    labelNames: ['transport', 'type', 'operation', 'status_class'] as const,
    registers: [this.registry],
  });

  readonly graphqlDuration = new Histogram({
    name: 'tern_graphql_operation_duration_seconds',
    help: 'Duration of the HTTP request that ran a GraphQL operation, by transport, type and operation name',
    labelNames: ['transport', 'type', 'operation'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [this.registry],
  });

  readonly messageTransitions = new Counter({
    name: 'tern_message_transitions_total',
    help: 'Messages that moved to a status: sent (the carrier took it), delivered or failed',
    labelNames: ['status'] as const,
    registers: [this.registry],
  });

  readonly jobs = new Counter({
    name: 'tern_queue_jobs_processed_total',
    help: 'Queue jobs this process finished, by queue and outcome (completed, retried, failed)',
    labelNames: ['queue', 'outcome'] as const,
    registers: [this.registry],
  });

  readonly webhookAttempts = new Counter({
    name: 'tern_webhook_attempts_total',
    help: 'Webhook delivery attempts, by outcome: delivered (2xx), retrying, failed (the last attempt failed), refused (destination not allowed)',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });

  readonly webhookDuration = new Histogram({
    name: 'tern_webhook_attempt_duration_seconds',
    help: 'Duration of webhook delivery attempts, lookup to response status',
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [this.registry],
  });

  readonly fraudBlocked = new Counter({
    name: 'tern_fraud_blocked_total',
    help: 'Messages the fraud guard refused, by rule (flood_identical, flood_number, velocity_range, country_hourly, country_daily, country_blocked)',
    labelNames: ['rule'] as const,
    registers: [this.registry],
  });

  readonly fraudMonitored = new Counter({
    name: 'tern_fraud_monitored_total',
    help: 'Messages of accounts in monitor mode the fraud guard would have refused (they were sent), by rule',
    labelNames: ['rule'] as const,
    registers: [this.registry],
  });

  readonly fraudUnchecked = new Counter({
    name: 'tern_fraud_unchecked_total',
    help: 'Messages the fraud guard could not check because Redis was unavailable, by what it did (allowed, refused)',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });

  readonly rateLimitRefusals = new Counter({
    name: 'tern_rate_limit_refusals_total',
    help: 'Calls refused with 429, by limit (request: the per-caller budget; or the field: sendMessage, login) and caller kind (account, address)',
    labelNames: ['limit', 'caller'] as const,
    registers: [this.registry],
  });

  readonly quotaThresholds = new Counter({
    name: 'tern_quota_thresholds_total',
    help: 'Accounts that passed 80 % or 100 % of a segment quota, once per account, period and threshold',
    labelNames: ['period', 'threshold'] as const,
    registers: [this.registry],
  });

  readonly quotaRefusals = new Counter({
    name: 'tern_quota_refusals_total',
    help: 'Sends refused because they would pass a segment quota (429 quota_exceeded), and campaigns paused at one',
    labelNames: ['source'] as const,
    registers: [this.registry],
  });

  readonly retentionDeleted = new Counter({
    name: 'tern_retention_deleted_rows_total',
    help: 'Rows deleted by the retention sweep for being older than RETENTION_DAYS, by table',
    labelNames: ['table'] as const,
    registers: [this.registry],
  });

  constructor() {
    collectDefaultMetrics({ register: this.registry, prefix: 'tern_' });
    this.addBacklogSeries();
    this.addCarrierStateSeries();
    this.addCarrierTrafficSeries();
  }

  /** Series read at scrape time from what this process observes: queue depths, the oldest queued message. */
  private addBacklogSeries(): void {
    const sources = () => this.sources;
    new Gauge({
      name: 'tern_queue_jobs',
      help: 'Jobs in each queue by state (waiting, active, delayed, prioritized), read from Redis at scrape time',
      labelNames: ['queue', 'state'] as const,
      aggregator: 'max',
      registers: [this.registry],
      async collect() {
        const read = sources().queueDepths;
        if (!read) return;
        this.reset();
        for (const [queue, states] of Object.entries((await readOrSkip(read)) ?? {})) {
          for (const [state, count] of Object.entries(states)) this.set({ queue, state }, count);
        }
      },
    });

    new Gauge({
      name: 'tern_messages_oldest_queued_age_seconds',
      help: 'Age of the oldest message accepted and not yet handed to the carrier; 0 when none waits',
      aggregator: 'max',
      registers: [this.registry],
      async collect() {
        const read = sources().oldestQueuedMessage;
        if (!read) return;
        this.reset();
        const oldest = await readOrSkip(read);
        if (oldest !== undefined) this.set(oldest ? Math.max(0, (Date.now() - oldest.getTime()) / 1000) : 0);
      },
    });
  }

  /** The carrier's state, binds and circuit, read from it at scrape time. */
  private addCarrierStateSeries(): void {
    const sources = () => this.sources;
    new Gauge({
      name: 'tern_carrier_up',
      help: "1 for each of this process's carriers in its current state (simulator: ready; SMPP: bound, connecting, disconnected, bind_failed, stopped; standby: no bind held here; forwarding: none held here, messages handed to a process that holds one); summed over processes",
      labelNames: ['carrier', 'state'] as const,
      registers: [this.registry],
      collect() {
        const read = sources().carriers;
        if (!read) return;
        this.reset();
        for (const health of read()) this.set({ carrier: health.carrier, state: health.state }, 1);
      },
    });

    new Gauge({
      name: 'tern_carrier_binds_open',
      help: 'SMPP sessions this process holds open to the carrier; summed over processes, at most its binds',
      labelNames: ['carrier'] as const,
      registers: [this.registry],
      collect() {
        this.reset();
        for (const health of sources().carriers?.() ?? [])
          if (health.bindsOpen !== undefined) this.set({ carrier: health.carrier }, health.bindsOpen);
      },
    });

    new Gauge({
      name: 'tern_carrier_circuit_open',
      help: "1 while the carrier's circuit is open or half open in this process (it is skipped after repeated unavailability)",
      labelNames: ['carrier'] as const,
      registers: [this.registry],
      collect() {
        this.reset();
        for (const health of sources().carriers?.() ?? [])
          this.set({ carrier: health.carrier }, health.circuit && health.circuit !== 'closed' ? 1 : 0);
      },
    });
  }

  /** The carrier's window in use and error counts, read from it at scrape time. */
  private addCarrierTrafficSeries(): void {
    const sources = () => this.sources;
    new Gauge({
      name: 'tern_carrier_window_in_use',
      help: 'SMPP submit_sm awaiting their response (the window in use)',
      labelNames: ['carrier'] as const,
      registers: [this.registry],
      collect() {
        this.reset();
        for (const health of sources().carriers?.() ?? [])
          if (health.window) this.set({ carrier: health.carrier }, health.window.inUse);
      },
    });

    new Counter({
      name: 'tern_carrier_errors_total',
      help: "The carrier's error counts since the process started, by kind (SMPP: bind_failures, disconnects, response_timeouts, throttled, rejected, receipt_failures, inbound_failures)",
      labelNames: ['carrier', 'kind'] as const,
      registers: [this.registry],
      collect() {
        // The carriers keep the counts; the series shows them as they are now.
        this.reset();
        for (const health of sources().carriers?.() ?? [])
          for (const [kind, count] of Object.entries(errorCountsByKind(health.errors ?? {})))
            this.inc({ carrier: health.carrier, kind }, count);
      },
    });
  }

  /** Adds what the scrape should read in this process (a worker process's queues and carrier). */
  observe(sources: MetricSources): void {
    this.sources = { ...this.sources, ...sources };
  }
}
