import type { Prisma, PrismaClient } from '../../generated/prisma/client.js';
import { Batcher } from '../../lib/batcher.js';
import type { Clock } from '../../lib/clock.js';
import type { CarrierEventSink, DeliveryReport, InboundSms } from '../carrier.js';
import type { ProviderEvent } from './http-provider.js';

const APPLY_BATCH = 200;
// How long an event that names no message yet is tried again: a send's answer is recorded within
// seconds, or within a claim lease when its worker died. Older ones wait for the retention sweep.
const RETRIED_FOR_MS = 60 * 60 * 1000;

type Key = { kind: string; carrierMessageId: string };

function keyOf(event: ProviderEvent): Key {
  return event.kind === 'reply'
    ? { kind: 'reply', carrierMessageId: event.reply.carrierMessageId }
    : { kind: event.report.status, carrierMessageId: event.report.carrierMessageId };
}

/** The event as stored: dates as ISO strings, nothing the provider did not give. */
function stored(event: ProviderEvent): Prisma.InputJsonObject {
  if (event.kind === 'reply') return { ...event.reply, at: event.reply.at.toISOString() };
  return { ...event.report, at: event.report.at.toISOString() };
}

function revived(kind: string, event: Prisma.JsonValue): ProviderEvent {
  const fields = event as Record<string, unknown>;
  const at = new Date(String(fields.at));
  if (kind === 'reply') return { kind: 'reply', reply: { ...(fields as unknown as InboundSms), at } };
  return { kind: 'report', report: { ...(fields as unknown as DeliveryReport), at } };
}

/** Concurrent callbacks share their statements: as many as arrive while these many are running. */
const STATEMENT_BATCHING = { maxBatch: 100, maxInFlight: 2 };

type CarrierKey = Key & { carrier: string };

interface Received {
  carrier: string;
  event: ProviderEvent;
  receivedAt: Date;
}

/**
 * The reports and replies HTTP providers called back with. A report is applied at once when its
 * message is known: statuses only move forward, so a repeat changes nothing and needs no record,
 * and the status change is as durable as a row here would be. A report the domain cannot apply
 * yet (it overtook the send's answer and names no message Tern knows) is kept in PostgreSQL
 * (carrier_callback_events) for the carrier's loop. A reply is kept before it is applied: its row,
 * stored once however often the provider repeats it, is what makes a repeat change nothing.
 */
export class CallbackEvents {
  private readonly storing = new Batcher((items: Received[]) => this.storeNew(items), STATEMENT_BATCHING);
  private readonly marking = new Batcher((keys: CarrierKey[]) => this.markApplied(keys), STATEMENT_BATCHING);

  constructor(
    private readonly prisma: PrismaClient,
    private readonly clock: Clock,
  ) {}

  /** Applies or keeps a verified call's events, in their order; returns once each is one or the other. */
  async receive(carrier: string, sink: CarrierEventSink, events: ProviderEvent[]): Promise<void> {
    const receivedAt = this.clock.now();
    for (const event of events) {
      if (event.kind === 'report') {
        if (!(await this.applyOne(sink, event))) await this.storing.add({ carrier, event, receivedAt });
      } else if (
        (await this.storing.add({ carrier, event, receivedAt })) &&
        (await this.applyOne(sink, event))
      )
        await this.marking.add({ carrier, ...keyOf(event) });
    }
  }

  /** The carrier's stored events not yet applied, the latest of the last hour first; how many it applied. */
  async applyPending(carrier: string, sink: CarrierEventSink): Promise<number> {
    const due = await this.prisma.carrierCallbackEvent.findMany({
      where: {
        carrier,
        appliedAt: null,
        receivedAt: { gte: new Date(this.clock.now().getTime() - RETRIED_FOR_MS) },
      },
      orderBy: { receivedAt: 'desc' },
      take: APPLY_BATCH,
      select: { kind: true, carrierMessageId: true, event: true },
    });
    const applied: CarrierKey[] = [];
    for (const row of due) {
      if (await this.applyOne(sink, revived(row.kind, row.event)))
        applied.push({ carrier, kind: row.kind, carrierMessageId: row.carrierMessageId });
    }
    if (applied.length > 0) await this.markApplied(applied);
    return applied.length;
  }

  /**
   * One INSERT for the events of concurrent calls; for each, whether it was stored now (the first
   * of the same key in the batch, and none stored before). Raw SQL over arrays: one statement
   * whatever the batch's size, where Prisma would plan each size anew.
   */
  private async storeNew(items: Received[]): Promise<boolean[]> {
    const keys = items.map((item) => ({ carrier: item.carrier, ...keyOf(item.event) }));
    const inserted = await this.prisma.$queryRaw<
      { carrier: string; kind: string; carrier_message_id: string }[]
    >`
      INSERT INTO carrier_callback_events (carrier, kind, carrier_message_id, reference, event, received_at)
      SELECT * FROM unnest(
        ${keys.map((key) => key.carrier)}::text[], ${keys.map((key) => key.kind)}::text[],
        ${keys.map((key) => key.carrierMessageId)}::text[],
        ${items.map(({ event }) => (event.kind === 'report' ? (event.report.reference ?? null) : null))}::text[],
        ${items.map(({ event }) => JSON.stringify(stored(event)))}::jsonb[],
        ${items.map((item) => item.receivedAt)}::timestamptz[])
      ON CONFLICT DO NOTHING
      RETURNING carrier, kind, carrier_message_id`;
    const fresh = new Set(
      inserted.map((row) =>
        keyText({ carrier: row.carrier, kind: row.kind, carrierMessageId: row.carrier_message_id }),
      ),
    );
    return keys.map((key) => fresh.delete(keyText(key)));
  }

  private async markApplied(keys: CarrierKey[]): Promise<undefined[]> {
    await this.prisma.$executeRaw`
      UPDATE carrier_callback_events e SET applied_at = ${this.clock.now()}
      FROM unnest(${keys.map((key) => key.carrier)}::text[], ${keys.map((key) => key.kind)}::text[],
                  ${keys.map((key) => key.carrierMessageId)}::text[]) AS k(carrier, kind, carrier_message_id)
      WHERE e.carrier = k.carrier AND e.kind = k.kind AND e.carrier_message_id = k.carrier_message_id`;
    return keys.map(() => undefined);
  }

  /** False when the domain could not apply it now (no such message yet, a passing error): it is tried again. */
  private async applyOne(sink: CarrierEventSink, event: ProviderEvent): Promise<boolean> {
    try {
      if (event.kind === 'reply') await sink.inbound(event.reply);
      else await sink.deliveryReport(event.report);
      return true;
    } catch {
      return false;
    }
  }
}

function keyText(key: CarrierKey): string {
  return JSON.stringify([key.carrier, key.kind, key.carrierMessageId]);
}
