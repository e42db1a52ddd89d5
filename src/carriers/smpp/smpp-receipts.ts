import type { Logger } from 'pino';
import type { PDU } from 'smpp';
import type { PrismaClient } from '../../generated/prisma/client.js';
import { PollingLoop } from '../../jobs/polling-loop.js';
import { Batcher } from '../../lib/batcher.js';
import type { Clock } from '../../lib/clock.js';
import type { CarrierEventSink } from '../carrier.js';
import { decodedText, parseReceipt } from './smpp-receipt.js';
import type { SmppErrorCounts } from './smpp-status.js';

const RECEIPT_BATCH = 500;
const REPORT_CONCURRENCY = 16;

interface StoredReceipt {
  carrier: string;
  smscMessageId: string;
  delivered: boolean;
  errorCode: string | null;
  errorMessage: string | null;
  receivedAt: Date;
}

interface DueReceipt {
  smsc_message_id: string;
  reference: string;
}

interface Settlement {
  reference: string;
  parts: number;
  delivered: bigint;
  failed: bigint;
  error_code: string | null;
  error_message: string | null;
  first_id: string | null;
}

/**
 * Delivery receipts, kept in PostgreSQL from the moment they arrive: each is stored before the
 * SMSC hears deliver_sm_resp, even one that overtook its submit_sm_resp, and a loop applies
 * them to the parts they name and reports the messages that are settled.
 */
export class SmppReceipts {
  private readonly loop: PollingLoop;
  private sink: CarrierEventSink | null = null;
  private readonly stored = new Batcher((receipts: StoredReceipt[]) => this.storeMany(receipts), {
    maxBatch: RECEIPT_BATCH,
    maxInFlight: 2,
  });
  /** SMSC ids are unique per carrier: this carrier's receipts only are stored and applied here. */
  private readonly carrier: string;

  constructor(
    private readonly prisma: PrismaClient,
    private readonly clock: Clock,
    private readonly logger: Logger,
    private readonly errors: SmppErrorCounts,
    options: { pollMs: number; carrier: string },
  ) {
    const { pollMs } = options;
    this.carrier = options.carrier;
    this.loop = new PollingLoop({
      step: () => this.applyReceipts(),
      batch: RECEIPT_BATCH,
      pollMs,
      logger,
      failure: 'SMPP receipts could not be applied',
    });
  }

  start(sink: CarrierEventSink): void {
    this.sink = sink;
    this.loop.start();
  }

  stop(): Promise<void> {
    return this.loop.stop();
  }

  /** A part was acknowledged: a receipt for its id may already be waiting. */
  wake(): void {
    this.loop.wake();
  }

  async store(pdu: PDU): Promise<void> {
    const receipt = parseReceipt(pdu);
    if (!receipt) {
      this.errors.receiptFailures += 1;
      this.logger.warn(
        { text: decodedText(pdu.short_message) },
        'unreadable delivery receipt; acknowledged and ignored',
      );
      return;
    }
    if (!receipt.outcome) return;
    const failure = receipt.outcome.delivered ? null : receipt.outcome;
    await this.stored.add({
      carrier: this.carrier,
      smscMessageId: receipt.smscMessageId,
      delivered: receipt.outcome.delivered,
      errorCode: failure?.code ?? null,
      errorMessage: failure?.message ?? null,
      receivedAt: this.clock.now(),
    });
    this.loop.wake();
  }

  /** The receipts that arrived while the last statement ran are written together, before any is acknowledged. */
  private async storeMany(receipts: StoredReceipt[]): Promise<undefined[]> {
    await this.prisma.smppReceipt.createMany({ data: receipts, skipDuplicates: true });
    return receipts.map(() => undefined);
  }

  /**
   * Moves the parts named by stored receipts to their outcome and reports the messages that
   * are settled: failed as soon as one part failed (the handset cannot show it whole),
   * delivered once every part was. Receipts whose SMSC id no part has yet stay for a later round.
   */
  private async applyReceipts(): Promise<number> {
    const sink = this.sink;
    if (!sink) return 0;
    const due = await this.prisma.$queryRaw<DueReceipt[]>`
      SELECT r.smsc_message_id, p.reference
      FROM smpp_receipts r JOIN smpp_parts p ON p.carrier = r.carrier AND p.smsc_message_id = r.smsc_message_id
      WHERE r.applied_at IS NULL AND r.carrier = ${this.carrier}
      ORDER BY r.received_at
      LIMIT ${RECEIPT_BATCH}`;
    if (due.length === 0) return 0;
    const ids = due.map((row) => row.smsc_message_id);
    await this.prisma.$executeRaw`
      UPDATE smpp_parts p
      SET state = CASE WHEN r.delivered THEN 'delivered' ELSE 'failed' END, error_code = r.error_code, error_message = r.error_message
      FROM smpp_receipts r
      WHERE r.carrier = ${this.carrier} AND p.carrier = r.carrier AND r.smsc_message_id = p.smsc_message_id
        AND r.smsc_message_id = ANY(${ids}) AND p.state = 'pending'`;
    const references = [...new Set(due.map((row) => row.reference))];
    const settlements = await this.prisma.$queryRaw<Settlement[]>`
      SELECT reference, min(parts) AS parts,
        count(*) FILTER (WHERE state = 'delivered') AS delivered,
        count(*) FILTER (WHERE state = 'failed') AS failed,
        (array_agg(error_code ORDER BY part) FILTER (WHERE state = 'failed'))[1] AS error_code,
        (array_agg(error_message ORDER BY part) FILTER (WHERE state = 'failed'))[1] AS error_message,
        (array_agg(smsc_message_id ORDER BY part))[1] AS first_id
      FROM smpp_parts WHERE reference = ANY(${references})
      GROUP BY reference`;
    const finished = new Set(references);
    for (let start = 0; start < settlements.length; start += REPORT_CONCURRENCY) {
      const chunk = settlements.slice(start, start + REPORT_CONCURRENCY);
      const results = await Promise.allSettled(chunk.map((settlement) => this.report(sink, settlement)));
      results.forEach((result, index) => {
        if (result.status === 'fulfilled') return;
        finished.delete(chunk[index]!.reference);
        this.logger.warn(
          { err: result.reason, reference: chunk[index]!.reference },
          'delivery report not applied; will retry',
        );
      });
    }
    const applied = due.filter((row) => finished.has(row.reference)).map((row) => row.smsc_message_id);
    if (applied.length > 0) {
      await this.prisma.smppReceipt.updateMany({
        where: { carrier: this.carrier, smscMessageId: { in: applied } },
        data: { appliedAt: this.clock.now() },
      });
    }
    return applied.length;
  }

  private async report(sink: CarrierEventSink, settlement: Settlement): Promise<void> {
    const base = {
      carrierMessageId: settlement.first_id ?? settlement.reference,
      reference: settlement.reference,
      at: this.clock.now(),
    };
    if (settlement.failed > 0n) {
      await sink.deliveryReport({
        ...base,
        status: 'failed',
        error: {
          code: settlement.error_code ?? 'carrier_error',
          message: settlement.error_message ?? 'The SMSC reported a failure',
        },
      });
    } else if (Number(settlement.delivered) === settlement.parts) {
      await sink.deliveryReport({ ...base, status: 'delivered' });
    }
  }
}
