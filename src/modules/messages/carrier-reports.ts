import type { Logger } from 'pino';
import { Batcher } from '../../batcher.js';
import type { CarrierEventSink, DeliveryReport, InboundSms } from '../../carriers/carrier.js';
import { isUniqueViolation } from '../../db/prisma-errors.js';
import type { PrismaClient } from '../../generated/prisma/client.js';
import { newId } from '../../ids.js';
import type { OptOutService } from '../opt-outs/opt-outs.service.js';
import { messageRepliedPayload, writeEvent, type MessageSubject } from '../webhooks/webhook-events.js';
import { STATEMENT_BATCHING, type MessageStatusChanges } from './message-status-changes.js';

export class UnknownCarrierMessageError extends Error {}

interface ReportedMessage {
  carrier: string;
  carrierMessageId: string;
  reference: string | null;
}

/** What carriers tell of the messages they took: delivery reports, and replies from the recipients. */
export class CarrierReports {
  private readonly reportedMessages = new Batcher((reports: ReportedMessage[]) => this.findReported(reports), STATEMENT_BATCHING);

  constructor(
    private readonly prisma: PrismaClient,
    private readonly statusChanges: MessageStatusChanges,
    private readonly optOuts: OptOutService,
    private readonly logger: Logger,
  ) {}

  /** Where the named carrier hands what it receives. */
  sinkFor(carrier: string): CarrierEventSink {
    return {
      deliveryReport: (report) => this.applyDeliveryReport(carrier, report),
      inbound: (message) => this.recordInbound(carrier, message),
    };
  }

  /**
   * Applies a carrier's delivery report. Statuses only move forward, so a late or repeated
   * report changes nothing; a report for a message the carrier has not acknowledged yet raises
   * UnknownCarrierMessageError, for the carrier to retry it. Concurrent reports share statements.
   */
  async applyDeliveryReport(carrier: string, report: DeliveryReport): Promise<void> {
    const message = await this.reportedMessages.add({ carrier, carrierMessageId: report.carrierMessageId, reference: report.reference ?? null });
    if (!message) throw new UnknownCarrierMessageError(`no message for ${carrier} id ${report.carrierMessageId}`);
    // A report can overtake the record of the submit (or the worker that would record it died):
    // the carrier's id then comes from the report.
    const identity = { carrier, carrierMessageId: report.carrierMessageId };
    if (report.status === 'delivered') {
      await this.statusChanges.apply({ message, status: 'delivered', at: report.at, ...identity });
      return;
    }
    const error = report.error ?? { code: 'carrier_error', message: 'The carrier reported a failure' };
    await this.statusChanges.apply({ message, status: 'failed', at: report.at, error, ...identity });
  }

  /**
   * Stores a reply, linked to the latest message the same account sent to that number, with
   * its `message.replied` event; a STOP or START reply also opts the number out of (or back into)
   * that account's messages. A carrier redelivering the same inbound message changes nothing.
   */
  async recordInbound(carrier: string, inbound: InboundSms): Promise<void> {
    const replied = inbound.inReplyTo
      ? await this.prisma.message.findUnique({ where: { id: inbound.inReplyTo }, select: { accountId: true } })
      : await this.prisma.message.findFirst({ where: { to: inbound.from }, orderBy: { createdAt: 'desc' }, select: { accountId: true } });
    if (!replied) {
      this.logger.warn({ carrier, from: inbound.from }, 'inbound message from a number no account has written to; dropped');
      return;
    }
    const accountId = replied.accountId;
    const latest = await this.prisma.message.findFirst({
      where: { accountId, to: inbound.from },
      orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
      select: { id: true, to: true, campaignId: true },
    });
    const id = newId('inb');
    try {
      await this.prisma.$transaction(async (tx) => {
        await tx.inboundMessage.create({
          data: {
            id,
            accountId,
            messageId: latest?.id ?? null,
            from: inbound.from,
            to: inbound.to,
            text: inbound.text,
            carrier,
            carrierMessageId: inbound.carrierMessageId,
            receivedAt: inbound.at,
          },
        });
        await this.optOuts.applyReply(tx, accountId, inbound.from, inbound.text, inbound.at);
        if (!latest) return;
        await writeEvent(tx, {
          type: 'message.replied',
          payload: messageRepliedPayload(latest, { id, from: inbound.from, text: inbound.text, receivedAt: inbound.at }),
          accountId,
          campaignId: latest.campaignId,
          messageId: latest.id,
          at: inbound.at,
        });
      });
    } catch (error) {
      if (isUniqueViolation(error)) return;
      throw error;
    }
  }

  /** The message each report is about: the one its reference names, else the one with the carrier's id. */
  private async findReported(reports: ReportedMessage[]): Promise<(MessageSubject | null)[]> {
    const rows = await this.prisma.$queryRaw<{ ord: bigint; id: string; to: string; campaign_id: string | null }[]>`
      SELECT r.ord, m.id, m."to", m.campaign_id
      FROM unnest(${reports.map((r) => r.carrier)}::text[], ${reports.map((r) => r.carrierMessageId)}::text[], ${reports.map((r) => r.reference)}::text[])
        WITH ORDINALITY AS r(carrier, carrier_message_id, reference, ord)
      CROSS JOIN LATERAL (
        (SELECT m.id, m."to", m.campaign_id FROM messages m WHERE m.id = r.reference)
        UNION ALL
        (SELECT m.id, m."to", m.campaign_id FROM messages m WHERE m.carrier = r.carrier AND m.carrier_message_id = r.carrier_message_id)
        LIMIT 1) m`;
    const found = new Map(rows.map((row) => [Number(row.ord), { id: row.id, to: row.to, campaignId: row.campaign_id }]));
    return reports.map((_, index) => found.get(index + 1) ?? null);
  }
}
