import { NotFoundError, ValidationError } from '../../errors.js';
import { queryFromInfo } from '@pothos/plugin-prisma';
import { MessageStatus } from '../../generated/prisma/enums.js';
import type { MessageFilter } from '../../modules/messages/message-queries.js';
import type { MessageAcceptance } from '../../modules/messages/message-sending.js';
import { encodingOf, type TextAnalysis } from '../../modules/messages/encoding.js';
import { parsePage, type PageRequest } from '../../pagination.js';
import type { Builder } from '../builder.js';
import { addPageType } from './page.js';

interface MessagePageShape {
  accountId: string;
  filter: MessageFilter;
  page: PageRequest;
}

export type MessageTypeRefs = ReturnType<typeof addMessageTypes>;

export function addMessageTypes(builder: Builder) {
  const messageStatus = builder.enumType(MessageStatus, {
    name: 'MessageStatus',
    description: 'queued → sent (taken by the carrier) → delivered or failed',
  });

  const messageError = builder.objectRef<{ code: string; message: string }>('MessageError').implement({
    fields: (t) => ({ code: t.exposeString('code'), message: t.exposeString('message') }),
  });

  const reply = builder.prismaObject('InboundMessage', {
    description: 'A message received from a recipient: a reply.',
    fields: (t) => ({
      id: t.exposeID('id'),
      from: t.exposeString('from'),
      text: t.exposeString('text'),
      messageId: t.exposeID('messageId', { nullable: true, description: 'The outbound message it replies to' }),
      receivedAt: t.expose('receivedAt', { type: 'DateTime' }),
    }),
  });

  const message = builder.prismaObject('Message', {
    fields: (t) => ({
      id: t.exposeID('id'),
      to: t.exposeString('to'),
      text: t.exposeString('text'),
      status: t.expose('status', { type: messageStatus }),
      campaignId: t.exposeID('campaignId', { nullable: true }),
      segments: t.exposeInt('segments'),
      encoding: t.string({
        description: '`GSM-7` or `UCS-2`',
        select: { encoding: true },
        resolve: (message) => encodingOf(message.encoding),
      }),
      error: t.field({
        type: messageError,
        nullable: true,
        select: { errorCode: true, errorMessage: true },
        resolve: (message) => (message.errorCode ? { code: message.errorCode, message: message.errorMessage ?? '' } : null),
      }),
      createdAt: t.expose('createdAt', { type: 'DateTime' }),
      sentAt: t.expose('sentAt', { type: 'DateTime', nullable: true }),
      deliveredAt: t.expose('deliveredAt', { type: 'DateTime', nullable: true }),
      failedAt: t.expose('failedAt', { type: 'DateTime', nullable: true }),
      // Replies of every message of a list at once, each message's page read in SQL.
      replies: t.withAuth({ account: true }).loadableList({
        type: reply,
        description: 'Oldest first; a page of at most 100',
        args: { page: t.arg.int(), perPage: t.arg.int() },
        byPath: true,
        resolve: (sent) => sent.id,
        load: (messageIds: string[], context, args, info) =>
          context.services.messagePages.repliesByMessage(context.accountId, messageIds, parsePage(args), queryFromInfo({ context, info })),
      }),
    }),
  });

  const acceptance = builder.objectRef<MessageAcceptance>('MessageAcceptance').implement({
    description: 'A message as accepted for sending; an idempotent replay answers the first acceptance again.',
    fields: (t) => ({
      id: t.exposeID('id'),
      status: t.field({ type: messageStatus, resolve: (accepted) => accepted.status }),
      to: t.exposeString('to'),
      campaignId: t.exposeID('campaignId', { nullable: true }),
      replayed: t.exposeBoolean('replayed', { description: 'True when this answers an earlier request with the same Idempotency-Key' }),
      message: t.withAuth({ account: true }).prismaField({
        type: 'Message',
        resolve: (query, accepted, _args, { accountId, services }) => services.messages.get(accountId, accepted.id, query),
      }),
    }),
  });

  const page = addPageType(builder, 'MessagePage', 'Message', 'Newest first', {
    nodes: (query, shape: MessagePageShape, { services }) => services.messages.list(shape.accountId, shape.filter, shape.page, query),
    total: (shape, { services }) => services.messages.count(shape.accountId, shape.filter),
  });

  const preview = builder.objectRef<TextAnalysis>('TextPreview').implement({
    fields: (t) => ({
      encoding: t.exposeString('encoding', { description: '`GSM-7` or `UCS-2`' }),
      segments: t.exposeInt('segments'),
      characters: t.exposeInt('characters'),
      ucs2Characters: t.exposeStringList('ucs2Characters', { description: 'The characters that force UCS-2' }),
    }),
  });

  const sendInput = builder.inputType('SendMessageInput', {
    fields: (t) => ({
      to: t.string({ description: 'E.164 digits without the plus sign' }),
      message: t.string({ description: '1..1600 characters' }),
      campaign: t.id({ description: 'A campaign of the account to link the message to' }),
    }),
  });

  const previewInput = builder.inputType('PreviewMessageInput', {
    fields: (t) => ({ message: t.string() }),
  });

  builder.queryField('message', (t) =>
    t.withAuth({ account: true }).prismaField({
      type: 'Message',
      errors: { types: [NotFoundError] },
      args: { id: t.arg.id({ required: true }) },
      resolve: (query, _root, { id }, { accountId, services }) => services.messages.get(accountId, id, query),
    }),
  );

  builder.queryField('messages', (t) =>
    t.withAuth({ account: true }).field({
      type: page,
      errors: { types: [ValidationError] },
      args: {
        status: t.arg({ type: messageStatus }),
        campaign: t.arg.id(),
        to: t.arg.string(),
        page: t.arg.int(),
        perPage: t.arg.int(),
      },
      resolve: (_root, args, { accountId, services }) => ({ accountId, ...services.messages.parseListArgs(args) }),
    }),
  );

  builder.queryField('previewMessage', (t) =>
    t.withAuth({ account: true }).field({
      type: preview,
      description: 'Encoding and segments a text would take; sends nothing.',
      errors: { types: [ValidationError] },
      args: { input: t.arg({ type: previewInput, required: true }) },
      resolve: (_root, { input }, { services }) => services.messages.preview(input),
    }),
  );

  builder.mutationField('sendMessage', (t) =>
    t.withAuth({ account: true }).field({
      type: acceptance,
      errors: { types: [ValidationError] },
      args: {
        input: t.arg({ type: sendInput, required: true }),
        idempotencyKey: t.arg.string({ description: 'The same key within 24 h answers the first acceptance again and sends nothing' }),
      },
      resolve: async (_root, args, context, info) => {
        await context.fieldRateLimits.sendMessage({ args, context, info });
        return context.services.messageSending.send(context.accountId, args.input, args.idempotencyKey);
      },
    }),
  );

  return { messageStatus, message };
}
