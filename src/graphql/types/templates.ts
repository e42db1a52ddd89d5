import { ConflictError, NotFoundError, ValidationError } from '../../errors.js';
import { type PageRequest, parsePage } from '../../lib/pagination.js';
import { placeholderNames } from '../../modules/templates/render-template.js';
import {
  createTemplateInput,
  type DeletedTemplate,
  updateTemplateInput,
} from '../../modules/templates/templates.js';
import type { Builder } from '../builder.js';
import { inputTypeFromZod } from '../zod-input.js';
import { idArg, inputArg } from './args.js';
import { addPageType, pageArgs } from './page.js';
import { cursorArgs } from './page-info.js';

interface TemplatePageShape {
  accountId: string;
  page: PageRequest;
}

export function addTemplateTypes(builder: Builder) {
  builder.prismaObject('Template', {
    description:
      'A message text for campaigns, with `{{name}}`, `{{phone}}`, `{{email}}`, `{{document}}` or `{{tags}}` filled per contact.',
    fields: (t) => ({
      id: t.exposeID('id', { description: 'Its id, prefixed by its kind' }),
      name: t.exposeString('name', { description: 'Its name, as given' }),
      content: t.exposeString('content', { description: 'The text, placeholders as written' }),
      placeholders: t.stringList({
        description: 'The distinct placeholder names of the content, in order of first appearance',
        select: { content: true },
        resolve: (template) => placeholderNames(template.content),
      }),
      createdAt: t.expose('createdAt', { type: 'DateTime', description: 'When it was created' }),
      updatedAt: t.expose('updatedAt', { type: 'DateTime', description: 'When it last changed' }),
    }),
  });

  const page = addPageType(builder, 'TemplatePage', 'Template', 'Newest first', {
    nodes: (query, shape: TemplatePageShape, { services }) =>
      services.templates.list(shape.accountId, shape.page, query),
    total: (shape, { services }) => services.templates.count(shape.accountId),
  });

  const deleted = builder.objectRef<DeletedTemplate>('DeletedTemplate').implement({
    description: 'A deleted template',
    fields: (t) => ({
      id: t.exposeID('id', { description: 'Its id, prefixed by its kind' }),
      deleted: t.exposeBoolean('deleted', { description: 'Always true' }),
    }),
  });

  const createInput = inputTypeFromZod(builder, 'CreateTemplateInput', createTemplateInput);
  const updateInput = inputTypeFromZod(builder, 'UpdateTemplateInput', updateTemplateInput);

  builder.queryField('template', (t) =>
    t.withAuth({ account: true }).prismaField({
      type: 'Template',
      description: 'One template of the account',
      errors: { types: [NotFoundError] },
      args: { id: idArg(t.arg) },
      resolve: (query, _root, { id }, { accountId, services }) =>
        services.templates.get(accountId, id, query),
    }),
  );

  builder.queryField('templates', (t) =>
    t.withAuth({ account: true }).field({
      type: page,
      description: "The account's templates",
      errors: { types: [ValidationError] },
      args: { ...pageArgs(t.arg), ...cursorArgs(t) },
      resolve: (_root, args, { accountId }) => ({ accountId, page: parsePage(args) }),
    }),
  );

  builder.mutationField('createTemplate', (t) =>
    t.withAuth({ account: true }).prismaField({
      type: 'Template',
      description: 'A new template',
      errors: { types: [ValidationError] },
      args: {
        input: inputArg(t.arg, createInput),
      },
      resolve: (query, _root, { input }, { accountId, services }) =>
        services.templates.create(accountId, input, query),
    }),
  );

  builder.mutationField('updateTemplate', (t) =>
    t.withAuth({ account: true }).prismaField({
      type: 'Template',
      description:
        "Changes a template's text (and name); campaigns that use it send the new text from then on",
      errors: { types: [ValidationError, NotFoundError] },
      args: {
        id: idArg(t.arg),
        input: inputArg(t.arg, updateInput),
      },
      resolve: (query, _root, { id, input }, { accountId, services }) =>
        services.templates.update(accountId, id, input, query),
    }),
  );

  builder.mutationField('deleteTemplate', (t) =>
    t.withAuth({ account: true }).field({
      type: deleted,
      description: 'Refused with ConflictError while a campaign uses the template',
      errors: { types: [NotFoundError, ConflictError] },
      args: { id: idArg(t.arg) },
      resolve: (_root, { id }, { accountId, services }) => services.templates.delete(accountId, id),
    }),
  );
}
