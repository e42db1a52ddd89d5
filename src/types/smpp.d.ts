// The `smpp` package (node-smpp 0.5) ships no types: these cover only what Tern and its tests use.
declare module 'smpp' {
  import type { EventEmitter } from 'node:events';
  import type { Server as NetServer, Socket } from 'node:net';

  /**
   * A short_message or message_payload with a UDH: decoded, the text and the UDH's information
   * elements; to encode, the text and the whole UDH.
   */
  export interface DecodedMessage {
    message: string | Buffer;
    udh?: Buffer[] | Buffer;
  }

  export interface PduFields {
    command_status?: number;
    sequence_number?: number;
    system_id?: string;
    password?: string;
    system_type?: string;
    interface_version?: number;
    service_type?: string;
    source_addr_ton?: number;
    source_addr_npi?: number;
    source_addr?: string;
    dest_addr_ton?: number;
    dest_addr_npi?: number;
    destination_addr?: string;
    esm_class?: number;
    registered_delivery?: number;
    data_coding?: number;
    short_message?: Buffer | string | DecodedMessage;
    message_payload?: Buffer | string | DecodedMessage;
    message_id?: string;
    receipted_message_id?: string;
    message_state?: number;
  }

  // The class's fields are PduFields' (merged from this interface), with the two every PDU has.
  export interface PDU extends Omit<PduFields, 'command_status' | 'sequence_number'> {}
  export class PDU {
    constructor(command: string, options?: PduFields);
    command: string;
    command_id: number;
    command_status: number;
    sequence_number: number;
    isResponse(): boolean;
    response(options?: PduFields): PDU;
    toBuffer(): Buffer;
  }

  export class Session extends EventEmitter {
    socket: Socket;
    /** false when the socket is not writable; `onResponse` gets the response to a request. */
    send(pdu: PDU, onResponse?: (response: PDU) => void): boolean;
    close(callback?: () => void): void;
    destroy(callback?: () => void): void;
    on(
      event: 'pdu' | 'deliver_sm' | 'submit_sm' | 'bind_transceiver' | 'enquire_link' | 'unbind' | string,
      listener: (pdu: PDU) => void,
    ): this;
    on(event: 'connect' | 'secureConnect' | 'close', listener: () => void): this;
    on(event: 'error', listener: (error: Error) => void): this;
  }

  export interface Server extends NetServer {
    sessions: Session[];
  }

  export function connect(
    options: { host: string; port: number; tls?: boolean },
    listener?: () => void,
  ): Session;
  export function createServer(
    options: Record<string, unknown>,
    listener?: (session: Session) => void,
  ): Server;

  /** Command status names (ESME_ROK, ESME_RTHROTTLED, …) to their values. */
  export const errors: Record<string, number>;
}
