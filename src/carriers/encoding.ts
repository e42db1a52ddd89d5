import { MessageEncoding } from '../generated/prisma/enums.js';

/**
 * GSM 03.38 and the SMS segment sizes: which encoding a text takes, how many segments it is,
 * and where a carrier cuts it into parts. The API's counts and the carrier's parts both come
 * from here, so they cannot disagree.
 */

/** The default alphabet in code order: a character's index is its septet. 0x1B is the escape, no character. */
export const GSM7_ALPHABET =
  '@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞ\x1bÆæßÉ !"#¤%&\'()*+,-./0123456789:;<=>?¡ABCDEFGHIJKLMNOPQRSTUVWXYZÄÖÑÜ§¿abcdefghijklmnopqrstuvwxyzäöñüà';
export const GSM7_ESCAPE = 0x1b;
/** The extension table: each of these is the escape followed by this septet, two septets in all. */
export const GSM7_EXTENSION: Readonly<Record<string, number>> = {
  '\f': 0x0a,
  '^': 0x14,
  '{': 0x28,
  '}': 0x29,
  '\\': 0x2f,
  '[': 0x3c,
  '~': 0x3d,
  ']': 0x3e,
  '|': 0x40,
  '€': 0x65,
};
/** The septet of each character of the default alphabet. */
export const GSM7_CODES: ReadonlyMap<string, number> = new Map(
  [...GSM7_ALPHABET].map((char, code) => [char, code] as const).filter(([, code]) => code !== GSM7_ESCAPE),
);

export type Encoding = 'GSM-7' | 'UCS-2';

/** An encoding as the messages table stores it (Prisma's enum names cannot hold a dash). */
export const STORED_ENCODING = {
  'GSM-7': MessageEncoding.GSM_7,
  'UCS-2': MessageEncoding.UCS_2,
} as const satisfies Record<Encoding, MessageEncoding>;

export function encodingOf(stored: MessageEncoding): Encoding {
  return stored === MessageEncoding.GSM_7 ? 'GSM-7' : 'UCS-2';
}

/** Units of one SMS (septets, or UTF-16 code units), and of each part of a long one: its header takes the rest. */
export const SEGMENT_UNITS = {
  single: { 'GSM-7': 160, 'UCS-2': 70 },
  part: { 'GSM-7': 153, 'UCS-2': 67 },
} as const;

export interface TextAnalysis {
  encoding: Encoding;
  segments: number;
  /** Characters as a person counts them (Unicode code points). */
  characters: number;
  /** The distinct characters that force UCS-2, in order of appearance. */
  ucs2Characters: string[];
}

export function isGsm7Character(char: string): boolean {
  return GSM7_CODES.has(char) || GSM7_EXTENSION[char] !== undefined;
}

/** Septets (GSM-7: two for an extension character) or UTF-16 code units (UCS-2: two for an emoji) a character takes. */
export function characterUnits(char: string, encoding: Encoding): number {
  if (encoding === 'UCS-2') return char.length;
  return GSM7_EXTENSION[char] === undefined ? 1 : 2;
}

/**
 * The characters of a text (code points) cut into the parts a carrier sends: one when they fit
 * in a single SMS, otherwise parts of at most 153 septets or 67 units, never splitting an
 * escape pair or a surrogate pair.
 */
export function segmentCharacters(chars: readonly string[], encoding: Encoding): string[][] {
  const units = chars.map((char) => characterUnits(char, encoding));
  if (units.reduce((sum, size) => sum + size, 0) <= SEGMENT_UNITS.single[encoding]) return [[...chars]];
  const parts: string[][] = [[]];
  let used = 0;
  chars.forEach((char, index) => {
    if (used + units[index]! > SEGMENT_UNITS.part[encoding]) {
      parts.push([]);
      used = 0;
    }
    parts.at(-1)!.push(char);
    used += units[index]!;
  });
  return parts;
}

/**
 * Encoding and segment count as handsets and carriers see them: GSM-7 when every character is
 * in the default alphabet or its extension, else UCS-2.
 */
export function analyzeText(text: string): TextAnalysis {
  const chars = [...text];
  const ucs2Characters = [...new Set(chars.filter((char) => !isGsm7Character(char)))];
  const encoding: Encoding = ucs2Characters.length === 0 ? 'GSM-7' : 'UCS-2';
  const segments = chars.length === 0 ? 0 : segmentCharacters(chars, encoding).length;
  return { encoding, segments, characters: chars.length, ucs2Characters };
}
