import { z } from 'zod';
import { normalizedPhone } from '../../phone.js';

/**
 * A contact's fields as the service bounds them; shared with the spreadsheet import, whose
 * parser thread loads this module without the database client the contact service needs.
 */
export const contactFields = {
  phone: normalizedPhone,
  name: z.string().trim().max(200).nullish(),
  email: z.string().trim().max(254).pipe(z.email()).nullish(),
  document: z.string().trim().max(64).nullish(),
  tags: z.array(z.string().trim().min(1).max(50)).max(20).nullish(),
};
