import { ValidationError } from '../../errors.js';
import type { PrismaClient } from '../../generated/prisma/client.js';
import type { SenderChoice } from '../senders/sender-choice.js';
import type { AcceptedRow } from './message-acceptance.js';

/**
 * The sender each message goes from, chosen before it is stored so that the answer shows it
 * (set on the message): its `from`, else the account's default sender or pool
 * (docs/messages.md, Which sender a message goes from), in one choice for the batch. A message
 * none of whose senders its country allows gets a 422 `no_compliant_sender`, on `from` when it
 * named one.
 */
export async function chooseSenders(
  senderChoice: SenderChoice,
  prisma: PrismaClient,
  messages: AcceptedRow[],
): Promise<(ValidationError | null)[]> {
  const senders = await senderChoice.chooseAll(
    prisma,
    messages.map(({ accountId, sender, to }) => ({ accountId, from: sender ?? null, to })),
  );
  return messages.map((message, index) => {
    const sender = senders[index]!;
    const named = message.sender ?? null;
    if (sender !== 'refused') {
      message.sender = sender;
      return null;
    }
    return new ValidationError(
      [{ field: named ? 'from' : 'to', issue: 'no_compliant_sender' }],
      named
        ? `from: ${named} cannot reach this number's country (its sender rules, or the countries the sender is approved for)`
        : 'No sender of the account may reach this number’s country: name a `from` it allows, or ask the operator for one',
    );
  });
}
