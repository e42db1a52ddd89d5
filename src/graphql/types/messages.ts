import { queryFromInfo } from '@pothos/plugin-prisma';
import { z } from 'zod';
import { encodingOf, type TextAnalysis } from '../../carriers/encoding.js';
import {
  FraudBlockedError,
  InvalidStateError,
  NotFoundError,
  QuotaExceededError,
  ValidationError,
} from '../../errors.js';
import { systemClock } from '../../lib/clock.js';
import { type PageRequest, parsePage } from '../../lib/pagination.js';
import type { MessageAcceptance } from '../../modules/messages/message-acceptance.js';
import {
  type MessageFilter,
  messageListInput,
  previewInput as previewMessageSchema,
} from '../../modules/messages/message-queries.js';
import { MESSAGE_STATUS_MEANINGS } from '../../modules/messages/message-transitions.js';
import { idempotencyKeyInput, sendInput as sendMessageSchema } from '../../modules/messages/send-input.js';
import type { Builder } from '../builder.js';
import { argsFromZod, inputTypeFromZod } from '../zod-input.js';
import { idArg, inputArg, meaningsAsValues } from './args.js';
import { addPageType, pageArgs } from './page.js';
import { cursorArgs } from './page-info.js';

interface MessagePageShape {
  accountId: string;
  filter: MessageFilter;
  page: PageRequest;
}

export type MessageTypeRefs = ReturnType<typeof addMessageTypes>;
type MessageStatusRef = ReturnType<typeof addMessageStatus>;

export function addMessageTypes(builder: Builder) {
  const refs = addMessageObjects(builder);
  addMessageFields(builder, refs);
  return { messageStatus: refs.messageStatus, message: refs.message };
}

function addMessageStatus(builder: Builder) {
  return builder.enumType('MessageStatus', {
    description:
      'scheduled (waiting for its time or window) → queued → sent (taken by the carrier) → delivered or failed; a scheduled message may be cancelled',
    values: meaningsAsValues(MESSAGE_STATUS_MEANINGS),
  });
}

function addMessageObjects(builder: Builder) {
  const messageStatus = addMessageStatus(builder);

  const messageError = builder.objectRef<{ code: string; message: string }>('MessageError').implement({
    description: 'Why a message failed',
    fields: (t) => ({
      code: t.exposeString('code', { description: "The carrier's or Tern's error code" }),
      message: t.exposeString('message', { description: 'For people' }),
    }),
  });

  const reply = builder.prismaObject('InboundMessage', {
    description: 'A message received from a recipient: a reply.',
    fields: (t) => ({
      id: t.exposeID('id', { description: 'Its id, prefixed by its kind' }),
      from: t.exposeString('from', { description: 'The sender: E.164 digits without the plus sign' }),
      text: t.exposeString('text', { description: 'The text as received' }),
      messageId: t.exposeID('messageId', {
        nullable: true,
        description: 'The outbound message it replies to',
      }),
      receivedAt: t.expose('receivedAt', { type: 'DateTime', description: 'When the carrier passed it on' }),
    }),
  });

  const message = builder.prismaObject('Message', {
    description: 'An outbound SMS and where it is on its way',
    fields: (t) => ({
      id: t.exposeID('id', { description: 'Its id, prefixed by its kind' }),
      to: t.exposeString('to', { description: 'The recipient: E.164 digits without the plus sign' }),
      text: t.exposeString('text', { description: 'The text as sent' }),
      status: t.expose('status', { type: messageStatus, description: 'Where it is on its way' }),
      campaignId: t.exposeID('campaignId', {
        nullable: true,
        description: 'The campaign it was sent for, if any',
      }),
      segments: t.exposeInt('segments', { description: 'SMS parts the text takes (each billed)' }),
      encoding: t.string({
        description: '`GSM-7` or `UCS-2`',
        select: { encoding: true },
        resolve: (message) => encodingOf(message.encoding),
      }),
      error: t.field({
        type: messageError,
        nullable: true,
        description: 'Why it failed; null unless `failed`',
        select: { errorCode: true, errorMessage: true },
        resolve: (message) =>
          message.errorCode ? { code: message.errorCode, message: message.errorMessage ?? '' } : null,
      }),
      createdAt: t.expose('createdAt', { type: 'DateTime', description: 'When it was created' }),
      from: t.exposeString('sender', {
        nullable: true,
        description:
          'The sender it goes from, chosen as it was accepted: the `from` it named, else the account’s default_sender or a sender of its pool; else (once sent) the carrier’s; null when none was configured',
      }),
      carrier: t.exposeString('carrier', {
        nullable: true,
        description:
          'The name of the carrier it was handed to (as the operator named it); null until one took it',
      }),
      sentAt: t.expose('sentAt', {
        type: 'DateTime',
        nullable: true,
        description: 'When the carrier took it',
      }),
      deliveredAt: t.expose('deliveredAt', {
        type: 'DateTime',
        nullable: true,
        description: 'When it was reported delivered',
      }),
      failedAt: t.expose('failedAt', { type: 'DateTime', nullable: true, description: 'When it failed' }),
      sendAt: t.expose('sendAt', {
        type: 'DateTime',
        nullable: true,
        description: 'When it was asked to go (send_at); null: at once',
      }),
      waitsUntil: t.field({
        type: 'DateTime',
        nullable: true,
        description: WAITS_UNTIL,
        select: { status: true, releaseAt: true },
        resolve: (message) => (message.status === 'scheduled' ? message.releaseAt : null),
      }),
      expiresAt: t.expose('expiresAt', {
        type: 'DateTime',
        nullable: true,
        description:
          'When it fails as `expired` if no carrier has taken it by then: its validity after it may first go out (its send_at, its window’s opening, or its acceptance)',
      }),
      cancelledAt: t.expose('cancelledAt', {
        type: 'DateTime',
        nullable: true,
        description: 'When it was cancelled',
      }),
      // Replies of every message of a list at once, each message's page read in SQL.
      replies: t.withAuth({ account: true }).loadableList({
        type: reply,
        description: 'Oldest first; a page of at most 100',
        args: { ...pageArgs(t.arg) },
        byPath: true,
        resolve: (sent) => sent.id,
        load: (messageIds: string[], context, args, info) =>
          context.services.messagePages.repliesByMessage(
            context.accountId,
            messageIds,
            parsePage(args),
            queryFromInfo({ context, info }),
          ),
      }),
    }),
  });

  return { messageStatus, message, acceptance: addMessageAcceptance(builder, messageStatus) };
}

function addMessageAcceptance(builder: Builder, messageStatus: MessageStatusRef) {
  return builder.objectRef<MessageAcceptance>('MessageAcceptance').implement({
    description:
      'A message as accepted for sending; an idempotent replay answers the first acceptance again.',
    fields: (t) => ({
      id: t.exposeID('id', { description: 'Its id, prefixed by its kind' }),
      status: t.field({
        type: messageStatus,
        description: 'Its status when accepted (later ones: read `message`)',
        resolve: (accepted) => accepted.status,
      }),
      to: t.exposeString('to', { description: 'The recipient, normalized' }),
      campaignId: t.exposeID('campaignId', { nullable: true, description: 'The linked campaign, if any' }),
      sendAt: t.expose('sendAt', {
        type: 'DateTime',
        nullable: true,
        description: 'When it is to go, as asked; null: now',
      }),
      waitsUntil: t.expose('waitsUntil', { type: 'DateTime', nullable: true, description: WAITS_UNTIL }),
      from: t.exposeString('from', {
        nullable: true,
        description:
          'The sender it goes from: the `from` it named, else the account’s default_sender or a sender of its pool; null: the carrier’s',
      }),
      replayed: t.exposeBoolean('replayed', {
        description: 'True when this answers an earlier request with the same Idempotency-Key',
      }),
      message: t.withAuth({ account: true }).prismaField({
        type: 'Message',
        description: 'The message as it is now',
        resolve: (query, accepted, _args, { accountId, services }) =>
          services.messageQueries.get(accountId, accepted.id, query),
      }),
    }),
  });
}

const WAITS_UNTIL =
  'While `scheduled`: when it is due to go, its send_at or the opening of its send window; null otherwise (and while its campaign is paused)';

function addMessageFields(
  builder: Builder,
  { messageStatus, message, acceptance }: ReturnType<typeof addMessageObjects>,
) {
  const page = addPageType(builder, 'MessagePage', 'Message', 'Newest first', {
    nodes: (query, shape: MessagePageShape, { services }) =>
      services.messageQueries.list(shape.accountId, shape.filter, shape.page, query),
    total: (shape, { services }) => services.messageQueries.count(shape.accountId, shape.filter),
  });

  const preview = builder.objectRef<TextAnalysis>('TextPreview').implement({
    description: 'How a text would be sent',
    fields: (t) => ({
      encoding: t.exposeString('encoding', { description: '`GSM-7` or `UCS-2`' }),
      segments: t.exposeInt('segments', { description: 'SMS parts it would take' }),
      characters: t.exposeInt('characters', { description: 'Its length in characters' }),
      ucs2Characters: t.exposeStringList('ucs2Characters', {
        description: 'The characters that force UCS-2',
      }),
    }),
  });

  const sendInput = inputTypeFromZod(builder, 'SendMessageInput', sendMessageSchema(systemClock), {
    campaign: 'ID',
  });
  const previewInput = inputTypeFromZod(builder, 'PreviewMessageInput', previewMessageSchema);

  builder.queryField('message', (t) =>
    t.withAuth({ account: true }).prismaField({
      type: 'Message',
      description: 'One message of the account',
      errors: { types: [NotFoundError] },
      args: { id: idArg(t.arg) },
      resolve: (query, _root, { id }, { accountId, services }) =>
        services.messageQueries.get(accountId, id, query),
    }),
  );

  builder.queryField('messages', (t) =>
    t.withAuth({ account: true }).field({
      type: page,
      description: "The account's messages",
      errors: { types: [ValidationError] },
      args: {
        ...argsFromZod(t.arg, messageListInput, { status: messageStatus, campaign: 'ID' }),
        ...pageArgs(t.arg),
        ...cursorArgs(t),
      },
      resolve: (_root, args, { accountId, services }) => ({
        accountId,
        ...services.messageQueries.parseListArgs(args),
      }),
    }),
  );

  builder.queryField('previewMessage', (t) =>
    t.withAuth({ account: true }).field({
      type: preview,
      description: 'Encoding and segments a text would take; sends nothing.',
      errors: { types: [ValidationError] },
      args: {
        input: inputArg(t.arg, previewInput),
      },
      resolve: (_root, { input }, { services }) => services.messageQueries.preview(input),
    }),
  );

  builder.mutationField('cancelMessage', (t) =>
    t.withAuth({ account: true }).prismaField({
      type: 'Message',
      description:
        'Cancels a message still scheduled (waiting for its sendAt or its window); InvalidStateError once it is on its way',
      errors: { types: [NotFoundError, InvalidStateError] },
      args: { id: idArg(t.arg) },
      resolve: async (query, _root, { id }, { accountId, services }) => {
        await services.messageCancellation.cancel(accountId, id);
        return services.messageQueries.get(accountId, id, query);
      },
    }),
  );

  builder.mutationField('sendMessage', (t) =>
    t.withAuth({ account: true }).field({
      type: acceptance,
      description:
        'Sends one SMS: stores it as queued and hands it to a worker. Over a segment quota it answers QuotaExceededError, refused by the fraud guard FraudBlockedError, so each of several aliased sends answers its own result',
      errors: { types: [ValidationError, QuotaExceededError, FraudBlockedError] },
      args: {
        input: inputArg(t.arg, sendInput),
        ...argsFromZod(t.arg, z.object({ idempotencyKey: idempotencyKeyInput.nullish() })),
      },
      resolve: async (_root, args, context, info) => {
        await context.fieldRateLimits.sendMessage({ args, context, info });
        return context.services.messageSending.send(context.accountId, args.input, args.idempotencyKey);
      },
    }),
  );

  return { messageStatus, message };
}
