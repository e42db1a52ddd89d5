import type { DecodedMessage, PDU } from 'smpp';

/** esm_class message type bits (SMPP 3.4, 5.2.12): 0x04 is an SMSC delivery receipt. */
const ESM_CLASS_TYPE_MASK = 0x3c;
const ESM_CLASS_DELIVERY_RECEIPT = 0x04;

/** message_state values (SMPP 3.4, 5.2.28) and the `stat:` words of the receipt text (appendix B). */
const FINAL_STATES: Record<string, { delivered: boolean; code: string; description: string }> = {
  DELIVRD: { delivered: true, code: 'delivered', description: 'delivered' },
  EXPIRED: { delivered: false, code: 'expired', description: 'the validity period expired before delivery' },
  DELETED: { delivered: false, code: 'deleted', description: 'the message was deleted by the SMSC' },
  UNDELIV: { delivered: false, code: 'undeliverable', description: 'the message could not be delivered' },
  REJECTD: { delivered: false, code: 'rejected', description: 'the SMSC rejected the message' },
  UNKNOWN: {
    delivered: false,
    code: 'unknown_state',
    description: 'the SMSC reported an invalid message state',
  },
};
const STATE_WORDS: Record<number, string> = {
  1: 'ENROUTE',
  2: 'DELIVRD',
  3: 'EXPIRED',
  4: 'DELETED',
  5: 'UNDELIV',
  6: 'ACCEPTD',
  7: 'UNKNOWN',
  8: 'REJECTD',
};

export interface SmppReceipt {
  smscMessageId: string;
  /** null for a state that is not final (ENROUTE, ACCEPTD): nothing to record. */
  outcome: { delivered: true } | { delivered: false; code: string; message: string } | null;
}

/** The text of a short_message or message_payload as the package decoded it. */
export function decodedText(value: PDU['short_message']): string {
  if (value === undefined || value === null) return '';
  if (typeof value === 'string') return value;
  if (Buffer.isBuffer(value)) return value.toString('latin1');
  const { message } = value as DecodedMessage;
  return typeof message === 'string' ? message : message.toString('latin1');
}

/** The UDH information elements the package split off a short_message or message_payload. */
export function udhElements(value: PDU['short_message']): Buffer[] {
  if (!value || typeof value === 'string' || Buffer.isBuffer(value)) return [];
  const { udh } = value as DecodedMessage;
  return Array.isArray(udh) ? udh : [];
}

export function isDeliveryReceipt(pdu: PDU): boolean {
  return (
    ((pdu.esm_class ?? 0) & ESM_CLASS_TYPE_MASK) === ESM_CLASS_DELIVERY_RECEIPT ||
    typeof pdu.receipted_message_id === 'string'
  );
}

/**
 * A receipt's message id and outcome: from the receipted_message_id and message_state TLVs
 * when the SMSC sends them, otherwise from the de-facto standard text
 * `id:… sub:… dlvrd:… submit date:… done date:… stat:DELIVRD err:… text:…`.
 */
export function parseReceipt(pdu: PDU): SmppReceipt | null {
  const text = decodedText(pdu.short_message) || decodedText(pdu.message_payload);
  const id = pdu.receipted_message_id || /(?:^|\s)id:(\S+)/i.exec(text)?.[1];
  const word =
    (pdu.message_state !== undefined ? STATE_WORDS[pdu.message_state] : undefined) ??
    /stat:(\w+)/i.exec(text)?.[1]?.toUpperCase();
  if (!id || !word) return null;
  const state = FINAL_STATES[word];
  if (!state) return { smscMessageId: id, outcome: null };
  if (state.delivered) return { smscMessageId: id, outcome: { delivered: true } };
  const err = /err:(\w+)/i.exec(text)?.[1];
  return {
    smscMessageId: id,
    outcome: {
      delivered: false,
      code: state.code,
      message: `The SMSC reported ${word}: ${state.description}${err ? ` (err ${err})` : ''}`,
    },
  };
}
