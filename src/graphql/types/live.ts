import { initContextCache } from '@pothos/core';
import type { GraphQLResolveInfo } from 'graphql';
import type { LiveEvent, MessageChange } from '../../modules/live/live-events.js';
import type { MessageFilter } from '../../modules/messages/message-queries.js';
import type { Builder } from '../builder.js';
import type { AccountContext, Context } from '../context.js';
import { subscriptionUpdateCost } from '../query-cost.js';
import type { MessageTypeRefs } from './messages.js';

/**
 * A subscription keeps one context for all its updates, and with it the loaders Pothos keeps per
 * context, which would answer every later update with what the first one read (a message's
 * replies as they were then): each update starts with loaders of its own.
 */
function readAfresh(context: Context): void {
  Object.assign(context, initContextCache());
}

const UPDATE_KINDS = ['status', 'reply'] as const;

/** The account's changes to the messages a subscriber asked for, one item per message. */
function messageChanges(filter: MessageFilter) {
  return (event: LiveEvent): MessageChange[] =>
    event.kind !== 'messages'
      ? []
      : event.messages.filter(
          (change) =>
            (!filter.campaignId || change.campaignId === filter.campaignId) &&
            (!filter.to || change.to === filter.to),
        );
}

/**
 * A campaign changes when its status does and when its messages move (its stats); one batch of
 * its messages makes one update, not one per message. The update is the event itself, which every
 * stream of the account shares, so that their reads of the campaign for it are shared too.
 */
function campaignChanges(id: string) {
  return (event: LiveEvent): LiveEvent[] => {
    if (event.kind === 'campaign') return event.id === id ? [event] : [];
    if (event.kind === 'messages')
      return event.messages.some((change) => change.campaignId === id) ? [event] : [];
    return [];
  };
}

/** Every change of the account's messages changes its statistics (a send, a status, a reply). */
function statsChanges(campaignId: string | null) {
  return (event: LiveEvent): LiveEvent[] =>
    event.kind === 'messages' &&
    (!campaignId || event.messages.some((change) => change.campaignId === campaignId))
      ? [event]
      : [];
}

/** The most often a statistics stream tells its dashboard to read again. */
export const STATS_UPDATE_INTERVAL_MS = 1_000;

function importJobChanges(id: string) {
  return (event: LiveEvent): LiveEvent[] => (event.kind === 'import' && event.id === id ? [event] : []);
}

/**
 * Which read of a row an update's selection needs: every selection of only the row's own fields
 * needs the same (Prisma reads them all), so the account's streams and aliases showing one update
 * share it; one that selects a relation (a campaign's template) reads with it.
 */
function readKey(id: string, query: object): string {
  return `${id} ${JSON.stringify(query)}`;
}

/** What every subscription hands the live service besides what it picks from the events. */
function streamOf(context: AccountContext, info: GraphQLResolveInfo) {
  return {
    accountId: context.accountId,
    stillAllowed: context.stillAuthenticated,
    cost: subscriptionUpdateCost(info),
    connectionClosed: context.connectionClosed,
  };
}

/**
 * Live updates over server-sent events (or any transport Yoga speaks for subscriptions). Each
 * stream carries only its account's rows, read when the update is delivered (once for every
 * stream delivering it at that moment); opening one takes one of the account's
 * SUBSCRIPTIONS_PER_ACCOUNT slots until it closes, and each update is charged to the account's
 * budget of live updates.
 */
export function addLiveTypes(builder: Builder, { messageStatus }: MessageTypeRefs) {
  builder.subscriptionType({
    authScopes: { account: true },
    description:
      'Live updates of the account’s messages, campaigns and imports, as they happen in any process.',
  });

  const updateKind = builder.enumType('MessageUpdateKind', {
    description: 'What happened to the message',
    values: {
      status: { value: UPDATE_KINDS[0], description: 'Its status moved (queued, sent, delivered or failed)' },
      reply: { value: UPDATE_KINDS[1], description: 'A reply to it arrived' },
    },
  });

  const messageUpdate = builder.objectRef<MessageChange>('MessageUpdate').implement({
    description: 'One change of one message, as it happened.',
    fields: (t) => ({
      kind: t.field({
        type: updateKind,
        description: 'A status change or a reply',
        resolve: (change) => (change.status ? 'status' : 'reply'),
      }),
      status: t.field({
        type: messageStatus,
        nullable: true,
        description: 'The status the message moved to; null for a reply',
        resolve: (change) => change.status,
      }),
      message: t.withAuth({ account: true }).prismaField({
        type: 'Message',
        description: 'The message as it is when the update is delivered (a later change may already show)',
        resolve: (query, change, _args, { accountId, services }) =>
          services.liveSubscriptions.readFor(change, readKey(change.id, query), () =>
            services.messageQueries.get(accountId, change.id, query),
          ),
      }),
    }),
  });

  builder.subscriptionField('messageUpdated', (t) =>
    t.withAuth({ account: true }).field({
      type: messageUpdate,
      description:
        'Every status change of the account’s messages and every reply to them, from their acceptance (queued) on; narrowed by campaign and recipient when given.',
      args: {
        campaign: t.arg.id({ description: 'Only the messages of this campaign' }),
        to: t.arg.string({
          description: 'Only the messages to this number (E.164 digits without the plus sign)',
        }),
      },
      subscribe: (_root, args, context, info) => {
        // Checked as the message list checks them: a `to` that is not a number is refused, not left to match nothing.
        const { filter } = context.services.messageQueries.parseListArgs({
          campaign: args.campaign,
          to: args.to,
        });
        return context.services.liveSubscriptions.subscribe({
          ...streamOf(context, info),
          pick: messageChanges(filter),
        });
      },
      resolve: (change, _args, context) => {
        readAfresh(context);
        return change;
      },
    }),
  );

  builder.subscriptionField('campaignUpdated', (t) =>
    t.withAuth({ account: true }).prismaField({
      type: 'Campaign',
      description:
        'The campaign each time its status or its stats change (a batch dispatched, its messages sent, delivered or failed).',
      args: { id: t.arg.id({ required: true, description: 'A campaign of the account' }) },
      subscribe: async (_root, { id }, context, info) => {
        await context.services.campaignRecords.get(context.accountId, id, { select: { id: true } });
        return context.services.liveSubscriptions.subscribe({
          ...streamOf(context, info),
          pick: campaignChanges(id),
        });
      },
      resolve: (query, event, { id }, context) => {
        readAfresh(context);
        const { accountId, services } = context;
        return services.liveSubscriptions.readFor(event, readKey(id, query), () =>
          services.campaignRecords.get(accountId, id, query),
        );
      },
    }),
  );

  addStatsSubscription(builder);

  builder.subscriptionField('importJobUpdated', (t) =>
    t.withAuth({ account: true }).prismaField({
      type: 'ImportJob',
      description: 'The import job each time its progress (`processed`) or its status changes.',
      args: { id: t.arg.id({ required: true, description: 'An import job of the account' }) },
      subscribe: async (_root, { id }, context, info) => {
        await context.services.contactImports.find(context.accountId, id, { select: { id: true } });
        return context.services.liveSubscriptions.subscribe({
          ...streamOf(context, info),
          pick: importJobChanges(id),
        });
      },
      resolve: (query, event, { id }, context) => {
        readAfresh(context);
        const { accountId, services } = context;
        return services.liveSubscriptions.readFor(event, readKey(id, query), () =>
          services.contactImports.find(accountId, id, query),
        );
      },
    }),
  );
}

function addStatsSubscription(builder: Builder) {
  const statsChange = builder.objectRef<{ at: Date }>('MessageStatsChange').implement({
    description: 'The account’s statistics changed: read messageStats (or deliveryTimes) again.',
    fields: (t) => ({
      at: t.expose('at', { type: 'DateTime', description: 'When the update was sent' }),
    }),
  });
  builder.subscriptionField('messageStatsChanged', (t) =>
    t.withAuth({ account: true }).field({
      type: statsChange,
      description: `Tells a dashboard that its numbers changed (a message accepted, moved or replied to), at most once every ${STATS_UPDATE_INTERVAL_MS / 1000} second: the changes meanwhile make one update.`,
      args: { campaign: t.arg.id({ description: 'Only changes of this campaign’s messages' }) },
      subscribe: async (_root, args, context, info) => {
        if (args.campaign)
          await context.services.campaignRecords.get(context.accountId, args.campaign, {
            select: { id: true },
          });
        return context.services.liveSubscriptions.subscribe({
          ...streamOf(context, info),
          pick: statsChanges(args.campaign ?? null),
          coalesceMs: STATS_UPDATE_INTERVAL_MS,
        });
      },
      resolve: (_event, _args, { services }) => ({ at: services.messageStats.clock.now() }),
    }),
  );
}
