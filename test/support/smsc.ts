import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import smpp, { type PDU, type PduFields, type Server, type Session } from 'smpp';

/** A submit_sm as its octets say, read without the package's decoding: what an SMSC gets. */
export interface RawSubmit {
  sourceTon: number;
  sourceNpi: number;
  source: string;
  destTon: number;
  destNpi: number;
  destination: string;
  esmClass: number;
  /** As sent: empty for none, or SMPP's absolute or relative (…R) time. */
  validityPeriod: string;
  registeredDelivery: number;
  dataCoding: number;
  shortMessage: Buffer;
  /** TLVs by tag (0x0424 is message_payload). */
  tlvs: Map<number, Buffer>;
}

export interface ReceivedPdu {
  command: string;
  pdu: PDU;
  raw: Buffer;
  session: Session;
  /** When it arrived (epoch ms), for counts over a window. */
  at: number;
}

export interface AcceptedSubmit {
  messageId: string;
  submit: RawSubmit;
  session: Session;
}

/** How the SMSC answers the n-th submit_sm it receives (1-based): a status, or no answer at all. */
export type SubmitBehaviour = (
  n: number,
  submit: RawSubmit,
  session: Session,
) => { status: number } | 'ok' | 'silent' | Promise<{ status: number } | 'ok' | 'silent'>;

export const MESSAGE_PAYLOAD_TAG = 0x0424;

/**
 * An SMSC on loopback, built on the server side of the same `smpp` package: it checks the
 * bind's credentials, records every PDU it receives with its exact octets, answers submit_sm
 * as told (OK by default, with ids <prefix>-1, <prefix>-2, … where the prefix is the SMSC's
 * own), and can send receipts and replies.
 */
export class LoopbackSmsc {
  readonly received: ReceivedPdu[] = [];
  readonly accepted: AcceptedSubmit[] = [];
  /** Every deliver_sm_resp status the ESME answered, in order. */
  readonly deliverResponses: number[] = [];
  behaviour: SubmitBehaviour = () => 'ok';
  /** Sends a receipt in this format for every accepted submit (after its response); null for none. */
  autoReceipt: 'tlv' | 'text' | null = null;
  private submits = 0;
  private readonly idPrefix = `smsc${randomBytes(4).toString('hex')}`;
  private server: Server | null = null;
  port = 0;

  constructor(
    readonly systemId: string,
    /** Changeable, to let a refused ESME in later. */
    public password: string,
  ) {}

  static async start(systemId = 'tern', password = 'secret'): Promise<LoopbackSmsc> {
    const smsc = new LoopbackSmsc(systemId, password);
    await smsc.listen();
    return smsc;
  }

  /** The id this SMSC gives the n-th submit it accepts (1-based). */
  messageId(n: number): string {
    return `${this.idPrefix}-${n}`;
  }

  url(credentials: { systemId?: string; password?: string } = {}): string {
    return `smpp://${credentials.systemId ?? this.systemId}:${credentials.password ?? this.password}@127.0.0.1:${this.port}`;
  }

  get boundSessions(): Session[] {
    return (this.server?.sessions ?? []).filter(
      (session) => (session as Session & { bound?: boolean }).bound,
    );
  }

  /** The submit_sm PDUs received, bound or not, in order. */
  submitsReceived(): RawSubmit[] {
    return this.received
      .filter((entry) => entry.command === 'submit_sm')
      .map((entry) => parseSubmitSm(entry.raw));
  }

  /** Closes every connection at once, answering nothing more. */
  dropConnections(): void {
    for (const session of [...(this.server?.sessions ?? [])]) session.destroy();
  }

  /** Sends a deliver_sm on the first bound session and waits for its response status. */
  deliver(fields: PduFields): Promise<number> {
    const session = this.boundSessions[0];
    if (!session) throw new Error('no ESME is bound');
    // Each deliver_sm in flight listens for the session's close; a campaign has thousands at once.
    session.setMaxListeners(0);
    return new Promise((resolve, reject) => {
      const closed = () => reject(new Error('the session closed before deliver_sm_resp'));
      const sent = session.send(new smpp.PDU('deliver_sm', fields), (response) => {
        session.off('close', closed);
        this.deliverResponses.push(response.command_status);
        resolve(response.command_status);
      });
      if (!sent) reject(new Error('the session is closed'));
      else session.once('close', closed);
    });
  }

  /** As a real SMSC does with receipts: tries again, on whatever session is bound, until one is acknowledged. */
  async deliverUntilAcknowledged(fields: PduFields, timeoutMs = 10_000): Promise<number> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      try {
        return await this.deliver(fields);
      } catch (error) {
        if (Date.now() > deadline) throw error;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    }
  }

  /** A mobile's message to the ESME; `udh` makes it one part of a concatenated message. */
  deliverMessage(
    from: string,
    text: string,
    options: { to?: string; dataCoding?: number; udh?: Buffer } = {},
  ): Promise<number> {
    return this.deliver({
      source_addr_ton: 1,
      source_addr_npi: 1,
      source_addr: from,
      destination_addr: options.to ?? '',
      esm_class: 0,
      data_coding: options.dataCoding ?? 0,
      short_message: options.udh ? { udh: options.udh, message: text } : text,
    });
  }

  /** A delivery receipt for an SMSC id: in TLVs (receipted_message_id, message_state) or in the standard text. */
  deliverReceipt(
    messageId: string,
    format: 'tlv' | 'text',
    stat: 'DELIVRD' | 'UNDELIV' | 'ENROUTE' = 'DELIVRD',
  ): Promise<number> {
    return this.deliver(receiptFields(messageId, format, stat));
  }

  async close(): Promise<void> {
    this.dropConnections();
    await new Promise((resolve) => this.server?.close(resolve));
  }

  /** Listens again on the same port after close(): the SMSC comes back. */
  restart(): Promise<void> {
    return this.listen(this.port);
  }

  private listen(port = 0): Promise<void> {
    this.server = smpp.createServer({}, (session) => this.accept(session));
    return new Promise((resolve) => {
      this.server!.listen(port, '127.0.0.1', () => {
        this.port = (this.server!.address() as AddressInfo).port;
        resolve();
      });
    });
  }

  private accept(session: Session): void {
    // The raw octets of each PDU: the session reads its length, then the rest, then emits it.
    let chunks: Buffer[] = [];
    const read = session.socket.read.bind(session.socket);
    session.socket.read = ((size?: number) => {
      const chunk = read(size) as Buffer | null;
      if (chunk) chunks.push(chunk);
      return chunk;
    }) as typeof session.socket.read;
    session.on('error', () => undefined);
    session.on('pdu', (pdu) => {
      this.received.push({ command: pdu.command, pdu, raw: Buffer.concat(chunks), session, at: Date.now() });
      chunks = [];
    });
    session.on('bind_transceiver', (pdu) => {
      if (pdu.system_id !== this.systemId || pdu.password !== this.password) {
        session.send(
          pdu.response({
            command_status:
              pdu.system_id !== this.systemId ? smpp.errors.ESME_RINVSYSID! : smpp.errors.ESME_RINVPASWD!,
          }),
        );
        return;
      }
      (session as Session & { bound?: boolean }).bound = true;
      session.send(pdu.response({ system_id: 'loopback' }));
    });
    session.on('enquire_link', (pdu) => void session.send(pdu.response()));
    session.on('unbind', (pdu) => {
      session.send(pdu.response());
      session.close();
    });
    session.on('submit_sm', (pdu) => void this.answerSubmit(session, pdu));
  }

  private async answerSubmit(session: Session, pdu: PDU): Promise<void> {
    this.submits += 1;
    // This PDU's own octets: with several sessions, the last PDU received may be another's.
    const submit = parseSubmitSm(this.received.findLast((entry) => entry.pdu === pdu)!.raw);
    const answer = await this.behaviour(this.submits, submit, session);
    if (answer === 'silent') return;
    if (answer !== 'ok') {
      session.send(pdu.response({ command_status: answer.status }));
      return;
    }
    const messageId = this.messageId(this.accepted.length + 1);
    this.accepted.push({ messageId, submit, session });
    session.send(pdu.response({ message_id: messageId }));
    const format = this.autoReceipt;
    if (format)
      setTimeout(
        () =>
          void this.deliverUntilAcknowledged(receiptFields(messageId, format, 'DELIVRD')).catch(
            () => undefined,
          ),
        20,
      );
  }
}

function receiptFields(
  messageId: string,
  format: 'tlv' | 'text',
  stat: 'DELIVRD' | 'UNDELIV' | 'ENROUTE',
): PduFields {
  const states = { ENROUTE: 1, DELIVRD: 2, UNDELIV: 5 } as const;
  if (format === 'tlv') {
    return {
      esm_class: 0x04,
      data_coding: 0,
      short_message: '',
      receipted_message_id: messageId,
      message_state: states[stat],
    };
  }
  const text = `id:${messageId} sub:001 dlvrd:${stat === 'DELIVRD' ? '001' : '000'} submit date:2611210800 done date:2611210801 stat:${stat} err:${stat === 'UNDELIV' ? '001' : '000'} text:Hello`;
  return { esm_class: 0x04, data_coding: 0, short_message: text };
}

/** Reads a submit_sm's mandatory parameters and TLVs from its octets (SMPP 3.4, 4.4.1). */
export function parseSubmitSm(raw: Buffer): RawSubmit {
  let offset = 16;
  const cstring = () => {
    const end = raw.indexOf(0, offset);
    const value = raw.toString('latin1', offset, end);
    offset = end + 1;
    return value;
  };
  const octet = () => raw[offset++]!;
  cstring(); // service_type
  const sourceTon = octet();
  const sourceNpi = octet();
  const source = cstring();
  const destTon = octet();
  const destNpi = octet();
  const destination = cstring();
  const esmClass = octet();
  octet(); // protocol_id
  octet(); // priority_flag
  cstring(); // schedule_delivery_time
  const validityPeriod = cstring();
  const registeredDelivery = octet();
  octet(); // replace_if_present_flag
  const dataCoding = octet();
  octet(); // sm_default_msg_id
  const length = octet();
  const shortMessage = raw.subarray(offset, offset + length);
  offset += length;
  const tlvs = new Map<number, Buffer>();
  while (offset + 4 <= raw.length) {
    const tag = raw.readUInt16BE(offset);
    const size = raw.readUInt16BE(offset + 2);
    tlvs.set(tag, raw.subarray(offset + 4, offset + 4 + size));
    offset += 4 + size;
  }
  return {
    sourceTon,
    sourceNpi,
    source,
    destTon,
    destNpi,
    destination,
    esmClass,
    validityPeriod,
    registeredDelivery,
    dataCoding,
    shortMessage,
    tlvs,
  };
}
