import { createHash, randomInt, randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import smpp, { type PDU, type PduFields, type Session } from 'smpp';
import type { Clock } from '../clock.js';
import type { SmppConfig } from '../config.js';
import type { PrismaClient } from '../generated/prisma/client.js';
import { PollingLoop } from '../jobs/polling-loop.js';
import {
  CarrierRejectedError,
  CarrierUnavailableError,
  type Carrier,
  type CarrierEventSink,
  type CarrierHealth,
  type OutboundSms,
  type SubmitResult,
} from './carrier.js';
import { destinationAddress, inboundNumber, sourceAddress } from './smpp-address.js';
import { decodedText, isDeliveryReceipt, parseReceipt, udhElements } from './smpp-receipt.js';
import { readConcatenation, submitBodies, type Concatenation, type SubmitBody } from './smpp-segments.js';

export type BindState = 'connecting' | 'bound' | 'disconnected' | 'bind_failed' | 'stopped';

export interface SmppCarrierOptions extends SmppConfig {
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

const STATUS = smpp.errors;
const INTERFACE_VERSION_34 = 0x34;
/** registered_delivery: an SMSC delivery receipt on final success or failure. */
const RECEIPT_ON_FINAL_OUTCOME = 0x01;
/** Statuses that mean "not now": the part is submitted again after a pause. */
const RETRY_LATER_STATUSES = new Set([STATUS.ESME_RTHROTTLED, STATUS.ESME_RMSGQFUL]);
const THROTTLE_ATTEMPTS = 8;
const BACKOFF_CAP_MS = 30_000;
const RECEIPT_BATCH = 500;
const REPORT_CONCURRENCY = 16;

interface PartRow {
  part: number;
  parts: number;
  concat_ref: number;
  smsc_message_id: string | null;
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

interface PendingRequest {
  reject(error: Error): void;
  timer: NodeJS.Timeout;
}

/** At most `size` submit_sm waiting for their response at once. */
class SubmitWindow {
  inUse = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(readonly size: number) {}

  /** Takes a slot; false when none came free within `timeoutMs`. */
  async acquire(timeoutMs: number): Promise<boolean> {
    if (this.inUse < this.size) {
      this.inUse += 1;
      return true;
    }
    return new Promise<boolean>((resolve) => {
      const take = () => {
        clearTimeout(timer);
        resolve(true);
      };
      const timer = setTimeout(() => {
        this.waiting.splice(this.waiting.indexOf(take), 1);
        resolve(false);
      }, Math.max(0, timeoutMs));
      this.waiting.push(take);
    });
  }

  release(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.inUse -= 1;
  }
}

/**
 * Tern's carrier over SMPP 3.4, as an ESME bound as a transceiver: submit_sm out (each part
 * of a long message its own PDU, or one with message_payload), delivery receipts and mobile
 * replies in as deliver_sm. What it must not forget lives in PostgreSQL: the SMSC's id of every
 * part it had acknowledged (so a retry after a disconnect sends only the parts still unanswered),
 * every receipt, written before deliver_sm_resp, even one that overtook its submit_sm_resp, and
 * the parts of a concatenated reply until it is whole.
 */
export class SmppCarrier implements Carrier {
  readonly name = 'smpp';
  // An SMSC takes every submit_sm as a new message: a send whose outcome is unknown is not repeated.
  readonly deduplicatesByReference = false;
  private sink: CarrierEventSink | null = null;
  private session: Session | null = null;
  private state: BindState = 'disconnected';
  private stopping = false;
  private reconnectAttempts = 0;
  private reconnectTimer: NodeJS.Timeout | null = null;
  private enquireTimer: NodeJS.Timeout | null = null;
  private readonly pending = new Set<PendingRequest>();
  private readonly window: SubmitWindow;
  private readonly bindWaiters = new Set<(bound: boolean) => void>();
  private nextSubmitAt = 0;
  private lastError: string | null = null;
  private readonly errors = { bind_failures: 0, disconnects: 0, response_timeouts: 0, throttled: 0, rejected: 0, receipt_failures: 0, inbound_failures: 0 };
  private readonly receipts: PollingLoop;

  constructor(
    private readonly prisma: PrismaClient,
    private readonly clock: Clock,
    private readonly logger: Logger,
    private readonly options: SmppCarrierOptions,
  ) {
    this.window = new SubmitWindow(options.window);
    this.receipts = new PollingLoop({
      step: () => this.applyReceipts(),
      batch: RECEIPT_BATCH,
      pollMs: options.receiptPollMs,
      logger,
      failure: 'SMPP receipts could not be applied',
    });
  }

  /** Starts binding and keeps trying in the background; waits for the first bind a short while only. */
  async start(sink: CarrierEventSink): Promise<void> {
    this.sink = sink;
    this.stopping = false;
    this.receipts.start();
    this.connect();
    if (!(await this.waitForBind(this.options.responseTimeoutMs))) {
      this.logger.warn({ state: this.state, last_error: this.lastError }, 'SMSC not bound yet; sends are retried until it is');
    }
  }

  async stop(): Promise<void> {
    this.stopping = true;
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    this.reconnectTimer = null;
    const session = this.session;
    if (session) {
      if (this.state === 'bound') await this.request(session, new smpp.PDU('unbind')).catch(() => undefined);
      await new Promise<void>((resolve) => {
        session.once('close', () => resolve());
        session.close();
        setTimeout(() => session.destroy(), this.options.responseTimeoutMs).unref();
      });
    }
    this.setState('stopped');
    await this.receipts.stop();
  }

  health(): CarrierHealth {
    return {
      carrier: this.name,
      state: this.state,
      window: { in_use: this.window.inUse, size: this.window.size },
      errors: { ...this.errors },
      last_error: this.lastError,
    };
  }

  /**
   * Submits the message's parts the SMSC has not acknowledged yet, one after the other. A part
   * the SMSC refused fails the message; a connection lost before a part's response, or an SMSC
   * that stays throttled, makes it CarrierUnavailableError, and the retry sends only what is left.
   */
  async send(message: OutboundSms): Promise<SubmitResult> {
    if (this.state !== 'bound' && !(await this.waitForBind(this.options.responseTimeoutMs))) {
      throw new CarrierUnavailableError(`SMSC not bound (${this.state}${this.lastError ? `: ${this.lastError}` : ''})`);
    }
    const known = await this.partsOf(message.reference);
    const concatRef = known[0]?.concat_ref ?? randomInt(256);
    const bodies = submitBodies(message.text, message.encoding, this.options.concatenation, concatRef);
    if (known.length === 0) await this.recordParts(message.reference, bodies.length, concatRef);
    const accepted = new Map(known.filter((row) => row.smsc_message_id).map((row) => [row.part, row.smsc_message_id!]));
    const source = sourceAddress(message.from ?? this.options.sourceAddr);
    const destination = destinationAddress(message.to);
    const deadline = Date.now() + this.options.sendDeadlineMs;
    for (const body of bodies) {
      if (accepted.has(body.part)) continue;
      const smscMessageId = await this.submit(body, deadline, {
        service_type: '',
        source_addr_ton: source.ton,
        source_addr_npi: source.npi,
        source_addr: source.addr,
        dest_addr_ton: destination.ton,
        dest_addr_npi: destination.npi,
        destination_addr: destination.addr,
        esm_class: body.esmClass,
        registered_delivery: RECEIPT_ON_FINAL_OUTCOME,
        data_coding: body.dataCoding,
        short_message: body.shortMessage,
        ...(body.messagePayload ? { message_payload: body.messagePayload } : {}),
      });
      await this.prisma.smppPart.update({
        where: { reference_part: { reference: message.reference, part: body.part } },
        data: { smscMessageId, submittedAt: this.clock.now() },
      });
      accepted.set(body.part, smscMessageId);
      // A receipt for this id may already be waiting.
      this.receipts.wake();
    }
    return { carrierMessageId: accepted.get(1)! };
  }

  private partsOf(reference: string): Promise<PartRow[]> {
    return this.prisma.$queryRaw<PartRow[]>`
      SELECT part, parts, concat_ref, smsc_message_id FROM smpp_parts WHERE reference = ${reference} ORDER BY part`;
  }

  private async recordParts(reference: string, parts: number, concatRef: number): Promise<void> {
    await this.prisma.smppPart.createMany({
      data: Array.from({ length: parts }, (_, index) => ({ reference, part: index + 1, parts, concatRef })),
      skipDuplicates: true,
    });
  }

  /**
   * One part through the window, at the carrier's pace; ESME_RTHROTTLED and ESME_RMSGQFUL back
   * off and retry. Waiting past `deadline` gives the message back (CarrierUnavailableError).
   */
  private async submit(body: SubmitBody, deadline: number, fields: PduFields): Promise<string> {
    for (let attempt = 1; ; attempt += 1) {
      if (!(await this.window.acquire(deadline - Date.now()))) {
        throw new CarrierUnavailableError(`the submit window stayed full (${this.window.size} outstanding); the message goes back to the queue`);
      }
      let response: PDU;
      try {
        await this.pace(deadline);
        response = await this.request(this.boundSession(), new smpp.PDU('submit_sm', { ...fields }));
      } finally {
        this.window.release();
      }
      const status = response.command_status;
      if (status === STATUS.ESME_ROK && response.message_id) return response.message_id;
      if (RETRY_LATER_STATUSES.has(status)) {
        this.errors.throttled += 1;
        const pause = Math.min(this.options.throttleBackoffMs * 2 ** (attempt - 1), BACKOFF_CAP_MS);
        this.logger.warn({ status: statusName(status), part: body.part, attempt, pauseMs: pause, window: this.window.inUse }, 'SMSC asks to slow down');
        if (attempt >= THROTTLE_ATTEMPTS || Date.now() + pause > deadline) {
          throw new CarrierUnavailableError(`SMSC still throttling after ${attempt} attempts (${statusName(status)})`);
        }
        await sleep(pause);
        continue;
      }
      this.errors.rejected += 1;
      const name = statusName(status);
      this.lastError = `submit_sm refused: ${name}`;
      throw new CarrierRejectedError(
        `smpp_0x${status.toString(16).padStart(8, '0')}`,
        status === STATUS.ESME_ROK ? 'The SMSC accepted the message without a message id' : `The SMSC refused the message: ${name}`,
      );
    }
  }

  /** Spaces submit_sm PDUs evenly at CARRIER_MAX_PER_SECOND, across all the sends of this process. */
  private async pace(deadline: number): Promise<void> {
    if (!this.options.maxPerSecond) return;
    const now = Date.now();
    const at = Math.max(now, this.nextSubmitAt);
    if (at > deadline) throw new CarrierUnavailableError('the carrier\'s pace leaves no slot in time; the message goes back to the queue');
    this.nextSubmitAt = at + 1000 / this.options.maxPerSecond;
    if (at > now) await sleep(at - now);
  }

  private boundSession(): Session {
    if (this.state !== 'bound' || !this.session) throw new CarrierUnavailableError(`SMSC not bound (${this.state})`);
    return this.session;
  }

  /** Sends a request and waits for its response; a lost connection or a silent SMSC rejects it. */
  private request(session: Session, pdu: PDU): Promise<PDU> {
    return new Promise<PDU>((resolve, reject) => {
      const entry: PendingRequest = {
        reject,
        timer: setTimeout(() => {
          this.pending.delete(entry);
          this.errors.response_timeouts += 1;
          reject(new CarrierUnavailableError(`no ${pdu.command}_resp within ${this.options.responseTimeoutMs} ms`));
          // An SMSC that stops answering is treated as gone: the connection is made again.
          this.dropSession(session, `no ${pdu.command}_resp within ${this.options.responseTimeoutMs} ms`);
        }, this.options.responseTimeoutMs),
      };
      this.pending.add(entry);
      const sent = session.send(pdu, (response) => {
        clearTimeout(entry.timer);
        this.pending.delete(entry);
        resolve(response);
      });
      if (!sent) {
        clearTimeout(entry.timer);
        this.pending.delete(entry);
        reject(new CarrierUnavailableError('the SMSC connection is closed'));
      }
    });
  }

  private connect(): void {
    if (this.stopping) return;
    // After a refused bind the state stays bind_failed until a bind succeeds: that is what operators need to see.
    if (this.state !== 'bind_failed') this.setState('connecting');
    const { host, port, tls } = this.options;
    const session = smpp.connect({ host, port, tls }, () => void this.bind(session));
    this.session = session;
    const connectTimer = setTimeout(() => {
      if (this.session === session && this.state !== 'bound') this.dropSession(session, `no bind within ${this.options.responseTimeoutMs} ms`);
    }, this.options.responseTimeoutMs * 2);
    session.on('error', (error) => {
      this.lastError = error.message;
      this.logger.warn({ err: error, host, port }, 'SMPP connection error');
    });
    session.on('close', () => {
      clearTimeout(connectTimer);
      this.onClose(session);
    });
    session.on('deliver_sm', (pdu) => void this.onDeliver(session, pdu));
    session.on('enquire_link', (pdu) => void session.send(pdu.response()));
    session.on('unbind', (pdu) => {
      session.send(pdu.response());
      session.close();
    });
  }

  private async bind(session: Session): Promise<void> {
    const { systemId, password, systemType, host, port } = this.options;
    let response: PDU;
    try {
      response = await this.request(
        session,
        new smpp.PDU('bind_transceiver', { system_id: systemId, password, system_type: systemType, interface_version: INTERFACE_VERSION_34 }),
      );
    } catch {
      return;
    }
    if (response.command_status !== STATUS.ESME_ROK) {
      this.errors.bind_failures += 1;
      this.lastError = `bind refused: ${statusName(response.command_status)}`;
      this.setState('bind_failed');
      session.close();
      return;
    }
    this.reconnectAttempts = 0;
    this.lastError = null;
    this.logger.info({ host, port, systemId }, 'bound to the SMSC as a transceiver');
    this.setState('bound');
    this.enquireTimer = setInterval(() => {
      this.request(session, new smpp.PDU('enquire_link')).catch(() => undefined);
    }, this.options.enquireLinkMs);
  }

  private dropSession(session: Session, why: string): void {
    if (this.session !== session) return;
    this.lastError = why;
    session.destroy();
  }

  private onClose(session: Session): void {
    if (this.session !== session) return;
    this.session = null;
    if (this.enquireTimer) clearInterval(this.enquireTimer);
    this.enquireTimer = null;
    for (const entry of this.pending) {
      clearTimeout(entry.timer);
      entry.reject(new CarrierUnavailableError('the SMSC connection closed before its response'));
    }
    this.pending.clear();
    if (this.stopping) return;
    if (this.state === 'bound') {
      this.errors.disconnects += 1;
      this.setState('disconnected');
    } else if (this.state === 'connecting') {
      this.setState('disconnected');
    }
    const delay = Math.min(this.options.reconnectMs * 2 ** this.reconnectAttempts, BACKOFF_CAP_MS);
    this.reconnectAttempts += 1;
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = null;
      this.connect();
    }, delay);
  }

  private setState(state: BindState): void {
    if (this.state === state) return;
    this.state = state;
    if (state !== 'connecting') for (const settle of this.bindWaiters) settle(state === 'bound');
    const { carrier: _carrier, ...report } = this.health();
    if (state === 'bound' || state === 'stopped') this.logger.info(report, `SMPP ${state}`);
    else this.logger.warn(report, `SMPP ${state}`);
  }

  /** True once bound; false when the attempt under way fails, after `timeoutMs`, or at once if none is under way. */
  private waitForBind(timeoutMs: number): Promise<boolean> {
    if (this.state === 'bound') return Promise.resolve(true);
    if (this.state !== 'connecting') return Promise.resolve(false);
    return new Promise((resolve) => {
      const settle = (bound: boolean) => {
        clearTimeout(timer);
        this.bindWaiters.delete(settle);
        resolve(bound);
      };
      const timer = setTimeout(() => settle(false), timeoutMs);
      this.bindWaiters.add(settle);
    });
  }

  /**
   * A receipt is stored before it is acknowledged, so a crash right after loses nothing; a
   * reply is acknowledged once the messages domain stored it. Whatever cannot be stored is
   * answered ESME_RX_T_APPN, which asks the SMSC to deliver it again later.
   */
  private async onDeliver(session: Session, pdu: PDU): Promise<void> {
    try {
      if (isDeliveryReceipt(pdu)) await this.storeReceipt(pdu);
      else await this.storeInbound(pdu);
      session.send(pdu.response());
    } catch (error) {
      this.logger.error({ err: error }, 'deliver_sm could not be stored; the SMSC is asked to retry');
      session.send(pdu.response({ command_status: STATUS.ESME_RX_T_APPN }));
    }
  }

  private async storeReceipt(pdu: PDU): Promise<void> {
    const receipt = parseReceipt(pdu);
    if (!receipt) {
      this.errors.receipt_failures += 1;
      this.logger.warn({ text: decodedText(pdu.short_message) }, 'unreadable delivery receipt; acknowledged and ignored');
      return;
    }
    if (!receipt.outcome) return;
    const failure = receipt.outcome.delivered ? null : receipt.outcome;
    await this.prisma.smppReceipt.createMany({
      data: [
        {
          smscMessageId: receipt.smscMessageId,
          delivered: receipt.outcome.delivered,
          errorCode: failure?.code ?? null,
          errorMessage: failure?.message ?? null,
          receivedAt: this.clock.now(),
        },
      ],
      skipDuplicates: true,
    });
    this.receipts.wake();
  }

  private async storeInbound(pdu: PDU): Promise<void> {
    const sink = this.sink;
    if (!sink) throw new Error('the carrier has no sink yet');
    const source = pdu.source_addr ?? '';
    const destination = pdu.destination_addr ?? '';
    let text = decodedText(pdu.short_message) || decodedText(pdu.message_payload);
    // deliver_sm carries no id of its own for a mobile-originated message.
    let carrierMessageId = `mo_${randomUUID()}`;
    const concatenation = readConcatenation([...udhElements(pdu.short_message), ...udhElements(pdu.message_payload)]);
    if (concatenation && concatenation.parts > 1) {
      const whole = await this.collectPart(source, destination, concatenation, text);
      if (!whole) return;
      ({ text, carrierMessageId } = whole);
    }
    try {
      await sink.inbound({ carrierMessageId, from: inboundNumber(source), to: destination || null, text, at: this.clock.now() });
    } catch (error) {
      this.errors.inbound_failures += 1;
      throw error;
    }
    if (concatenation && concatenation.parts > 1) {
      await this.prisma.smppInboundPart.deleteMany({
        where: { sourceAddr: source, destinationAddr: destination, concatRef: concatenation.reference, parts: concatenation.parts },
      });
    }
  }

  /**
   * Keeps one part of a concatenated reply; once every part is here, the whole text, with an id
   * derived from the parts, so that two deliveries completing it at once store one reply.
   */
  private async collectPart(source: string, destination: string, concatenation: Concatenation, text: string) {
    const group = { sourceAddr: source, destinationAddr: destination, concatRef: concatenation.reference, parts: concatenation.parts };
    await this.prisma.smppInboundPart.createMany({
      data: [{ ...group, part: concatenation.part, text, receivedAt: this.clock.now() }],
      skipDuplicates: true,
    });
    const rows = await this.prisma.smppInboundPart.findMany({ where: group, orderBy: { part: 'asc' } });
    if (rows.length < concatenation.parts) return null;
    const first = Math.min(...rows.map((row) => row.receivedAt.getTime()));
    const key = [source, destination, concatenation.reference, concatenation.parts, first].join('|');
    return { text: rows.map((row) => row.text).join(''), carrierMessageId: `mo_${createHash('sha256').update(key).digest('hex').slice(0, 32)}` };
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
      FROM smpp_receipts r JOIN smpp_parts p ON p.smsc_message_id = r.smsc_message_id
      WHERE r.applied_at IS NULL
      ORDER BY r.received_at
      LIMIT ${RECEIPT_BATCH}`;
    if (due.length === 0) return 0;
    const ids = due.map((row) => row.smsc_message_id);
    await this.prisma.$executeRaw`
      UPDATE smpp_parts p
      SET state = CASE WHEN r.delivered THEN 'delivered' ELSE 'failed' END, error_code = r.error_code, error_message = r.error_message
      FROM smpp_receipts r
      WHERE r.smsc_message_id = p.smsc_message_id AND r.smsc_message_id = ANY(${ids}) AND p.state = 'pending'`;
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
        this.logger.warn({ err: result.reason, reference: chunk[index]!.reference }, 'delivery report not applied; will retry');
      });
    }
    const applied = due.filter((row) => finished.has(row.reference)).map((row) => row.smsc_message_id);
    if (applied.length > 0) {
      await this.prisma.smppReceipt.updateMany({ where: { smscMessageId: { in: applied } }, data: { appliedAt: this.clock.now() } });
    }
    return applied.length;
  }

  private async report(sink: CarrierEventSink, settlement: Settlement): Promise<void> {
    const base = { carrierMessageId: settlement.first_id ?? settlement.reference, reference: settlement.reference, at: this.clock.now() };
    if (settlement.failed > 0n) {
      await sink.deliveryReport({
        ...base,
        status: 'failed',
        error: { code: settlement.error_code ?? 'carrier_error', message: settlement.error_message ?? 'The SMSC reported a failure' },
      });
    } else if (Number(settlement.delivered) === settlement.parts) {
      await sink.deliveryReport({ ...base, status: 'delivered' });
    }
  }
}

function statusName(status: number): string {
  const name = Object.keys(STATUS).find((key) => STATUS[key] === status);
  return `${name ?? 'unknown status'} (0x${status.toString(16).padStart(8, '0')})`;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
