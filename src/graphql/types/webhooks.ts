import { NotFoundError, ValidationError } from '../../errors.js';
import { SUBSCRIBABLE_EVENTS } from '../../modules/webhooks/webhook-events.js';
import type { DeletedWebhook, RegisteredWebhook, ReplayOutcome } from '../../modules/webhooks/webhooks.service.js';
import { queryFromInfo } from '@pothos/plugin-prisma';
import { parsePage, type PageRequest } from '../../pagination.js';
import type { Builder } from '../builder.js';
import { addPageType } from './page.js';

interface WebhookPageShape {
  accountId: string;
  page: PageRequest;
}

interface DeliveryPageShape {
  webhookId: string;
  page: PageRequest;
}

const KINDS = SUBSCRIBABLE_EVENTS.map((kind) => `\`${kind}\``).join(', ');

export function addWebhookTypes(builder: Builder) {
  const delivery = builder.prismaObject('WebhookDelivery', {
    description: 'One attempt to deliver an event to a webhook',
    fields: (t) => ({
      id: t.exposeID('id'),
      eventId: t.exposeID('eventId'),
      eventType: t.string({ select: { event: { select: { type: true } } }, resolve: (delivery) => delivery.event.type }),
      url: t.exposeString('url', { description: 'Where the attempt went' }),
      attempt: t.exposeInt('attempt', { description: '1-based; at most 5 per delivery' }),
      statusCode: t.exposeInt('statusCode', { nullable: true, description: 'The receiver\'s HTTP status; null when it gave none' }),
      durationMs: t.exposeInt('durationMs', { nullable: true }),
      error: t.exposeString('error', { nullable: true, description: 'Why the attempt failed; null when it succeeded' }),
      createdAt: t.expose('createdAt', { type: 'DateTime', description: 'When the attempt started' }),
    }),
  });

  builder.prismaObject('Webhook', {
    fields: (t) => ({
      id: t.exposeID('id'),
      url: t.exposeString('url'),
      events: t.exposeStringList('events', { description: `Subscribed kinds: any of ${KINDS}` }),
      createdAt: t.expose('createdAt', { type: 'DateTime' }),
      updatedAt: t.expose('updatedAt', { type: 'DateTime' }),
      // The logs of every webhook of a list at once, each page read in SQL.
      deliveries: t.withAuth({ account: true }).loadableList({
        type: delivery,
        description: 'The delivery log, newest first',
        args: { page: t.arg.int(), perPage: t.arg.int() },
        byPath: true,
        resolve: (webhook) => webhook.id,
        load: (webhookIds: string[], context, args, info) =>
          context.services.webhooks.deliveryPagesByWebhook(context.accountId, webhookIds, parsePage(args), queryFromInfo({ context, info })),
      }),
    }),
  });

  const registration = builder.objectRef<RegisteredWebhook>('WebhookRegistration').implement({
    description: 'A webhook as registered, with the account\'s signing secret',
    fields: (t) => ({
      id: t.exposeID('id'),
      url: t.exposeString('url'),
      events: t.exposeStringList('events'),
      secret: t.exposeString('secret', { description: 'The HMAC key of every callback of the account (the whole string, as UTF-8)' }),
      createdAt: t.field({ type: 'DateTime', resolve: (webhook) => webhook.createdAt }),
      updatedAt: t.field({ type: 'DateTime', resolve: (webhook) => webhook.updatedAt }),
    }),
  });

  const secret = builder.objectRef<{ secret: string }>('WebhookSecret').implement({
    fields: (t) => ({ secret: t.exposeString('secret') }),
  });

  const replay = builder.objectRef<ReplayOutcome>('WebhookReplay').implement({
    fields: (t) => ({
      webhookId: t.exposeID('webhookId'),
      events: t.exposeInt('events', { description: 'Events queued for delivery again' }),
    }),
  });

  const deleted = builder.objectRef<DeletedWebhook>('DeletedWebhook').implement({
    fields: (t) => ({ id: t.exposeID('id'), deleted: t.exposeBoolean('deleted') }),
  });

  const webhookPage = addPageType(builder, 'WebhookPage', 'Webhook', 'Newest first', {
    nodes: (query, shape: WebhookPageShape, { services }) => services.webhooks.list(shape.accountId, shape.page, query),
    total: (shape, { services }) => services.webhooks.count(shape.accountId),
  });

  const deliveryPage = addPageType(builder, 'WebhookDeliveryPage', 'WebhookDelivery', 'Newest first', {
    nodes: (query, shape: DeliveryPageShape, { services }) => services.webhooks.listDeliveries(shape.webhookId, shape.page, query),
    total: (shape, { services }) => services.webhooks.countDeliveries(shape.webhookId),
  });

  const registerInput = builder.inputType('RegisterWebhookInput', {
    fields: (t) => ({
      url: t.string({ description: 'An https URL (http only with WEBHOOK_ALLOW_INSECURE); it must answer a signed webhook.ping with a 2xx' }),
      events: t.stringList({ description: `At least one of ${KINDS}` }),
    }),
  });

  const updateInput = builder.inputType('UpdateWebhookInput', {
    fields: (t) => ({
      url: t.string({ description: 'A new URL is pinged as at registration' }),
      events: t.stringList(),
    }),
  });

  const replayInput = builder.inputType('ReplayWebhookInput', {
    description: 'Exactly one of `since` and `event`',
    fields: (t) => ({
      since: t.string({ description: 'ISO 8601 time, at most 7 days back: every subscribed event since then' }),
      event: t.id({ description: 'One event of the account' }),
    }),
  });

  builder.queryField('webhook', (t) =>
    t.withAuth({ account: true }).prismaField({
      type: 'Webhook',
      errors: { types: [NotFoundError] },
      args: { id: t.arg.id({ required: true }) },
      resolve: (query, _root, { id }, { accountId, services }) => services.webhooks.get(accountId, id, query),
    }),
  );

  builder.queryField('webhooks', (t) =>
    t.withAuth({ account: true }).field({
      type: webhookPage,
      errors: { types: [ValidationError] },
      args: { page: t.arg.int(), perPage: t.arg.int() },
      resolve: (_root, args, { accountId }) => ({ accountId, page: parsePage(args) }),
    }),
  );

  builder.queryField('webhookDeliveries', (t) =>
    t.withAuth({ account: true }).field({
      type: deliveryPage,
      description: 'The delivery log of a webhook, newest first',
      errors: { types: [ValidationError, NotFoundError] },
      args: { webhook: t.arg.id({ required: true }), page: t.arg.int(), perPage: t.arg.int() },
      resolve: (_root, args, { accountId, services }) => services.webhooks.parseDeliveryArgs(accountId, args.webhook, args),
    }),
  );

  builder.mutationField('registerWebhook', (t) =>
    t.withAuth({ account: true }).field({
      type: registration,
      description: 'Pings the URL with a signed webhook.ping and registers it if it answers 2xx (else ValidationError url unreachable)',
      errors: { types: [ValidationError] },
      args: { input: t.arg({ type: registerInput, required: true }) },
      resolve: (_root, { input }, { accountId, services }) => services.webhooks.register(accountId, input),
    }),
  );

  builder.mutationField('updateWebhook', (t) =>
    t.withAuth({ account: true }).prismaField({
      type: 'Webhook',
      errors: { types: [ValidationError, NotFoundError] },
      args: { id: t.arg.id({ required: true }), input: t.arg({ type: updateInput, required: true }) },
      resolve: (query, _root, { id, input }, { accountId, services }) => services.webhooks.update(accountId, id, input, query),
    }),
  );

  builder.mutationField('deleteWebhook', (t) =>
    t.withAuth({ account: true }).field({
      type: deleted,
      description: 'Stops every delivery to the webhook, pending retries included',
      errors: { types: [NotFoundError] },
      args: { id: t.arg.id({ required: true }) },
      resolve: (_root, { id }, { accountId, services }) => services.webhooks.delete(accountId, id),
    }),
  );

  builder.mutationField('rotateWebhookSecret', (t) =>
    t.withAuth({ account: true }).field({
      type: secret,
      description: 'A new signing secret for the account; the next attempt of every delivery is signed with it',
      resolve: async (_root, _args, { accountId, services }) => ({ secret: await services.webhooks.rotateSecret(accountId) }),
    }),
  );

  builder.mutationField('replayWebhook', (t) =>
    t.withAuth({ account: true }).field({
      type: replay,
      description: 'Delivers past events to the webhook again, with their original id and body, newly signed',
      errors: { types: [ValidationError, NotFoundError] },
      args: { id: t.arg.id({ required: true }), input: t.arg({ type: replayInput, required: true }) },
      resolve: (_root, { id, input }, { accountId, services }) => services.webhooks.replay(accountId, id, input),
    }),
  );
}
