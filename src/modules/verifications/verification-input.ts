import { z } from 'zod';
import { e164, numberFacts } from '../../lib/phone.js';
import { issue } from '../../lib/validation.js';

// What a verification's start and check take, as the service parses them: GraphQL's inputs and
// the /v1 document are made from these.

export const CODE_LENGTH = { min: 4, max: 10, default: 6 };
export const TTL_SECONDS = { min: 60, max: 3600, default: 600 };

export const startVerificationInput = z
  .strictObject({
    to: e164
      .refine(
        (digits) => numberFacts(digits).possible,
        issue('impossible_number', 'a length the numbering plan of its calling code has'),
      )
      .meta({ description: 'The number to send the code to' }),
    template: z
      .string()
      .min(1)
      .max(64)
      .meta({
        description:
          'A template of the account whose content holds `{{code}}`; a default text in the language of the number’s country when left out',
      })
      .nullish(),
    codeLength: z
      .number()
      .int()
      .min(CODE_LENGTH.min)
      .max(CODE_LENGTH.max)
      .meta({ description: `Digits of the code; ${CODE_LENGTH.default} when left out` })
      .nullish(),
    ttl: z
      .number()
      .int()
      .min(TTL_SECONDS.min)
      .max(TTL_SECONDS.max)
      .meta({
        description: `Seconds the code stays valid, and the message's validity; ${TTL_SECONDS.default} when left out`,
      })
      .nullish(),
  })
  .meta({ description: 'A one-time code to send' });

export type StartVerificationInput = z.output<typeof startVerificationInput>;

export const checkVerificationInput = z
  .strictObject({
    code: z
      .string()
      .regex(/^[0-9]{4,10}$/, { ...issue('invalid_format'), message: 'The code is 4 to 10 digits' })
      .meta({ description: 'The code the user entered: 4 to 10 digits' }),
  })
  .meta({ description: 'A code to check' });
