import type { Prisma, PrismaClient } from '../../generated/prisma/client.js';
import type { Clock } from '../../lib/clock.js';
import type { CarrierEventSink, DeliveryReport, InboundSms } from '../carrier.js';
import type { ProviderEvent } from './http-provider.js';

const APPLY_BATCH = 200;
// How long an event that names no message yet is tried again: a send's answer is recorded within
// seconds, or within a claim lease when its worker died. Older ones wait for the retention sweep.
const RETRIED_FOR_MS = 60 * 60 * 1000;

interface StoredEvent {
  kind: string;
  event: Prisma.JsonValue;
}

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

/**
 * The reports and replies HTTP providers called back with, in PostgreSQL (carrier_callback_events)
 * from the moment they are verified: stored once however often the provider repeats them, then
 * applied through the messages domain. One the domain cannot apply yet (a report that overtook
 * the send's answer and names no message Tern knows) stays unapplied for the carrier's loop.
 */
export class CallbackEvents {
  constructor(
    private readonly prisma: PrismaClient,
    private readonly clock: Clock,
  ) {}

  async store(carrier: string, events: ProviderEvent[]): Promise<void> {
    if (events.length === 0) return;
    const receivedAt = this.clock.now();
    await this.prisma.carrierCallbackEvent.createMany({
      data: events.map((event) => ({
        carrier,
        ...keyOf(event),
        reference: event.kind === 'report' ? (event.report.reference ?? null) : null,
        event: stored(event),
        receivedAt,
      })),
      skipDuplicates: true,
    });
  }

  /**
   * Applies the carrier's stored events not yet applied: `events`' own when given, else the latest
   * of the last hour. Answers how many it applied.
   */
  async apply(carrier: string, sink: CarrierEventSink, events?: ProviderEvent[]): Promise<number> {
    const keys = events?.map(keyOf);
    const due = await this.prisma.carrierCallbackEvent.findMany({
      where: {
        carrier,
        appliedAt: null,
        ...(keys
          ? { OR: keys.map((key) => ({ kind: key.kind, carrierMessageId: key.carrierMessageId })) }
          : { receivedAt: { gte: new Date(this.clock.now().getTime() - RETRIED_FOR_MS) } }),
      },
      orderBy: { receivedAt: 'desc' },
      take: APPLY_BATCH,
      select: { kind: true, carrierMessageId: true, event: true },
    });
    const applied: Key[] = [];
    for (const row of due) {
      if (await this.applyOne(sink, row))
        applied.push({ kind: row.kind, carrierMessageId: row.carrierMessageId });
    }
    if (applied.length > 0)
      await this.prisma.carrierCallbackEvent.updateMany({
        where: { carrier, OR: applied },
        data: { appliedAt: this.clock.now() },
      });
    return applied.length;
  }

  /** False when the domain could not apply it now (no such message yet, a passing error): it is tried again. */
  private async applyOne(sink: CarrierEventSink, row: StoredEvent): Promise<boolean> {
    const event = revived(row.kind, row.event);
    try {
      if (event.kind === 'reply') await sink.inbound(event.reply);
      else await sink.deliveryReport(event.report);
      return true;
    } catch {
      return false;
    }
  }
}
