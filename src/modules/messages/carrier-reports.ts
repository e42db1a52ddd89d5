import type { Logger } from 'pino';
import type { CarrierEventSink, DeliveryReport, InboundSms } from '../../carriers/carrier.js';
import { isUniqueViolation } from '../../db/prisma-errors.js';
import type { Prisma, PrismaClient } from '../../generated/prisma/client.js';
import { Batcher } from '../../lib/batcher.js';
import { newId } from '../../lib/ids.js';
import type { LivePublisher } from '../live/live-events.js';
import { type OptOuts, optOutKeyword } from '../opt-outs/opt-outs.js';
import { countReply } from '../stats/stats-rollups.js';
import { type MessageSubject, messageRepliedPayload, writeEvent } from '../webhooks/webhook-events.js';
import { type MessageStatusChanges, STATEMENT_BATCHING } from './message-status-changes.js';
import { ReplyRouting, senderAddress } from './reply-routing.js';

export class UnknownCarrierMessageError extends Error {}

interface ReportedMessage {
  carrier: string;
  carrierMessageId: string;
  reference: string | null;
}

export interface CarrierReportsOptions {
  prisma: PrismaClient;
  statusChanges: MessageStatusChanges;
  optOuts: OptOuts;
  live: LivePublisher;
  logger: Logger;
}

/** What carriers tell of the messages they took: delivery reports, and replies from the recipients. */
export class CarrierReports {
  private readonly reportedMessages = new Batcher(
    (reports: ReportedMessage[]) => this.findReported(reports),
    STATEMENT_BATCHING,
  );
  private readonly routing: ReplyRouting;
  private readonly prisma: PrismaClient;
  private readonly statusChanges: MessageStatusChanges;
  private readonly optOuts: OptOuts;
  private readonly live: LivePublisher;
  private readonly logger: Logger;

  constructor(options: CarrierReportsOptions) {
    ({
      prisma: this.prisma,
      statusChanges: this.statusChanges,
      optOuts: this.optOuts,
      live: this.live,
      logger: this.logger,
    } = options);
    const { prisma } = options;
    this.routing = new ReplyRouting(prisma);
  }

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
    const message = await this.reportedMessages.add({
      carrier,
      carrierMessageId: report.carrierMessageId,
      reference: report.reference ?? null,
    });
    if (!message)
      throw new UnknownCarrierMessageError(`no message for ${carrier} id ${report.carrierMessageId}`);
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
   * Stores a reply for the accounts it concerns (see ReplyRouting), each time linked to that
   * account's latest message to the number from the address replied to, with its own
   * `message.replied` event. A STOP or START goes to every one of those accounts and opts the
   * number out of (or back into) each; any other text goes to the one that wrote there last. It
   * is one transaction, and a carrier redelivering the same inbound message changes nothing.
   */
  async recordInbound(carrier: string, inbound: InboundSms): Promise<void> {
    // Checked before routing too: by a redelivery, others may have written from the address.
    const stored = await this.prisma.inboundMessage.findFirst({
      where: { carrier, carrierMessageId: inbound.carrierMessageId },
      select: { id: true },
    });
    if (stored) return;
    const answered = inbound.inReplyTo ? await this.routing.addressOf(inbound.inReplyTo) : null;
    const address = answered ?? senderAddress(inbound.to);
    const recipients = await this.routing.recipients(inbound.from, address);
    if (recipients.length === 0) {
      this.logger.warn(
        { carrier, from: inbound.from, to: address },
        'inbound message from a number no account has written to from that address; dropped',
      );
      return;
    }
    const concerned = optOutKeyword(inbound.text) ? recipients : recipients.slice(0, 1);
    // One order for every delivery of the same reply, so that two of them at once wait rather than deadlock.
    concerned.sort((a, b) => (a.accountId < b.accountId ? -1 : 1));
    try {
      await this.prisma.$transaction(async (tx) => {
        for (const { accountId, latest } of concerned)
          await this.storeReply(tx, carrier, inbound, accountId, latest);
      });
    } catch (error) {
      if (isUniqueViolation(error)) return;
      throw error;
    }
    this.live.messages(
      concerned.map(({ accountId, latest: { id, to, campaignId } }) => ({
        accountId,
        id,
        to,
        campaignId,
        status: null,
      })),
    );
  }

  private async storeReply(
    tx: Prisma.TransactionClient,
    carrier: string,
    inbound: InboundSms,
    accountId: string,
    latest: MessageSubject,
  ): Promise<void> {
    const id = newId('inb');
    await tx.inboundMessage.create({
      data: {
        id,
        accountId,
        messageId: latest.id,
        from: inbound.from,
        to: inbound.to,
        text: inbound.text,
        carrier,
        carrierMessageId: inbound.carrierMessageId,
        receivedAt: inbound.at,
      },
    });
    const optedOut = await this.optOuts.applyReply(tx, accountId, inbound.from, inbound.text, inbound.at);
    await countReply(tx, { messageId: latest.id, at: inbound.at, optedOut });
    await writeEvent(tx, {
      type: 'message.replied',
      payload: messageRepliedPayload(latest, {
        id,
        from: inbound.from,
        text: inbound.text,
        receivedAt: inbound.at,
      }),
      accountId,
      campaignId: latest.campaignId,
      messageId: latest.id,
      at: inbound.at,
    });
  }

  /** The message each report is about: the one its reference names, else the one with the carrier's id. */
  private async findReported(reports: ReportedMessage[]): Promise<(MessageSubject | null)[]> {
    const rows = await this.prisma.$queryRaw<
      { ord: bigint; id: string; to: string; campaign_id: string | null }[]
    >`
      SELECT r.ord, m.id, m."to", m.campaign_id
      FROM unnest(${reports.map((r) => r.carrier)}::text[], ${reports.map((r) => r.carrierMessageId)}::text[], ${reports.map((r) => r.reference)}::text[])
        WITH ORDINALITY AS r(carrier, carrier_message_id, reference, ord)
      CROSS JOIN LATERAL (
        (SELECT m.id, m."to", m.campaign_id FROM messages m WHERE m.id = r.reference)
        UNION ALL
        (SELECT m.id, m."to", m.campaign_id FROM messages m WHERE m.carrier = r.carrier AND m.carrier_message_id = r.carrier_message_id)
        LIMIT 1) m`;
    const found = new Map(
      rows.map((row) => [Number(row.ord), { id: row.id, to: row.to, campaignId: row.campaign_id }]),
    );
    return reports.map((_, index) => found.get(index + 1) ?? null);
  }
}
