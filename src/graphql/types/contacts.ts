import { ConflictError, NotFoundError, ValidationError } from '../../errors.js';
import type { PageRequest } from '../../lib/pagination.js';
import { addContactInput, type ContactFilter, contactListInput } from '../../modules/contacts/contacts.js';
import type { Builder } from '../builder.js';
import { argsFromZod, inputTypeFromZod } from '../zod-input.js';
import { idArg, inputArg } from './args.js';
import { addPageType, pageArgs } from './page.js';
import { cursorArgs } from './page-info.js';

interface ContactPageShape {
  accountId: string;
  campaignId: string;
  filter: ContactFilter;
  page: PageRequest;
}

export type ContactTypeRefs = ReturnType<typeof addContactTypes>;

export function addContactTypes(builder: Builder) {
  const contactRef = builder.prismaObject('Contact', {
    description: 'A recipient of a campaign; its fields fill the placeholders of the template',
    fields: (t) => ({
      id: t.exposeID('id', { description: 'Its id, prefixed by its kind' }),
      campaignId: t.exposeID('campaignId', { description: 'The campaign it belongs to' }),
      phone: t.exposeString('phone', { description: 'E.164 digits without the plus sign' }),
      name: t.exposeString('name', { nullable: true, description: 'Fills {{name}}' }),
      email: t.exposeString('email', { nullable: true, description: 'Fills {{email}}' }),
      document: t.exposeString('document', { nullable: true, description: 'Fills {{document}}' }),
      tags: t.exposeStringList('tags', { description: 'Labels to filter contacts by; fill {{tags}}' }),
      timezone: t.exposeString('timezone', {
        nullable: true,
        description: "The time zone its send window is read in; null: the account's",
      }),
      createdAt: t.expose('createdAt', { type: 'DateTime', description: 'When it was created' }),
      // One message per contact and campaign (a unique index), so the list holds one at most.
      messages: t.relation('messages', {
        description: 'The campaign message sent to this contact, once dispatched',
        complexity: { field: 1, multiplier: 1 },
      }),
    }),
  });

  const contactPage = addPageType(builder, 'ContactPage', 'Contact', 'In the order they were added', {
    nodes: (query, shape: ContactPageShape, { services }) =>
      services.contacts.list(shape.accountId, shape.campaignId, shape.filter, shape.page, query),
    total: (shape, { services }) => services.contacts.count(shape.accountId, shape.campaignId, shape.filter),
  });

  const contactInput = inputTypeFromZod(builder, 'AddContactInput', addContactInput);

  builder.queryField('contacts', (t) =>
    t.withAuth({ account: true }).field({
      type: contactPage,
      description: "A campaign's contacts",
      errors: { types: [ValidationError, NotFoundError] },
      args: {
        campaign: t.arg.id({ required: true, description: 'The campaign it belongs to' }),
        ...argsFromZod(t.arg, contactListInput),
        ...pageArgs(t.arg),
        ...cursorArgs(t),
      },
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
      description: 'One contact of a campaign',
      errors: { types: [NotFoundError] },
      args: {
        campaign: t.arg.id({ required: true, description: 'The campaign it belongs to' }),
        id: idArg(t.arg),
      },
      resolve: (query, _root, args, { accountId, services }) =>
        services.contacts.get(accountId, args.campaign, args.id, query),
    }),
  );

  builder.mutationField('addContact', (t) =>
    t.withAuth({ account: true }).prismaField({
      type: 'Contact',
      description: 'Adds a contact to a campaign; a phone already in it is a ConflictError',
      errors: { types: [ValidationError, NotFoundError, ConflictError] },
      args: {
        campaign: t.arg.id({ required: true, description: 'The campaign it belongs to' }),
        input: inputArg(t.arg, contactInput),
      },
      resolve: (query, _root, args, { accountId, services }) =>
        services.contacts.add(accountId, args.campaign, args.input, query),
    }),
  );

  return { contactRef };
}
