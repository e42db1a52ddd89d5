/** GSM 03.38 basic character set (the escape itself excluded): one septet each. */
const GSM7_BASIC = new Set(
  '@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞÆæßÉ !"#¤%&\'()*+,-./0123456789:;<=>?¡ABCDEFGHIJKLMNOPQRSTUVWXYZÄÖÑÜ§¿abcdefghijklmnopqrstuvwxyzäöñüà',
);
/** GSM 03.38 extension table: an escape and the character, two septets each. */
const GSM7_EXTENSION = new Set('^{}\\[~]|€\f');

export type Encoding = 'GSM-7' | 'UCS-2';

export interface TextAnalysis {
  encoding: Encoding;
  segments: number;
  /** Characters as a person counts them (Unicode code points). */
  characters: number;
  /** The distinct characters that force UCS-2, in order of appearance. */
  ucs2Characters: string[];
}

const SINGLE = { 'GSM-7': 160, 'UCS-2': 70 } as const;
const CONCATENATED = { 'GSM-7': 153, 'UCS-2': 67 } as const;

/** Septets (GSM-7) or UTF-16 code units (UCS-2) a character takes. */
function cost(char: string, encoding: Encoding): number {
  if (encoding === 'UCS-2') return char.length;
  return GSM7_EXTENSION.has(char) ? 2 : 1;
}

/**
 * Encoding and segment count as handsets and carriers see them: GSM-7 when every character is
 * in the basic set or its extension, else UCS-2 (where an emoji takes two units). A long message
 * is split into 153-septet or 67-unit parts, never splitting an escape pair or a surrogate pair.
 */
export function analyzeText(text: string): TextAnalysis {
  const chars = [...text];
  const ucs2Characters = [...new Set(chars.filter((char) => !GSM7_BASIC.has(char) && !GSM7_EXTENSION.has(char)))];
  const encoding: Encoding = ucs2Characters.length === 0 ? 'GSM-7' : 'UCS-2';
  const total = chars.reduce((sum, char) => sum + cost(char, encoding), 0);
  let segments = total === 0 ? 0 : 1;
  if (total > SINGLE[encoding]) {
    segments = 1;
    let used = 0;
    for (const char of chars) {
      const size = cost(char, encoding);
      if (used + size > CONCATENATED[encoding]) {
        segments += 1;
        used = 0;
      }
      used += size;
    }
  }
  return { encoding, segments, characters: chars.length, ucs2Characters };
}
