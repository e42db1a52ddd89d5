/**
 * How a message's text becomes the bodies of its submit_sm PDUs: GSM-7 as one unpacked septet
 * per octet (data_coding 0, what SMSCs expect over SMPP), UCS-2 as UTF-16BE (data_coding 8); a
 * long message either as concatenated parts with a UDH, or as one PDU with message_payload.
 */
import { type Encoding, GSM7_CODES, GSM7_ESCAPE, GSM7_EXTENSION, segmentCharacters } from '../encoding.js';

const GSM7_QUESTION_MARK = GSM7_CODES.get('?')!;

export const DATA_CODING = { 'GSM-7': 0x00, 'UCS-2': 0x08 } as const;
/** esm_class bit saying short_message starts with a user data header. */
export const ESM_CLASS_UDHI = 0x40;

export type ConcatenationMode = 'udh' | 'payload';

/** The body of one submit_sm. */
export interface SubmitBody {
  /** 1-based. */
  part: number;
  parts: number;
  dataCoding: number;
  esmClass: number;
  /** short_message, UDH included; empty when the text travels in message_payload. */
  shortMessage: Buffer;
  messagePayload: Buffer | null;
}

/** One character's bytes: GSM-7 septets (an extension character is two) or UTF-16BE code units. */
function encodeCharacter(char: string, encoding: Encoding): Buffer {
  if (encoding === 'UCS-2') return Buffer.from(char, 'utf16le').swap16();
  const extension = GSM7_EXTENSION[char];
  if (extension !== undefined) return Buffer.from([GSM7_ESCAPE, extension]);
  // The domain only picks GSM-7 for texts in the alphabet; a stray character is sent as '?'.
  return Buffer.from([GSM7_CODES.get(char) ?? GSM7_QUESTION_MARK]);
}

/** The text's parts as the bytes of their short_message, cut where the domain counts its segments. */
function splitText(text: string, encoding: Encoding): Buffer[] {
  return segmentCharacters([...text], encoding).map((chars) =>
    Buffer.concat(chars.map((char) => encodeCharacter(char, encoding))),
  );
}

/** The concatenation header of 3GPP TS 23.040: IEI 00 (8-bit reference), the reference, the count, the part. */
export function concatenationUdh(reference: number, parts: number, part: number): Buffer {
  return Buffer.from([0x05, 0x00, 0x03, reference & 0xff, parts, part]);
}

/** The submit_sm bodies of a message; `reference` is the same for all its parts, and on every attempt. */
export function submitBodies(
  text: string,
  encoding: Encoding,
  mode: ConcatenationMode,
  reference: number,
): SubmitBody[] {
  const dataCoding = DATA_CODING[encoding];
  const pieces = splitText(text, encoding);
  if (pieces.length === 1) {
    return [{ part: 1, parts: 1, dataCoding, esmClass: 0, shortMessage: pieces[0]!, messagePayload: null }];
  }
  if (mode === 'payload') {
    return [
      {
        part: 1,
        parts: 1,
        dataCoding,
        esmClass: 0,
        shortMessage: Buffer.alloc(0),
        messagePayload: Buffer.concat(pieces),
      },
    ];
  }
  return pieces.map((piece, index) => ({
    part: index + 1,
    parts: pieces.length,
    dataCoding,
    esmClass: ESM_CLASS_UDHI,
    shortMessage: Buffer.concat([concatenationUdh(reference, pieces.length, index + 1), piece]),
    messagePayload: null,
  }));
}

export interface Concatenation {
  reference: number;
  parts: number;
  part: number;
}

/** The concatenation information element of a received UDH (IEI 00, 8-bit reference, or 08, 16-bit); null without one. */
export function readConcatenation(elements: readonly Buffer[]): Concatenation | null {
  for (const element of elements) {
    if (element[0] === 0x00 && element.length >= 5)
      return { reference: element[2]!, parts: element[3]!, part: element[4]! };
    if (element[0] === 0x08 && element.length >= 6)
      return { reference: element.readUInt16BE(2), parts: element[4]!, part: element[5]! };
  }
  return null;
}
