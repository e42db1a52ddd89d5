import { ConflictError, InvalidStateError, NotFoundError, ValidationError } from '../../errors.js';
import { CampaignStatus } from '../../generated/prisma/enums.js';
import type { CampaignFilter } from '../../modules/campaigns/campaign-records.js';
import type { CampaignStats } from '../../modules/campaigns/campaign-stats.js';
import { CAMPAIGN_ACTIONS, describeTransition } from '../../modules/campaigns/campaign-transitions.js';
import type { ContactFilter } from '../../modules/contacts/contacts.service.js';
import { queryFromInfo } from '@pothos/plugin-prisma';
import { parsePage, type PageRequest } from '../../pagination.js';
import type { Builder } from '../builder.js';
import { addPageType } from './page.js';
import type { MessageTypeRefs } from './messages.js';

interface CampaignPageShape {
  accountId: string;
  filter: CampaignFilter;
  page: PageRequest;
}

interface ContactPageShape {
  accountId: string;
  campaignId: string;
  filter: ContactFilter;
  page: PageRequest;
}

export function addCampaignTypes(builder: Builder, { messageStatus, message }: MessageTypeRefs) {
  const campaignStatus = builder.enumType(CampaignStatus, { name: 'CampaignStatus' });

  const stats = builder.objectRef<CampaignStats>('CampaignStats').implement({
    description:
      'contacts: the campaign\'s contacts; queued … failed: its messages by current status; replied: its messages with a reply; optedOut: its contacts whose number opted out (read now; dispatch skips them)',
    fields: (t) => ({
      contacts: t.exposeInt('contacts'),
      queued: t.exposeInt('queued'),
      sent: t.exposeInt('sent'),
      delivered: t.exposeInt('delivered'),
      failed: t.exposeInt('failed'),
      replied: t.exposeInt('replied'),
      optedOut: t.exposeInt('optedOut'),
    }),
  });

  const contactRef = builder.prismaObject('Contact', {
    fields: (t) => ({
      id: t.exposeID('id'),
      campaignId: t.exposeID('campaignId'),
      phone: t.exposeString('phone'),
      name: t.exposeString('name', { nullable: true }),
      email: t.exposeString('email', { nullable: true }),
      document: t.exposeString('document', { nullable: true }),
      tags: t.exposeStringList('tags'),
      createdAt: t.expose('createdAt', { type: 'DateTime' }),
      // One message per contact and campaign (a unique index), so the list holds one at most.
      messages: t.relation('messages', { description: 'The campaign message sent to this contact, once dispatched', complexity: { field: 1, multiplier: 1 } }),
    }),
  });

  builder.prismaObject('Campaign', {
    fields: (t) => ({
      id: t.exposeID('id'),
      name: t.exposeString('name'),
      description: t.exposeString('description'),
      webhook: t.exposeString('webhook', { nullable: true }),
      delay: t.exposeFloat('delay', { description: 'Seconds between batches' }),
      templateId: t.exposeID('templateId', { nullable: true }),
      template: t.relation('template', { nullable: true }),
      batchSize: t.exposeInt('batchSize'),
      sendAt: t.expose('sendAt', { type: 'DateTime', nullable: true }),
      status: t.expose('status', { type: campaignStatus }),
      createdAt: t.expose('createdAt', { type: 'DateTime' }),
      updatedAt: t.expose('updatedAt', { type: 'DateTime' }),
      startedAt: t.expose('startedAt', { type: 'DateTime', nullable: true }),
      finishedAt: t.expose('finishedAt', { type: 'DateTime', nullable: true }),
      stats: t.loadable({
        type: stats,
        description: 'Counted for every campaign of a list at once',
        load: (ids: string[], { services }) => services.campaignStats.read(ids),
        resolve: (campaign) => campaign.id,
      }),
      // Pages of every campaign of a list at once, each paged in SQL (one loader per place in the query).
      contacts: t.withAuth({ account: true }).loadableList({
        type: contactRef,
        description: 'In the order they were added; a page of at most 100',
        args: { tag: t.arg.string(), page: t.arg.int(), perPage: t.arg.int() },
        byPath: true,
        resolve: (campaign) => campaign.id,
        load: (campaignIds: string[], context, args, info) =>
          context.services.contacts.pagesByCampaign(
            context.accountId,
            campaignIds,
            args.tag ? { tag: args.tag } : {},
            parsePage(args),
            queryFromInfo({ context, info }),
          ),
      }),
      messages: t.withAuth({ account: true }).loadableList({
        type: message,
        description: 'Newest first; a page of at most 100',
        args: { status: t.arg({ type: messageStatus }), page: t.arg.int(), perPage: t.arg.int() },
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

  const campaignPage = addPageType(builder, 'CampaignPage', 'Campaign', 'Newest first', {
    nodes: (query, shape: CampaignPageShape, { services }) => services.campaigns.list(shape.accountId, shape.filter, shape.page, query),
    total: (shape, { services }) => services.campaigns.count(shape.accountId, shape.filter),
  });

  const contactPage = addPageType(builder, 'ContactPage', 'Contact', 'In the order they were added', {
    nodes: (query, shape: ContactPageShape, { services }) => services.contacts.list(shape.accountId, shape.campaignId, shape.filter, shape.page, query),
    total: (shape, { services }) => services.contacts.count(shape.accountId, shape.campaignId, shape.filter),
  });

  const deleted = builder.objectRef<{ id: string; deleted: true }>('DeletedCampaign').implement({
    fields: (t) => ({ id: t.exposeID('id'), deleted: t.exposeBoolean('deleted') }),
  });

  const campaignInput = (name: string, description: string) =>
    builder.inputType(name, {
      description,
      fields: (t) => ({
        name: t.string({ description: '1..120 characters' }),
        description: t.string({ description: 'Up to 2000 characters' }),
        webhook: t.string({ description: 'An https URL that receives this campaign\'s events' }),
        delay: t.float({ description: 'Seconds between batches, 0..86400' }),
        template: t.id({ description: 'A template of the account' }),
        batchSize: t.int({ description: 'Messages per batch, 1..10000' }),
        sendAt: t.string({ description: 'ISO 8601 time at which a scheduled campaign starts' }),
      }),
    });
  const createInput = campaignInput('CreateCampaignInput', 'A new campaign; `name` is required');
  const updateInput = campaignInput('UpdateCampaignInput', 'Any subset of the campaign\'s fields');

  const contactInput = builder.inputType('AddContactInput', {
    fields: (t) => ({
      phone: t.string({ description: 'Digits; spaces, dashes, dots, parentheses and a leading + are removed' }),
      name: t.string(),
      email: t.string(),
      document: t.string(),
      tags: t.stringList(),
    }),
  });

  builder.queryField('campaign', (t) =>
    t.withAuth({ account: true }).prismaField({
      type: 'Campaign',
      errors: { types: [NotFoundError] },
      args: { id: t.arg.id({ required: true }) },
      resolve: (query, _root, { id }, { accountId, services }) => services.campaigns.get(accountId, id, query),
    }),
  );

  builder.queryField('campaigns', (t) =>
    t.withAuth({ account: true }).field({
      type: campaignPage,
      errors: { types: [ValidationError] },
      args: { status: t.arg({ type: campaignStatus }), page: t.arg.int(), perPage: t.arg.int() },
      resolve: (_root, args, { accountId, services }) => ({ accountId, ...services.campaigns.parseListArgs(args) }),
    }),
  );

  builder.queryField('contacts', (t) =>
    t.withAuth({ account: true }).field({
      type: contactPage,
      errors: { types: [ValidationError, NotFoundError] },
      args: { campaign: t.arg.id({ required: true }), tag: t.arg.string(), page: t.arg.int(), perPage: t.arg.int() },
      resolve: async (_root, args, { accountId, services }) => ({
        accountId,
        campaignId: args.campaign,
        ...(await services.contacts.parseListArgs(accountId, args.campaign, args)),
      }),
    }),
  );

  builder.queryField('contact', (t) =>
    t.withAuth({ account: true }).prismaField({
      type: 'Contact',
      errors: { types: [NotFoundError] },
      args: { campaign: t.arg.id({ required: true }), id: t.arg.id({ required: true }) },
      resolve: (query, _root, args, { accountId, services }) => services.contacts.get(accountId, args.campaign, args.id, query),
    }),
  );

  builder.mutationField('createCampaign', (t) =>
    t.withAuth({ account: true }).prismaField({
      type: 'Campaign',
      errors: { types: [ValidationError] },
      args: { input: t.arg({ type: createInput, required: true }) },
      resolve: (query, _root, { input }, { accountId, services }) => services.campaigns.create(accountId, input, query),
    }),
  );

  builder.mutationField('updateCampaign', (t) =>
    t.withAuth({ account: true }).prismaField({
      type: 'Campaign',
      errors: { types: [ValidationError, NotFoundError] },
      args: { id: t.arg.id({ required: true }), input: t.arg({ type: updateInput, required: true }) },
      resolve: (query, _root, { id, input }, { accountId, services }) => services.campaigns.update(accountId, id, input, query),
    }),
  );

  builder.mutationField('deleteCampaign', (t) =>
    t.withAuth({ account: true }).field({
      type: deleted,
      errors: { types: [NotFoundError] },
      args: { id: t.arg.id({ required: true }) },
      resolve: (_root, { id }, { accountId, services }) => services.campaigns.delete(accountId, id),
    }),
  );

  for (const action of CAMPAIGN_ACTIONS) {
    builder.mutationField(`${action}Campaign`, (t) =>
      t.withAuth({ account: true }).prismaField({
        type: 'Campaign',
        description: describeTransition(action),
        errors: { types: [NotFoundError, InvalidStateError, ValidationError] },
        args: { id: t.arg.id({ required: true }) },
        resolve: async (query, _root, { id }, { accountId, services }) => {
          await services.campaignLifecycle.act(accountId, id, action);
          return services.campaigns.get(accountId, id, query);
        },
      }),
    );
  }

  builder.mutationField('addContact', (t) =>
    t.withAuth({ account: true }).prismaField({
      type: 'Contact',
      errors: { types: [ValidationError, NotFoundError, ConflictError] },
      args: { campaign: t.arg.id({ required: true }), input: t.arg({ type: contactInput, required: true }) },
      resolve: (query, _root, args, { accountId, services }) => services.contacts.add(accountId, args.campaign, args.input, query),
    }),
  );
}
