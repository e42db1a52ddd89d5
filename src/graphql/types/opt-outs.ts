import { ValidationError } from '../../errors.js';
import { type PageRequest, parsePage } from '../../lib/pagination.js';
import type { Builder } from '../builder.js';
import { addPageType, pageArgs } from './page.js';
import { cursorArgs } from './page-info.js';

interface OptOutPageShape {
  accountId: string;
  page: PageRequest;
}

export function addOptOutTypes(builder: Builder) {
  builder.prismaObject('OptOut', {
    description:
      'A number that replied STOP (or a synonym) to the account and gets no messages from it until it replies START.',
    fields: (t) => ({
      phone: t.exposeString('phone', { description: 'E.164 digits without the plus sign' }),
      createdAt: t.expose('createdAt', { type: 'DateTime', description: 'When it was created' }),
    }),
  });

  const page = addPageType(builder, 'OptOutPage', 'OptOut', 'Newest first (ties by phone)', {
    nodes: (query, shape: OptOutPageShape, { services }) =>
      services.optOuts.list(shape.accountId, shape.page, query),
    total: (shape, { services }) => services.optOuts.count(shape.accountId),
    cursorKey: 'phone',
  });

  builder.queryField('optOuts', (t) =>
    t.withAuth({ account: true }).field({
      type: page,
      description: 'The numbers that opted out of the account’s messages',
      errors: { types: [ValidationError] },
      args: { ...pageArgs(t.arg), ...cursorArgs(t) },
      resolve: (_root, args, { accountId }) => ({ accountId, page: parsePage(args) }),
    }),
  );
}
