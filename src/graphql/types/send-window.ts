import {
  type SendWindow,
  sendWindowInput,
  storedWindow,
  WEEKDAYS,
} from '../../modules/settings/send-window.js';
import type { Builder } from '../builder.js';
import { inputTypeFromZod } from '../zod-input.js';

const DAY_NAMES = ['Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday', 'Sunday'];

export type SendWindowTypeRefs = ReturnType<typeof addSendWindowTypes>;

/** A send window as the account's settings and a campaign show and take it. */
export function addSendWindowTypes(builder: Builder) {
  const weekday = builder.enumType('Weekday', {
    description: 'A day of the week, as a send window names it',
    values: Object.fromEntries(
      WEEKDAYS.map((day, index) => [day, { value: day, description: DAY_NAMES[index] }]),
    ) as Record<SendWindow['days'][number], { value: SendWindow['days'][number]; description: string }>,
  });
  const sendWindow = builder.objectRef<SendWindow>('SendWindow').implement({
    description:
      'When messages may go, in the recipient’s local time (the contact’s time zone, else the account’s)',
    fields: (t) => ({
      days: t.field({
        type: [weekday],
        description: 'The days it opens on',
        resolve: (window) => window.days,
      }),
      start: t.exposeString('start', { description: 'When it opens, HH:MM' }),
      end: t.exposeString('end', { description: 'When it closes, HH:MM; before `start`: the next day' }),
    }),
  });
  const input = inputTypeFromZod(builder, 'SendWindowInput', sendWindowInput, { days: [weekday] });
  return {
    sendWindow,
    sendWindowInput: input,
    /** A stored window as the field answers it. */
    resolveWindow: (stored: unknown) => storedWindow(stored),
  };
}
