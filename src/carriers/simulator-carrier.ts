import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { PrismaClient } from '../generated/prisma/client.js';
import { PollingLoop } from '../jobs/polling-loop.js';
import { Batcher } from '../lib/batcher.js';
import type { Clock } from '../lib/clock.js';
import type { Carrier, CarrierEventSink, CarrierHealth, OutboundSms, SubmitResult } from './carrier.js';

export interface SimulatorOptions {
  /** The carrier's name; `simulator` when not given. */
  name?: string;
  /** How long after a submit the delivery report comes. */
  delayMs: number;
  /** How long the simulated carrier takes to acknowledge a submit. */
  submitLatencyMs: number;
  pollMs: number;
}

interface DueSubmission {
  reference: string;
  carrier_message_id: string;
  to: string;
}

const BATCH = 500;
// Reports go to the sink side by side; the messages domain applies them in batches.
const REPORT_CONCURRENCY = 100;
// A report batch taken by a worker that then dies is taken again after this long.
const LOCK_MS = 30_000;
export const SIMULATED_REPLY = 'Thanks, got it';
/** The simulator's test numbers: a number ending in the first fails, one ending in the second replies. */
export const SIMULATED_FAILURE_ENDING = '0001';
export const SIMULATED_REPLY_ENDING = '0002';

/**
 * The default carrier, a simulated network: every message is delivered `delayMs` after it
 * is sent, except that numbers ending 0001 fail (unreachable) and numbers ending 0002 are
 * delivered and then reply. It runs inside the worker and reports through the same sink a real
 * carrier does; its state is a table, so reports survive crashes of the worker and of Redis.
 */
export class SimulatorCarrier implements Carrier {
  readonly name: string;
  readonly deduplicatesByReference = true;
  private sink: CarrierEventSink | null = null;
  private readonly loop: PollingLoop;
  // Concurrent submits share one INSERT, as the messages domain's statements do.
  private readonly submissions = new Batcher((messages: OutboundSms[]) => this.submit(messages), {
    maxBatch: 100,
    maxInFlight: 2,
  });

  constructor(
    private readonly prisma: PrismaClient,
    private readonly clock: Clock,
    private readonly logger: Logger,
    private readonly options: SimulatorOptions,
  ) {
    this.name = options.name ?? 'simulator';
    this.loop = new PollingLoop({
      step: async () => {
        const due = await this.takeDue();
        await this.report(due);
        return due.length;
      },
      batch: BATCH,
      pollMs: options.pollMs,
      logger,
      failure: 'simulator could not report',
    });
  }

  async start(sink: CarrierEventSink): Promise<void> {
    this.sink = sink;
    this.loop.start();
  }

  stop(): Promise<void> {
    return this.loop.stop();
  }

  health(): CarrierHealth {
    return { carrier: this.name, state: 'ready' };
  }

  async send(message: OutboundSms): Promise<SubmitResult> {
    const carrierMessageId = await this.submissions.add(message);
    if (this.options.submitLatencyMs > 0) await sleep(this.options.submitLatencyMs);
    this.loop.wake();
    return { carrierMessageId };
  }

  private async submit(messages: OutboundSms[]): Promise<string[]> {
    const now = this.clock.now();
    const reportAt = new Date(now.getTime() + this.options.delayMs);
    // The same reference twice is the same submission: the first one's id comes back.
    const rows = await this.prisma.$queryRaw<{ reference: string; carrier_message_id: string }[]>`
      INSERT INTO simulated_submissions (reference, carrier, carrier_message_id, "to", text, submitted_at, report_at)
      SELECT DISTINCT ON (reference) reference, ${this.name}, carrier_message_id, "to", text, ${now}::timestamptz, ${reportAt}::timestamptz
      FROM unnest(${messages.map((m) => m.reference)}::text[], ${messages.map(() => `sim_${randomUUID()}`)}::text[],
        ${messages.map((m) => m.to)}::text[], ${messages.map((m) => m.text)}::text[]) AS s(reference, carrier_message_id, "to", text)
      ORDER BY reference
      ON CONFLICT (reference) DO UPDATE SET reference = EXCLUDED.reference
      RETURNING reference, carrier_message_id`;
    const ids = new Map(rows.map((row) => [row.reference, row.carrier_message_id]));
    return messages.map((m) => ids.get(m.reference)!);
  }

  /** How many distinct submissions the simulated network has taken for a reference (0 or 1). */
  async transmissions(reference: string): Promise<number> {
    return this.prisma.simulatedSubmission.count({ where: { reference } });
  }

  private async takeDue(): Promise<DueSubmission[]> {
    const now = this.clock.now();
    return this.prisma.$queryRaw<DueSubmission[]>`
      UPDATE simulated_submissions SET locked_until = ${new Date(now.getTime() + LOCK_MS)}
      WHERE reference IN (
        SELECT reference FROM simulated_submissions
        WHERE report_at <= ${now} AND reported_at IS NULL AND (locked_until IS NULL OR locked_until < ${now})
          AND carrier = ${this.name}
        ORDER BY report_at
        LIMIT ${BATCH}
        FOR UPDATE SKIP LOCKED)
      RETURNING reference, carrier_message_id, "to"`;
  }

  private async report(due: DueSubmission[]): Promise<void> {
    const sink = this.sink;
    if (!sink || due.length === 0) return;
    const reported: string[] = [];
    for (let start = 0; start < due.length; start += REPORT_CONCURRENCY) {
      const chunk = due.slice(start, start + REPORT_CONCURRENCY);
      const results = await Promise.allSettled(chunk.map((submission) => this.reportOne(sink, submission)));
      results.forEach((result, index) => {
        if (result.status === 'fulfilled') reported.push(chunk[index]!.reference);
        else
          this.logger.warn(
            { err: result.reason, reference: chunk[index]!.reference },
            'simulator report failed; will retry',
          );
      });
    }
    if (reported.length > 0) {
      await this.prisma.simulatedSubmission.updateMany({
        where: { reference: { in: reported } },
        data: { reportedAt: this.clock.now() },
      });
    }
  }

  private async reportOne(sink: CarrierEventSink, submission: DueSubmission): Promise<void> {
    const at = this.clock.now();
    const base = { carrierMessageId: submission.carrier_message_id, reference: submission.reference, at };
    if (submission.to.endsWith(SIMULATED_FAILURE_ENDING)) {
      await sink.deliveryReport({
        ...base,
        status: 'failed',
        error: { code: 'unreachable', message: 'The destination is unreachable' },
      });
      return;
    }
    await sink.deliveryReport({ ...base, status: 'delivered' });
    if (submission.to.endsWith(SIMULATED_REPLY_ENDING)) {
      await sink.inbound({
        carrierMessageId: `${submission.carrier_message_id}_reply`,
        from: submission.to,
        to: null,
        text: SIMULATED_REPLY,
        at,
        inReplyTo: submission.reference,
      });
    }
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
