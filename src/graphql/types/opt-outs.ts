import { ValidationError } from '../../errors.js';
import { parsePage, type PageRequest } from '../../pagination.js';
import type { Services } from '../../services.js';
import type { Builder } from '../builder.js';
import { addPageType } from './page.js';

interface OptOutPageShape {
  accountId: string;
  page: PageRequest;
}

export function addOptOutTypes(builder: Builder, { optOuts }: Services) {
  builder.prismaObject('OptOut', {
    description: 'A number that replied STOP (or a synonym) to the account and gets no messages from it until it replies START.',
    fields: (t) => ({
      phone: t.exposeString('phone'),
      createdAt: t.expose('createdAt', { type: 'DateTime' }),
    }),
  });

  const page = addPageType(builder, 'OptOutPage', 'OptOut', 'Newest first', {
    nodes: (query, shape: OptOutPageShape) => optOuts.list(shape.accountId, shape.page, query),
    total: (shape) => optOuts.count(shape.accountId),
  });

  builder.queryField('optOuts', (t) =>
    t.field({
      type: page,
      errors: { types: [ValidationError] },
      args: { page: t.arg.int(), perPage: t.arg.int() },
      resolve: (_root, args, context) => ({ accountId: context.accountId!, page: parsePage(args) }),
    }),
  );
}
