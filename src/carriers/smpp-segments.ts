/**
 * How a message's text becomes the bodies of its submit_sm PDUs: GSM-7 as one unpacked septet
 * per octet (data_coding 0, what SMSCs expect over SMPP), UCS-2 as UTF-16BE (data_coding 8); a
 * long message either as concatenated parts with a UDH, or as one PDU with message_payload.
 */

/** GSM 03.38 default alphabet in code order (0x1B, the escape, included at its place). */
const GSM7_ALPHABET =
  '@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞ\x1bÆæßÉ !"#¤%&\'()*+,-./0123456789:;<=>?¡ABCDEFGHIJKLMNOPQRSTUVWXYZÄÖÑÜ§¿abcdefghijklmnopqrstuvwxyzäöñüà';
/** GSM 03.38 extension table: the septet that follows the escape. */
const GSM7_EXTENSION: Record<string, number> = { '\f': 0x0a, '^': 0x14, '{': 0x28, '}': 0x29, '\\': 0x2f, '[': 0x3c, '~': 0x3d, ']': 0x3e, '|': 0x40, '€': 0x65 };
const GSM7_CODES = new Map([...GSM7_ALPHABET].map((char, code) => [char, code]));
const ESCAPE = 0x1b;
const GSM7_QUESTION_MARK = 0x3f;

const SINGLE_UNITS = { 'GSM-7': 160, 'UCS-2': 70 } as const;
const PART_UNITS = { 'GSM-7': 153, 'UCS-2': 67 } as const;
export const DATA_CODING = { 'GSM-7': 0x00, 'UCS-2': 0x08 } as const;
/** esm_class bit saying short_message starts with a user data header. */
export const ESM_CLASS_UDHI = 0x40;

export type SmppEncoding = keyof typeof DATA_CODING;
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
function encodeCharacter(char: string, encoding: SmppEncoding): Buffer {
  if (encoding === 'UCS-2') return Buffer.from(char, 'utf16le').swap16();
  const extension = GSM7_EXTENSION[char];
  if (extension !== undefined) return Buffer.from([ESCAPE, extension]);
  // The domain only picks GSM-7 for texts in the alphabet; a stray character is sent as '?'.
  return Buffer.from([GSM7_CODES.get(char) ?? GSM7_QUESTION_MARK]);
}

/** Units a character counts for: septets, or UTF-16 code units (two octets each). */
function unitsOf(bytes: Buffer, encoding: SmppEncoding): number {
  return encoding === 'UCS-2' ? bytes.length / 2 : bytes.length;
}

/**
 * The text cut into parts of at most 153 septets or 67 UCS-2 units (160 / 70 when it fits in
 * one), never splitting an escape pair or a surrogate pair: the same count as the domain's
 * segments.
 */
export function splitText(text: string, encoding: SmppEncoding): Buffer[] {
  const characters = [...text].map((char) => encodeCharacter(char, encoding));
  const total = characters.reduce((sum, bytes) => sum + unitsOf(bytes, encoding), 0);
  if (total <= SINGLE_UNITS[encoding]) return [Buffer.concat(characters)];
  const parts: Buffer[] = [];
  let current: Buffer[] = [];
  let used = 0;
  for (const bytes of characters) {
    const units = unitsOf(bytes, encoding);
    if (used + units > PART_UNITS[encoding]) {
      parts.push(Buffer.concat(current));
      current = [];
      used = 0;
    }
    current.push(bytes);
    used += units;
  }
  parts.push(Buffer.concat(current));
  return parts;
}

/** The concatenation header of 3GPP TS 23.040: IEI 00 (8-bit reference), the reference, the count, the part. */
export function concatenationUdh(reference: number, parts: number, part: number): Buffer {
  return Buffer.from([0x05, 0x00, 0x03, reference & 0xff, parts, part]);
}

/** The submit_sm bodies of a message; `reference` is the same for all its parts, and on every attempt. */
export function submitBodies(text: string, encoding: SmppEncoding, mode: ConcatenationMode, reference: number): SubmitBody[] {
  const dataCoding = DATA_CODING[encoding];
  const pieces = splitText(text, encoding);
  if (pieces.length === 1) {
    return [{ part: 1, parts: 1, dataCoding, esmClass: 0, shortMessage: pieces[0]!, messagePayload: null }];
  }
  if (mode === 'payload') {
    return [{ part: 1, parts: 1, dataCoding, esmClass: 0, shortMessage: Buffer.alloc(0), messagePayload: Buffer.concat(pieces) }];
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
    if (element[0] === 0x00 && element.length >= 5) return { reference: element[2]!, parts: element[3]!, part: element[4]! };
    if (element[0] === 0x08 && element.length >= 6) return { reference: element.readUInt16BE(2), parts: element[4]!, part: element[5]! };
  }
  return null;
}
