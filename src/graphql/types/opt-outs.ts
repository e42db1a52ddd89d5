import { ValidationError } from '../../errors.js';
import { parsePage, type PageRequest } from '../../pagination.js';
import type { Builder } from '../builder.js';
import { addPageType } from './page.js';

interface OptOutPageShape {
  accountId: string;
  page: PageRequest;
}

export function addOptOutTypes(builder: Builder) {
  builder.prismaObject('OptOut', {
    description: 'A number that replied STOP (or a synonym) to the account and gets no messages from it until it replies START.',
    fields: (t) => ({
      phone: t.exposeString('phone'),
      createdAt: t.expose('createdAt', { type: 'DateTime' }),
    }),
  });

  const page = addPageType(builder, 'OptOutPage', 'OptOut', 'Newest first', {
    nodes: (query, shape: OptOutPageShape, { services }) => services.optOuts.list(shape.accountId, shape.page, query),
    total: (shape, { services }) => services.optOuts.count(shape.accountId),
  });

  builder.queryField('optOuts', (t) =>
    t.withAuth({ account: true }).field({
      type: page,
      errors: { types: [ValidationError] },
      args: { page: t.arg.int(), perPage: t.arg.int() },
      resolve: (_root, args, { accountId }) => ({ accountId, page: parsePage(args) }),
    }),
  );
}
