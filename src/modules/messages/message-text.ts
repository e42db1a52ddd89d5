import { z } from 'zod';
import { isUnstorableText } from '../../lib/validation.js';

export const MAX_MESSAGE_CHARACTERS = 1600;

/** A message's text: 1 to 1600 characters as people count them (an emoji is one), storable as sent. */
export const messageText = z
  .string()
  .superRefine((text, context) => {
    const characters = [...text].length;
    if (characters < 1)
      context.addIssue({ code: 'custom', params: { issue: 'too_short' }, message: 'The message is empty' });
    // The request layers refuse such text in variables; a literal in a GraphQL document reaches here.
    if (isUnstorableText(text)) {
      context.addIssue({
        code: 'custom',
        params: { issue: 'invalid_value' },
        message: 'The message contains a NUL character or an unpaired surrogate',
      });
    }
    if (characters > MAX_MESSAGE_CHARACTERS) {
      context.addIssue({
        code: 'custom',
        params: { issue: 'too_long' },
        message: `The message is over ${MAX_MESSAGE_CHARACTERS} characters`,
      });
    }
  })
  // JSON Schema counts a string's length in code points, as this rule does.
  .meta({ minLength: 1, maxLength: MAX_MESSAGE_CHARACTERS });
