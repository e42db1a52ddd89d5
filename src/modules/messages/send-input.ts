import { z } from 'zod';
import type { Clock } from '../../lib/clock.js';
import { e164, numberFacts } from '../../lib/phone.js';
import { issue } from '../../lib/validation.js';
import { namedSenderInput } from '../senders/account-senders.js';
import { messageText } from './message-text.js';
import { messageValidityInput, sendAtInput } from './message-timing.js';

// What a single send takes, as its service parses it: GraphQL's input and the /v1 document are made from it.

export const IDEMPOTENCY_WINDOW_MS = 24 * 60 * 60 * 1000;

/** A single send's fields; `sendAt` is checked against the clock, so the schema is made with it. */
export function sendInput(clock: Clock) {
  return z
    .object({
      to: e164.refine(
        (digits) => numberFacts(digits).possible,
        issue('impossible_number', 'a length the numbering plan of its calling code has'),
      ),
      message: messageText.meta({ description: 'The text to send' }),
      from: namedSenderInput
        .meta({
          description:
            'A sender the operator approved for the account (settings list them); left out: the account’s default_sender, else a sender of its pool (the one this number last got), else the carrier’s — always one the number’s country allows',
        })
        .nullish(),
      campaign: z
        .string()
        .min(1)
        .max(64)
        .meta({ description: 'A campaign of the account to link the message to' })
        .nullish(),
      sendAt: sendAtInput(clock).nullish(),
      validity: messageValidityInput
        .meta({
          description:
            'Seconds from send_at (or now) until the message fails as expired if no carrier took it; the account’s message_validity when left out',
        })
        .nullish(),
      respectSendWindow: z
        .boolean()
        .meta({
          description: 'Wait for the account’s send window, as campaign messages do; false when left out',
        })
        .nullish(),
    })
    .meta({ description: 'One SMS to send' });
}

export type SendInput = z.output<ReturnType<typeof sendInput>>;

export const idempotencyKeyInput = z.string().min(1).max(255).meta({
  description:
    'Makes a retry safe: the same key and request within 24 hours answer the first message again (Idempotent-Replayed: true) and send nothing new; the same key with another request is a 422 reused',
});
