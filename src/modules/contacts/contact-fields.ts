import { z } from 'zod';
import { normalizedPhone } from '../../lib/phone.js';
import { timeZoneInput } from '../../lib/time-zone.js';

/**
 * A contact's fields as the service bounds them; shared with the spreadsheet import, whose
 * parser thread loads this module without the database client the contact service needs.
 */
export const contactFields = {
  phone: normalizedPhone.meta({
    description: 'A phone number; spaces, dashes, dots, parentheses and a leading + are removed',
  }),
  name: z.string().trim().max(200).meta({ description: 'A name, for {{name}}' }).nullish(),
  // The format is said here: JSON Schema of what a client sends stops at the pipe's input side.
  email: z
    .string()
    .trim()
    .max(254)
    .pipe(z.email())
    .meta({ description: 'An e-mail address', format: 'email' })
    .nullish(),
  document: z.string().trim().max(64).meta({ description: 'An identity document number' }).nullish(),
  tags: z
    .array(z.string().trim().min(1).max(50))
    .max(20)
    .meta({ description: 'Tags, to filter contacts by' })
    .nullish(),
  timezone: timeZoneInput
    .meta({ description: "The time zone its send window is read in; the account's when left out" })
    .nullish(),
};
