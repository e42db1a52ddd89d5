import { z } from 'zod';
import { issue } from './validation.js';

/** E.164 digits without the plus sign: 7 to 15 digits, the first not 0. */
export const E164_DIGITS = /^[1-9][0-9]{6,14}$/;

export const e164 = z.string().refine((value) => E164_DIGITS.test(value), issue('invalid_e164'));

/**
 * A phone as people write it, made E.164 digits: spaces, dashes, dots, parentheses and a
 * leading `+` are dropped, then the E.164 rule applies.
 */
export const normalizedPhone = z
  .string()
  .transform((value) => value.trim().replace(/[\s\-.()]/g, '').replace(/^\+/, ''))
  .pipe(e164);
