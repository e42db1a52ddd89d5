import { createHash, randomUUID } from 'node:crypto';
import type { PDU } from 'smpp';
import type { PrismaClient } from '../../generated/prisma/client.js';
import type { Clock } from '../../lib/clock.js';
import type { CarrierEventSink } from '../carrier.js';
import { inboundNumber } from './smpp-address.js';
import { decodedText, udhElements } from './smpp-receipt.js';
import { type Concatenation, readConcatenation } from './smpp-segments.js';
import type { SmppErrorCounts } from './smpp-status.js';

/**
 * Mobile replies: a single deliver_sm goes to the messages domain as it is; the parts of a
 * concatenated reply are kept in PostgreSQL until the last one arrives, then go as one text.
 */
export class SmppInbound {
  constructor(
    private readonly prisma: PrismaClient,
    private readonly clock: Clock,
    private readonly errors: SmppErrorCounts,
  ) {}

  async store(pdu: PDU, sink: CarrierEventSink): Promise<void> {
    const source = pdu.source_addr ?? '';
    const destination = pdu.destination_addr ?? '';
    let text = decodedText(pdu.short_message) || decodedText(pdu.message_payload);
    // deliver_sm carries no id of its own for a mobile-originated message.
    let carrierMessageId = `mo_${randomUUID()}`;
    const concatenation = readConcatenation([
      ...udhElements(pdu.short_message),
      ...udhElements(pdu.message_payload),
    ]);
    if (concatenation && concatenation.parts > 1) {
      const whole = await this.collectPart(source, destination, concatenation, text);
      if (!whole) return;
      ({ text, carrierMessageId } = whole);
    }
    try {
      await sink.inbound({
        carrierMessageId,
        from: inboundNumber(source),
        to: destination || null,
        text,
        at: this.clock.now(),
      });
    } catch (error) {
      this.errors.inboundFailures += 1;
      throw error;
    }
    if (concatenation && concatenation.parts > 1) {
      await this.prisma.smppInboundPart.deleteMany({
        where: {
          sourceAddr: source,
          destinationAddr: destination,
          concatRef: concatenation.reference,
          parts: concatenation.parts,
        },
      });
    }
  }

  /**
   * Keeps one part of a concatenated reply; once every part is here, the whole text, with an id
   * derived from the parts, so that two deliveries completing it at once store one reply.
   */
  private async collectPart(source: string, destination: string, concatenation: Concatenation, text: string) {
    const group = {
      sourceAddr: source,
      destinationAddr: destination,
      concatRef: concatenation.reference,
      parts: concatenation.parts,
    };
    await this.prisma.smppInboundPart.createMany({
      data: [{ ...group, part: concatenation.part, text, receivedAt: this.clock.now() }],
      skipDuplicates: true,
    });
    const rows = await this.prisma.smppInboundPart.findMany({ where: group, orderBy: { part: 'asc' } });
    if (rows.length < concatenation.parts) return null;
    const first = Math.min(...rows.map((row) => row.receivedAt.getTime()));
    const key = [source, destination, concatenation.reference, concatenation.parts, first].join('|');
    return {
      text: rows.map((row) => row.text).join(''),
      carrierMessageId: `mo_${createHash('sha256').update(key).digest('hex').slice(0, 32)}`,
    };
  }
}
