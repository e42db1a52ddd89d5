import { createHmac, randomInt } from 'node:crypto';

// The code itself: drawn, kept as an HMAC, compared, and put into the text (or masked there).

/** A code of `length` decimal digits, each drawn from the operating system's CSPRNG. */
export function newCode(length: number): string {
  let code = '';
  for (let digit = 0; digit < length; digit++) code += String(randomInt(10));
  return code;
}

/**
 * What is stored of a code: its HMAC-SHA-256 under a key of the configuration, bound to the
 * verification's id, so a stolen table cannot be searched for codes without the key, and a
 * code's HMAC means nothing on another verification.
 */
export function codeHmac(key: Buffer, verificationId: string, code: string): string {
  return createHmac('sha256', key).update(`${verificationId}:${code}`).digest('hex');
}

/** `{{code}}`, spaces inside the braces allowed, as the templates write placeholders. */
const CODE_PLACEHOLDER = /\{\{\s*code\s*\}\}/g;

export function hasCodePlaceholder(content: string): boolean {
  return content.search(CODE_PLACEHOLDER) >= 0;
}

/**
 * The text with the code in it, for the carrier, and the same text with the code masked, which
 * is what Tern stores and shows. The mask has the code's length and is GSM-7, as digits are, so
 * both count the same segments.
 */
export function codeTexts(content: string, code: string): { text: string; masked: string } {
  return {
    text: content.replace(CODE_PLACEHOLDER, code),
    masked: content.replace(CODE_PLACEHOLDER, '*'.repeat(code.length)),
  };
}

/** The text without a template, by the language of the number's country; English elsewhere. */
const DEFAULT_TEXTS: Record<string, string> = {
  en: 'Your verification code is {{code}}',
  fr: 'Votre code de vérification est {{code}}',
  de: 'Ihr Bestätigungscode lautet {{code}}',
  es: 'Tu código de verificación es {{code}}',
  pt: 'O seu código de verificação é {{code}}',
  it: 'Il tuo codice di verifica è {{code}}',
  nl: 'Uw verificatiecode is {{code}}',
};

const LANGUAGE_OF_COUNTRY: Record<string, string> = {
  FR: 'fr',
  BE: 'fr',
  LU: 'fr',
  MC: 'fr',
  DE: 'de',
  AT: 'de',
  CH: 'de',
  LI: 'de',
  ES: 'es',
  MX: 'es',
  AR: 'es',
  CO: 'es',
  CL: 'es',
  PE: 'es',
  PT: 'pt',
  BR: 'pt',
  IT: 'it',
  SM: 'it',
  NL: 'nl',
};

export function defaultContent(country: string | null): string {
  const language = (country && LANGUAGE_OF_COUNTRY[country]) ?? 'en';
  return DEFAULT_TEXTS[language] ?? DEFAULT_TEXTS.en!;
}
