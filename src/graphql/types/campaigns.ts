import { queryFromInfo } from '@pothos/plugin-prisma';
import { InvalidStateError, NotFoundError, ValidationError } from '../../errors.js';
import { type PageRequest, parsePage } from '../../lib/pagination.js';
import {
  type CampaignFilter,
  campaignInputs,
  campaignListInput,
} from '../../modules/campaigns/campaign-records.js';
import type { CampaignStats } from '../../modules/campaigns/campaign-stats.js';
import {
  CAMPAIGN_ACTIONS,
  CAMPAIGN_STATUS_MEANINGS,
  describeTransition,
} from '../../modules/campaigns/campaign-transitions.js';
import { contactListInput } from '../../modules/contacts/contacts.js';
import type { Builder } from '../builder.js';
import type { InputOptions } from '../schema.js';
import { argsFromZod, inputTypeFromZod } from '../zod-input.js';
import { idArg, inputArg, meaningsAsValues } from './args.js';
import type { ContactTypeRefs } from './contacts.js';
import type { MessageTypeRefs } from './messages.js';
import { addPageType, pageArgs } from './page.js';
import { cursorArgs } from './page-info.js';
import type { SendWindowTypeRefs } from './send-window.js';

type CampaignStatusRef = ReturnType<typeof addCampaignObject>;

interface CampaignPageShape {
  accountId: string;
  filter: CampaignFilter;
  page: PageRequest;
}

export function addCampaignTypes(
  builder: Builder,
  refs: { messages: MessageTypeRefs; contacts: ContactTypeRefs; windows: SendWindowTypeRefs },
  options: InputOptions,
) {
  const campaignStatus = addCampaignObject(builder, refs);
  addCampaignQueries(builder, campaignStatus);
  addCampaignMutations(builder, refs.windows, options);
}

/** A campaign's counts, by what its contacts and messages are now. */
function addCampaignStats(builder: Builder) {
  return builder.objectRef<CampaignStats>('CampaignStats').implement({
    description:
      "contacts: the campaign's contacts; queued … failed: its messages by current status; replied: its messages with a reply; optedOut: its contacts whose number opted out (read now; dispatch skips them)",
    fields: (t) => ({
      contacts: t.exposeInt('contacts', { description: "The campaign's contacts" }),
      queued: t.exposeInt('queued', { description: 'Its messages now queued' }),
      sent: t.exposeInt('sent', { description: 'Its messages now sent (not yet reported)' }),
      delivered: t.exposeInt('delivered', { description: 'Its messages delivered' }),
      failed: t.exposeInt('failed', { description: 'Its messages failed' }),
      replied: t.exposeInt('replied', { description: 'Its messages with a reply' }),
      optedOut: t.exposeInt('optedOut', { description: 'Its contacts whose number opted out' }),
      waiting: t.exposeInt('waiting', {
        description: "Its messages waiting for their contact's send window to open (status scheduled)",
      }),
    }),
  });
}

/** The Campaign object, its status and its stats. */
function addCampaignObject(
  builder: Builder,
  {
    messages: { messageStatus, message },
    contacts: { contactRef },
    windows,
  }: { messages: MessageTypeRefs; contacts: ContactTypeRefs; windows: SendWindowTypeRefs },
) {
  const campaignStatus = builder.enumType('CampaignStatus', {
    description: 'Where a campaign is in its life; its mutations say which status each one leaves from',
    values: meaningsAsValues(CAMPAIGN_STATUS_MEANINGS),
  });

  const stats = addCampaignStats(builder);

  builder.prismaObject('Campaign', {
    description: 'A template sent to a list of contacts, in batches',
    fields: (t) => ({
      id: t.exposeID('id', { description: 'Its id, prefixed by its kind' }),
      name: t.exposeString('name', { description: 'Its name, as given' }),
      description: t.exposeString('description', { description: 'Free text; empty when not given' }),
      webhook: t.exposeString('webhook', {
        nullable: true,
        description: "A URL that receives this campaign's events, beside the account's webhooks",
      }),
      delay: t.exposeFloat('delay', { description: 'Seconds between batches' }),
      templateId: t.exposeID('templateId', { nullable: true, description: 'The template it sends' }),
      template: t.relation('template', { nullable: true, description: 'The template it sends' }),
      batchSize: t.exposeInt('batchSize', { description: 'Messages per batch' }),
      sendAt: t.expose('sendAt', {
        type: 'DateTime',
        nullable: true,
        description: 'When a scheduled campaign starts',
      }),
      sendWindow: t.field({
        type: windows.sendWindow,
        nullable: true,
        description: "Its own send window; null: the account's",
        select: { sendWindow: true },
        resolve: (campaign) => windows.resolveWindow(campaign.sendWindow),
      }),
      validity: t.exposeInt('validity', {
        nullable: true,
        description: "Seconds each message may wait for its hand-over; null: the account's message_validity",
      }),
      from: t.exposeString('sender', {
        nullable: true,
        description:
          'The approved sender every message goes from; null: each message’s is chosen (the account’s default_sender, else its pool)',
      }),
      status: t.expose('status', { type: campaignStatus, description: 'Where it is in its life' }),
      pausedReason: t.exposeString('pausedReason', {
        nullable: true,
        description:
          'Why the service paused it: `quota_exceeded` when the account reached a segment quota (resume it once there is room); null otherwise',
      }),
      createdAt: t.expose('createdAt', { type: 'DateTime', description: 'When it was created' }),
      updatedAt: t.expose('updatedAt', { type: 'DateTime', description: 'When it last changed' }),
      startedAt: t.expose('startedAt', {
        type: 'DateTime',
        nullable: true,
        description: 'When it first ran',
      }),
      finishedAt: t.expose('finishedAt', {
        type: 'DateTime',
        nullable: true,
        description: 'When it finished or was cancelled',
      }),
      stats: t.loadable({
        type: stats,
        description: 'Counted for every campaign of a list at once',
        load: (ids: string[], { services }) => services.campaignStatsReader.read(ids),
        resolve: (campaign) => campaign.id,
      }),
      // Pages of every campaign of a list at once, each paged in SQL (one loader per place in the query).
      contacts: t.withAuth({ account: true }).loadableList({
        type: contactRef,
        description: 'In the order they were added; a page of at most 100',
        args: { ...argsFromZod(t.arg, contactListInput), ...pageArgs(t.arg) },
        byPath: true,
        resolve: (campaign) => campaign.id,
        load: (campaignIds: string[], context, args, info) =>
          context.services.contacts.pagesByCampaign(
            context.accountId,
            campaignIds,
            context.services.contacts.parseFilter(args),
            parsePage(args),
            queryFromInfo({ context, info }),
          ),
      }),
      messages: t.withAuth({ account: true }).loadableList({
        type: message,
        description: 'Newest first; a page of at most 100',
        args: {
          status: t.arg({ type: messageStatus, description: 'Only messages in this status' }),
          ...pageArgs(t.arg),
        },
        byPath: true,
        resolve: (campaign) => campaign.id,
        load: (campaignIds: string[], context, args, info) =>
          context.services.messagePages.byCampaign(
            context.accountId,
            campaignIds,
            args.status ? { status: args.status } : {},
            parsePage(args),
            queryFromInfo({ context, info }),
          ),
      }),
    }),
  });

  return campaignStatus;
}

function addCampaignQueries(builder: Builder, campaignStatus: CampaignStatusRef) {
  const campaignPage = addPageType(builder, 'CampaignPage', 'Campaign', 'Newest first', {
    nodes: (query, shape: CampaignPageShape, { services }) =>
      services.campaignRecords.list(shape.accountId, shape.filter, shape.page, query),
    total: (shape, { services }) => services.campaignRecords.count(shape.accountId, shape.filter),
  });

  builder.queryField('campaign', (t) =>
    t.withAuth({ account: true }).prismaField({
      type: 'Campaign',
      description: 'One campaign of the account',
      errors: { types: [NotFoundError] },
      args: { id: idArg(t.arg) },
      resolve: (query, _root, { id }, { accountId, services }) =>
        services.campaignRecords.get(accountId, id, query),
    }),
  );

  builder.queryField('campaigns', (t) =>
    t.withAuth({ account: true }).field({
      type: campaignPage,
      description: "The account's campaigns",
      errors: { types: [ValidationError] },
      args: {
        ...argsFromZod(t.arg, campaignListInput, { status: campaignStatus }),
        ...pageArgs(t.arg),
        ...cursorArgs(t),
      },
      resolve: (_root, args, { accountId, services }) => ({
        accountId,
        ...services.campaignRecords.parseListArgs(args),
      }),
    }),
  );
}

function addCampaignMutations(builder: Builder, windows: SendWindowTypeRefs, options: InputOptions) {
  const deleted = builder.objectRef<{ id: string; deleted: true }>('DeletedCampaign').implement({
    description: 'A deleted campaign',
    fields: (t) => ({
      id: t.exposeID('id', { description: 'Its id, prefixed by its kind' }),
      deleted: t.exposeBoolean('deleted', { description: 'Always true' }),
    }),
  });

  const inputs = campaignInputs(options.allowInsecureWebhooks);
  const types = { template: 'ID', sendWindow: windows.sendWindowInput } as const;
  const createInput = inputTypeFromZod(builder, 'CreateCampaignInput', inputs.create, types);
  const updateInput = inputTypeFromZod(builder, 'UpdateCampaignInput', inputs.update, types);

  builder.mutationField('createCampaign', (t) =>
    t.withAuth({ account: true }).prismaField({
      type: 'Campaign',
      description: 'A new campaign: scheduled, to start by `startCampaign` or at its `sendAt`',
      errors: { types: [ValidationError] },
      args: {
        input: inputArg(t.arg, createInput),
      },
      resolve: (query, _root, { input }, { accountId, services }) =>
        services.campaignRecords.create(accountId, input, query),
    }),
  );

  builder.mutationField('updateCampaign', (t) =>
    t.withAuth({ account: true }).prismaField({
      type: 'Campaign',
      description: "Changes a campaign's fields",
      errors: { types: [ValidationError, NotFoundError] },
      args: {
        id: idArg(t.arg),
        input: inputArg(t.arg, updateInput),
      },
      resolve: (query, _root, { id, input }, { accountId, services }) =>
        services.campaignRecords.update(accountId, id, input, query),
    }),
  );

  builder.mutationField('deleteCampaign', (t) =>
    t.withAuth({ account: true }).field({
      type: deleted,
      description: 'Deletes a campaign: it is read as not found from then on; its messages stay',
      errors: { types: [NotFoundError] },
      args: { id: idArg(t.arg) },
      resolve: (_root, { id }, { accountId, services }) => services.campaignRecords.delete(accountId, id),
    }),
  );

  for (const action of CAMPAIGN_ACTIONS) {
    builder.mutationField(`${action}Campaign`, (t) =>
      t.withAuth({ account: true }).prismaField({
        type: 'Campaign',
        description: describeTransition(action),
        errors: { types: [NotFoundError, InvalidStateError, ValidationError] },
        args: { id: idArg(t.arg) },
        resolve: async (query, _root, { id }, { accountId, services }) => {
          await services.campaignLifecycle.act(accountId, id, action);
          return services.campaignRecords.get(accountId, id, query);
        },
      }),
    );
  }
}
