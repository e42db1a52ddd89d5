import { ConflictError, NotFoundError, ValidationError } from '../../errors.js';
import { placeholderNames } from '../../modules/templates/render-template.js';
import type { DeletedTemplate } from '../../modules/templates/templates.service.js';
import { parsePage, type PageRequest } from '../../pagination.js';
import type { Builder } from '../builder.js';
import { addPageType } from './page.js';

interface TemplatePageShape {
  accountId: string;
  page: PageRequest;
}

export function addTemplateTypes(builder: Builder) {
  builder.prismaObject('Template', {
    description: 'A message text for campaigns, with `{{name}}`, `{{phone}}`, `{{email}}`, `{{document}}` or `{{tags}}` filled per contact.',
    fields: (t) => ({
      id: t.exposeID('id'),
      name: t.exposeString('name'),
      content: t.exposeString('content'),
      placeholders: t.stringList({
        description: 'The distinct placeholder names of the content, in order of first appearance',
        select: { content: true },
        resolve: (template) => placeholderNames(template.content),
      }),
      createdAt: t.expose('createdAt', { type: 'DateTime' }),
      updatedAt: t.expose('updatedAt', { type: 'DateTime' }),
    }),
  });

  const page = addPageType(builder, 'TemplatePage', 'Template', 'Newest first', {
    nodes: (query, shape: TemplatePageShape, { services }) => services.templates.list(shape.accountId, shape.page, query),
    total: (shape, { services }) => services.templates.count(shape.accountId),
  });

  const deleted = builder.objectRef<DeletedTemplate>('DeletedTemplate').implement({
    fields: (t) => ({
      id: t.exposeID('id'),
      deleted: t.exposeBoolean('deleted'),
    }),
  });

  const createInput = builder.inputType('CreateTemplateInput', {
    fields: (t) => ({
      name: t.string({ description: '3..80 characters' }),
      content: t.string({ description: '1..1600 characters; placeholders are written {{name}}' }),
    }),
  });

  const updateInput = builder.inputType('UpdateTemplateInput', {
    fields: (t) => ({
      name: t.string({ description: '3..80 characters; unchanged when left out' }),
      content: t.string({ description: '1..1600 characters; required' }),
    }),
  });

  builder.queryField('template', (t) =>
    t.withAuth({ account: true }).prismaField({
      type: 'Template',
      errors: { types: [NotFoundError] },
      args: { id: t.arg.id({ required: true }) },
      resolve: (query, _root, { id }, { accountId, services }) => services.templates.get(accountId, id, query),
    }),
  );

  builder.queryField('templates', (t) =>
    t.withAuth({ account: true }).field({
      type: page,
      errors: { types: [ValidationError] },
      args: { page: t.arg.int(), perPage: t.arg.int() },
      resolve: (_root, args, { accountId }) => ({ accountId, page: parsePage(args) }),
    }),
  );

  builder.mutationField('createTemplate', (t) =>
    t.withAuth({ account: true }).prismaField({
      type: 'Template',
      errors: { types: [ValidationError] },
      args: { input: t.arg({ type: createInput, required: true }) },
      resolve: (query, _root, { input }, { accountId, services }) => services.templates.create(accountId, input, query),
    }),
  );

  builder.mutationField('updateTemplate', (t) =>
    t.withAuth({ account: true }).prismaField({
      type: 'Template',
      errors: { types: [ValidationError, NotFoundError] },
      args: { id: t.arg.id({ required: true }), input: t.arg({ type: updateInput, required: true }) },
      resolve: (query, _root, { id, input }, { accountId, services }) => services.templates.update(accountId, id, input, query),
    }),
  );

  builder.mutationField('deleteTemplate', (t) =>
    t.withAuth({ account: true }).field({
      type: deleted,
      description: 'Refused with ConflictError while a campaign uses the template',
      errors: { types: [NotFoundError, ConflictError] },
      args: { id: t.arg.id({ required: true }) },
      resolve: (_root, { id }, { accountId, services }) => services.templates.delete(accountId, id),
    }),
  );
}
