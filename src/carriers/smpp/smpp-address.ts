/** Type of number and numbering plan of SMPP 3.4 (5.2.5, 5.2.6), for the values Tern sends. */
export const TON = { unknown: 0, international: 1, networkSpecific: 3, alphanumeric: 5 } as const;
export const NPI = { unknown: 0, isdn: 1 } as const;

export interface SmppAddress {
  ton: number;
  npi: number;
  addr: string;
}

/** Digits only, at most this long: a short code rather than a full number. */
const SHORT_CODE_MAX_DIGITS = 8;

/**
 * The sender as the SMSC must be told it: a full number (9+ digits, an optional '+') is
 * international, TON 1 / NPI 1 (E.164) without the '+'; up to 8 digits is a short code, TON 3
 * (network specific) / NPI 0; anything with a letter is alphanumeric, TON 5 / NPI 0 — the
 * defaults Infobip documents and smppex's autodetection uses. No sender at all is sent empty
 * with TON 0 / NPI 0.
 */
export function sourceAddress(sender: string | null): SmppAddress {
  // No sender configured anywhere: the SMSC puts its own default.
  if (!sender) return { ton: TON.unknown, npi: NPI.unknown, addr: '' };
  const digits = sender.startsWith('+') ? sender.slice(1) : sender;
  if (/^\d+$/.test(digits)) {
    return digits.length <= SHORT_CODE_MAX_DIGITS
      ? { ton: TON.networkSpecific, npi: NPI.unknown, addr: digits }
      : { ton: TON.international, npi: NPI.isdn, addr: digits };
  }
  return { ton: TON.alphanumeric, npi: NPI.unknown, addr: sender };
}

/** Tern's recipients are E.164 numbers without '+': always international. */
export function destinationAddress(to: string): SmppAddress {
  return { ton: TON.international, npi: NPI.isdn, addr: to };
}

/** A mobile's number from deliver_sm's source_addr, in Tern's form (digits, no '+'). */
export function inboundNumber(sourceAddr: string): string {
  return sourceAddr.trim().replace(/^\+/, '');
}
