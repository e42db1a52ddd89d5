import { InvalidCredentialsError, ValidationError } from '../../errors.js';
import type { IssuedToken } from '../../modules/accounts/tokens.js';
import type { Builder } from '../builder.js';

export function addAccountTypes(builder: Builder) {
  const token = builder.objectRef<IssuedToken>('Token').implement({
    fields: (t) => ({
      token: t.exposeString('token'),
      tokenType: t.exposeString('tokenType'),
      expiresIn: t.exposeInt('expiresIn', { description: 'Seconds of validity' }),
      accountId: t.exposeID('accountId'),
    }),
  });

  const loginInput = builder.inputType('LoginInput', {
    fields: (t) => ({
      email: t.string(),
      password: t.string(),
    }),
  });

  builder.mutationField('login', (t) =>
    t.field({
      type: token,
      skipTypeScopes: true,
      errors: { types: [ValidationError, InvalidCredentialsError] },
      args: { input: t.arg({ type: loginInput, required: true }) },
      resolve: async (_root, args, context, info) => {
        await context.fieldRateLimits.login({ args, context, info });
        return context.services.accounts.login(args.input, context.clientAddress);
      },
    }),
  );
}
