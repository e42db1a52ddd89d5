import { queryFromInfo } from '@pothos/plugin-prisma';
import { NotFoundError, ValidationError } from '../../errors.js';
import { type PageRequest, parsePage } from '../../lib/pagination.js';
import { SUBSCRIBABLE_EVENTS } from '../../modules/webhooks/webhook-events.js';
import {
  type DeletedWebhook,
  type RegisteredWebhook,
  type ReplayOutcome,
  replayInput as replayWebhookInput,
  webhookInputs,
} from '../../modules/webhooks/webhooks.js';
import type { Builder } from '../builder.js';
import type { InputOptions } from '../schema.js';
import { inputTypeFromZod } from '../zod-input.js';
import { idArg, inputArg } from './args.js';
import { addPageType, pageArgs } from './page.js';
import { cursorArgs } from './page-info.js';

interface WebhookPageShape {
  accountId: string;
  page: PageRequest;
}

interface DeliveryPageShape {
  webhookId: string;
  page: PageRequest;
}

const EVENT_KIND_MEANING: Record<(typeof SUBSCRIBABLE_EVENTS)[number], string> = {
  'message.delivered': 'a message was reported delivered',
  'message.failed': 'a message failed',
  'message.replied': 'a recipient replied to a message',
  'verification.approved': 'a verification was approved with its code',
  'verification.expired': 'a verification expired unapproved',
  'account.country_blocked': 'the fraud guard blocked a country for the account (its cap was reached)',
};

const KINDS = SUBSCRIBABLE_EVENTS.map((kind) => `\`${kind}\``).join(', ');

export function addWebhookTypes(builder: Builder, options: InputOptions) {
  const refs = addWebhookObjects(builder);
  addWebhookFields(builder, refs, options);
}

function addWebhookObjects(builder: Builder) {
  const eventKind = builder.enumType('WebhookEventKind', {
    description:
      'A kind of event a webhook can subscribe to; the callback body and /v1 write it with a dot (`message_delivered` is `message.delivered`)',
    values: Object.fromEntries(
      SUBSCRIBABLE_EVENTS.map((kind) => [
        kind.replace('.', '_'),
        { value: kind, description: `\`${kind}\`: ${EVENT_KIND_MEANING[kind]}` },
      ]),
    ),
    // The /v1 layer takes the dotted names: it reads these fields as text and leaves them to the domain's check.
    extensions: { restAsText: true },
  });

  const delivery = builder.prismaObject('WebhookDelivery', {
    description: 'One attempt to deliver an event to a webhook',
    fields: (t) => ({
      id: t.exposeID('id', { description: 'Its id, prefixed by its kind' }),
      eventId: t.exposeID('eventId', { description: 'The event delivered: the `id` of the callback body' }),
      eventType: t.string({
        description: `The event's kind: one of ${KINDS} or \`webhook.ping\``,
        select: { event: { select: { type: true } } },
        resolve: (delivery) => delivery.event.type,
      }),
      url: t.exposeString('url', { description: 'Where the attempt went' }),
      attempt: t.exposeInt('attempt', { description: '1-based; at most 5 per delivery' }),
      statusCode: t.exposeInt('statusCode', {
        nullable: true,
        description: "The receiver's HTTP status; null when it gave none",
      }),
      durationMs: t.exposeInt('durationMs', {
        nullable: true,
        description: 'How long the receiver took; null when the attempt did not finish',
      }),
      error: t.exposeString('error', {
        nullable: true,
        description: 'Why the attempt failed; null when it succeeded',
      }),
      createdAt: t.expose('createdAt', { type: 'DateTime', description: 'When the attempt started' }),
    }),
  });

  builder.prismaObject('Webhook', {
    description: 'A URL that receives signed callbacks for the kinds of event it subscribes to',
    fields: (t) => ({
      id: t.exposeID('id', { description: 'Its id, prefixed by its kind' }),
      url: t.exposeString('url', { description: 'Where callbacks are POSTed' }),
      events: t.exposeStringList('events', { description: `Subscribed kinds: any of ${KINDS}` }),
      createdAt: t.expose('createdAt', { type: 'DateTime', description: 'When it was created' }),
      updatedAt: t.expose('updatedAt', { type: 'DateTime', description: 'When it last changed' }),
      // The logs of every webhook of a list at once, each page read in SQL.
      deliveries: t.withAuth({ account: true }).loadableList({
        type: delivery,
        description: 'The delivery log, newest first',
        args: { ...pageArgs(t.arg) },
        byPath: true,
        resolve: (webhook) => webhook.id,
        load: (webhookIds: string[], context, args, info) =>
          context.services.webhooks.deliveryPagesByWebhook(
            context.accountId,
            webhookIds,
            parsePage(args),
            queryFromInfo({ context, info }),
          ),
      }),
    }),
  });

  const registration = builder.objectRef<RegisteredWebhook>('WebhookRegistration').implement({
    description: "A webhook as registered, with the account's signing secret",
    fields: (t) => ({
      id: t.exposeID('id', { description: 'Its id, prefixed by its kind' }),
      url: t.exposeString('url', { description: 'Where callbacks are POSTed' }),
      events: t.exposeStringList('events', { description: `Subscribed kinds: any of ${KINDS}` }),
      secret: t.exposeString('secret', {
        description: 'The HMAC key of every callback of the account (the whole string, as UTF-8)',
      }),
      createdAt: t.field({
        type: 'DateTime',
        description: 'When it was created',
        resolve: (webhook) => webhook.createdAt,
      }),
      updatedAt: t.field({
        type: 'DateTime',
        description: 'When it last changed',
        resolve: (webhook) => webhook.updatedAt,
      }),
    }),
  });

  const secret = builder.objectRef<{ secret: string }>('WebhookSecret').implement({
    description: "The account's new webhook signing secret",
    fields: (t) => ({
      secret: t.exposeString('secret', { description: 'The HMAC key of every callback from now on' }),
    }),
  });

  const replay = builder.objectRef<ReplayOutcome>('WebhookReplay').implement({
    description: 'What a replay queued',
    fields: (t) => ({
      webhookId: t.exposeID('webhookId', { description: 'The webhook the events go to' }),
      events: t.exposeInt('events', { description: 'Events queued for delivery again' }),
    }),
  });

  const deleted = builder.objectRef<DeletedWebhook>('DeletedWebhook').implement({
    description: 'A deleted webhook',
    fields: (t) => ({
      id: t.exposeID('id', { description: 'Its id, prefixed by its kind' }),
      deleted: t.exposeBoolean('deleted', { description: 'Always true' }),
    }),
  });

  return { eventKind, registration, secret, replay, deleted };
}

function addWebhookFields(
  builder: Builder,
  { eventKind, registration, secret, replay, deleted }: ReturnType<typeof addWebhookObjects>,
  options: InputOptions,
) {
  const webhookPage = addPageType(builder, 'WebhookPage', 'Webhook', 'Newest first', {
    nodes: (query, shape: WebhookPageShape, { services }) =>
      services.webhooks.list(shape.accountId, shape.page, query),
    total: (shape, { services }) => services.webhooks.count(shape.accountId),
  });

  const deliveryPage = addPageType(builder, 'WebhookDeliveryPage', 'WebhookDelivery', 'Newest first', {
    nodes: (query, shape: DeliveryPageShape, { services }) =>
      services.webhooks.listDeliveries(shape.webhookId, shape.page, query),
    total: (shape, { services }) => services.webhooks.countDeliveries(shape.webhookId),
  });

  const inputs = webhookInputs(options.allowInsecureWebhooks);
  const registerInput = inputTypeFromZod(builder, 'RegisterWebhookInput', inputs.register, {
    events: [eventKind],
  });
  const updateInput = inputTypeFromZod(builder, 'UpdateWebhookInput', inputs.update, { events: [eventKind] });
  const replayInput = inputTypeFromZod(builder, 'ReplayWebhookInput', replayWebhookInput, { event: 'ID' });

  builder.queryField('webhook', (t) =>
    t.withAuth({ account: true }).prismaField({
      type: 'Webhook',
      description: 'One webhook of the account',
      errors: { types: [NotFoundError] },
      args: { id: idArg(t.arg) },
      resolve: (query, _root, { id }, { accountId, services }) => services.webhooks.get(accountId, id, query),
    }),
  );

  builder.queryField('webhooks', (t) =>
    t.withAuth({ account: true }).field({
      type: webhookPage,
      description: "The account's webhooks",
      errors: { types: [ValidationError] },
      args: { ...pageArgs(t.arg), ...cursorArgs(t) },
      resolve: (_root, args, { accountId }) => ({ accountId, page: parsePage(args) }),
    }),
  );

  builder.queryField('webhookDeliveries', (t) =>
    t.withAuth({ account: true }).field({
      type: deliveryPage,
      description: 'The delivery log of a webhook, newest first',
      errors: { types: [ValidationError, NotFoundError] },
      args: {
        webhook: t.arg.id({ required: true, description: 'The webhook' }),
        ...pageArgs(t.arg),
        ...cursorArgs(t),
      },
      resolve: (_root, args, { accountId, services }) =>
        services.webhooks.parseDeliveryArgs(accountId, args.webhook, args),
    }),
  );

  builder.mutationField('registerWebhook', (t) =>
    t.withAuth({ account: true }).field({
      type: registration,
      description:
        'Pings the URL with a signed webhook.ping and registers it if it answers 2xx (else ValidationError url unreachable)',
      errors: { types: [ValidationError] },
      args: {
        input: inputArg(t.arg, registerInput),
      },
      resolve: (_root, { input }, { accountId, services }) => services.webhooks.register(accountId, input),
    }),
  );

  builder.mutationField('updateWebhook', (t) =>
    t.withAuth({ account: true }).prismaField({
      type: 'Webhook',
      description: 'Changes the URL or the kinds of event of a webhook',
      errors: { types: [ValidationError, NotFoundError] },
      args: {
        id: idArg(t.arg),
        input: inputArg(t.arg, updateInput),
      },
      resolve: (query, _root, { id, input }, { accountId, services }) =>
        services.webhooks.update(accountId, id, input, query),
    }),
  );

  builder.mutationField('deleteWebhook', (t) =>
    t.withAuth({ account: true }).field({
      type: deleted,
      description: 'Stops every delivery to the webhook, pending retries included',
      errors: { types: [NotFoundError] },
      args: { id: idArg(t.arg) },
      resolve: (_root, { id }, { accountId, services }) => services.webhooks.delete(accountId, id),
    }),
  );

  builder.mutationField('rotateWebhookSecret', (t) =>
    t.withAuth({ account: true }).field({
      type: secret,
      description:
        'A new signing secret for the account; the next attempt of every delivery is signed with it',
      resolve: async (_root, _args, { accountId, services }) => ({
        secret: await services.webhooks.rotateSecret(accountId),
      }),
    }),
  );

  builder.mutationField('replayWebhook', (t) =>
    t.withAuth({ account: true }).field({
      type: replay,
      description: 'Delivers past events to the webhook again, with their original id and body, newly signed',
      errors: { types: [ValidationError, NotFoundError] },
      args: {
        id: idArg(t.arg),
        input: inputArg(t.arg, replayInput),
      },
      resolve: (_root, { id, input }, { accountId, services }) =>
        services.webhooks.replay(accountId, id, input),
    }),
  );
}
