import { randomInt } from 'node:crypto';
import type { Logger } from 'pino';
import type { PDU, PduFields } from 'smpp';
import type { SmppConfig } from '../../config.js';
import type { PrismaClient } from '../../generated/prisma/client.js';
import type { Clock } from '../../lib/clock.js';
import {
  type Carrier,
  type CarrierEventSink,
  type CarrierHealth,
  CarrierUnavailableError,
  type OutboundSms,
  type SubmitResult,
} from '../carrier.js';
import { destinationAddress, sourceAddress } from './smpp-address.js';
import { SmppInbound } from './smpp-inbound.js';
import { SmppParts } from './smpp-parts.js';
import { isDeliveryReceipt } from './smpp-receipt.js';
import { SmppReceipts } from './smpp-receipts.js';
import { type SubmitBody, submitBodies } from './smpp-segments.js';
import { type BindState, SmppSession } from './smpp-session.js';
import { noSmppErrors } from './smpp-status.js';
import { SmppSubmitter } from './smpp-submitter.js';
import { relativeValidityPeriod } from './smpp-validity.js';

export interface SmppCarrierOptions extends SmppConfig {
  /** The carrier's name, as messages, receipts and /health show it; `smpp` when not given. */
  name?: string;
  /** submit_sm per second at most, the carrier's pace (CARRIER_MAX_PER_SECOND); null for none. */
  maxPerSecond: number | null;
  /** How often receipts waiting for their submit_sm_resp are looked at again. */
  receiptPollMs: number;
  /**
   * How long one send may wait for the window, the pace or a throttled SMSC before it gives the
   * message back to the queue. Well under the claim's lease: a message whose claim lapses while
   * it waits here would be taken for one whose worker died, and failed `unknown_outcome`.
   */
  sendDeadlineMs: number;
}

/** registered_delivery: an SMSC delivery receipt on final success or failure. */
const RECEIPT_ON_FINAL_OUTCOME = 0x01;

/**
 * Tern's carrier over SMPP 3.4, as an ESME bound as a transceiver: submit_sm out (each part
 * of a long message its own PDU, or one with message_payload), delivery receipts and mobile
 * replies in as deliver_sm. What it must not forget lives in PostgreSQL: the SMSC's id of every
 * part it had acknowledged (so a retry after a disconnect sends only the parts still unanswered),
 * every receipt (SmppReceipts) and the parts of a concatenated reply until it is whole (SmppInbound).
 */
export class SmppCarrier implements Carrier {
  readonly name: string;
  // An SMSC takes every submit_sm as a new message: a send whose outcome is unknown is not repeated.
  readonly deduplicatesByReference = false;
  private sink: CarrierEventSink | null = null;
  private readonly errors = noSmppErrors();
  private readonly session: SmppSession;
  private readonly submitter: SmppSubmitter;
  private readonly receipts: SmppReceipts;
  private readonly inbound: SmppInbound;
  private readonly parts: SmppParts;

  constructor(
    prisma: PrismaClient,
    private readonly clock: Clock,
    private readonly logger: Logger,
    private readonly options: SmppCarrierOptions,
  ) {
    this.name = options.name ?? 'smpp';
    this.session = new SmppSession(options, logger, this.errors, {
      deliver: (pdu) => this.onDeliver(pdu),
      stateChanged: (state) => this.logState(state),
    });
    this.submitter = new SmppSubmitter(this.session, options, logger, this.errors);
    this.receipts = new SmppReceipts(prisma, clock, logger, this.errors, {
      pollMs: options.receiptPollMs,
      carrier: this.name,
    });
    this.inbound = new SmppInbound(prisma, clock, this.errors);
    this.parts = new SmppParts(prisma, clock, this.name);
  }

  /** Starts binding and keeps trying in the background; waits for the first bind a short while only. */
  async start(sink: CarrierEventSink): Promise<void> {
    this.sink = sink;
    this.receipts.start(sink);
    this.session.open();
    if (!(await this.session.waitForBind(this.options.responseTimeoutMs))) {
      this.logger.warn(
        { state: this.session.state, lastError: this.session.lastError },
        'SMSC not bound yet; sends are retried until it is',
      );
    }
  }

  async stop(): Promise<void> {
    await this.session.close();
    await this.receipts.stop();
  }

  health(): CarrierHealth {
    return {
      carrier: this.name,
      state: this.session.state,
      window: { inUse: this.submitter.window.inUse, size: this.submitter.window.size },
      errors: { ...this.errors },
      lastError: this.session.lastError,
    };
  }

  /**
   * Submits the message's parts the SMSC has not acknowledged yet, one after the other. A part
   * the SMSC refused fails the message; a connection lost before a part's response, or an SMSC
   * that stays throttled, makes it CarrierUnavailableError, and the retry sends only what is left.
   */
  async send(message: OutboundSms): Promise<SubmitResult> {
    const { session } = this;
    if (session.state !== 'bound' && !(await session.waitForBind(this.options.responseTimeoutMs))) {
      throw new CarrierUnavailableError(
        `SMSC not bound (${session.state}${session.lastError ? `: ${session.lastError}` : ''})`,
      );
    }
    // The number of parts does not depend on the concatenation reference, only their headers do.
    const drawnRef = randomInt(256);
    const planned = submitBodies(message.text, message.encoding, this.options.concatenation, drawnRef);
    const known = await this.parts.prepare(message.reference, planned.length, drawnRef);
    const concatRef = known[0]?.concat_ref ?? drawnRef;
    const bodies =
      concatRef === drawnRef
        ? planned
        : submitBodies(message.text, message.encoding, this.options.concatenation, concatRef);
    const accepted = new Map(
      known.filter((row) => row.smsc_message_id).map((row) => [row.part, row.smsc_message_id!]),
    );
    const source = sourceAddress(message.from ?? this.options.sourceAddr);
    const destination = destinationAddress(message.to);
    const deadline = Date.now() + this.options.sendDeadlineMs;
    for (const body of bodies) {
      if (accepted.has(body.part)) continue;
      const smscMessageId = await this.submitPart(body, deadline, accepted.size > 0, {
        service_type: '',
        source_addr_ton: source.ton,
        source_addr_npi: source.npi,
        source_addr: source.addr,
        dest_addr_ton: destination.ton,
        dest_addr_npi: destination.npi,
        destination_addr: destination.addr,
        esm_class: body.esmClass,
        registered_delivery: RECEIPT_ON_FINAL_OUTCOME,
        ...(message.validUntil
          ? {
              validity_period: relativeValidityPeriod(
                (message.validUntil.getTime() - this.clock.now().getTime()) / 1000,
              ),
            }
          : {}),
        data_coding: body.dataCoding,
        short_message: body.shortMessage,
        ...(body.messagePayload ? { message_payload: body.messagePayload } : {}),
      });
      await this.parts.recordAccepted(message.reference, body.part, smscMessageId);
      accepted.set(body.part, smscMessageId);
      this.receipts.wake();
    }
    return { carrierMessageId: accepted.get(1)! };
  }

  /** A part; a refusal after some parts were taken keeps the message on this carrier. */
  private async submitPart(
    body: SubmitBody,
    deadline: number,
    partlyTaken: boolean,
    fields: PduFields,
  ): Promise<string> {
    try {
      return await this.submitter.submit(body, deadline, fields);
    } catch (error) {
      if (partlyTaken && error instanceof CarrierUnavailableError && !error.outcomeUnknown)
        throw new CarrierUnavailableError(error.message, true);
      throw error;
    }
  }

  /**
   * A receipt is stored before it is acknowledged, so a crash right after loses nothing; a
   * reply is acknowledged once the messages domain stored it.
   */
  private async onDeliver(pdu: PDU): Promise<void> {
    if (isDeliveryReceipt(pdu)) return this.receipts.store(pdu);
    if (!this.sink) throw new Error('the carrier has no sink yet');
    return this.inbound.store(pdu, this.sink);
  }

  private logState(state: BindState): void {
    const { carrier: _carrier, ...report } = this.health();
    if (state === 'bound' || state === 'stopped') this.logger.info(report, `SMPP ${state}`);
    else this.logger.warn(report, `SMPP ${state}`);
  }
}
