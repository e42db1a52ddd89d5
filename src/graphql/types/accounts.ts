import { InvalidCredentialsError, OtpRequiredError, ValidationError } from '../../errors.js';
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
      otp: t.string({
        description: 'With two-factor login on: the 6-digit code of the authenticator app, or a recovery code. Each is accepted once',
      }),
    }),
  });

  builder.mutationField('login', (t) =>
    t.field({
      type: token,
      skipTypeScopes: true,
      errors: { types: [ValidationError, InvalidCredentialsError, OtpRequiredError] },
      args: { input: t.arg({ type: loginInput, required: true }) },
      resolve: async (_root, args, context, info) => {
        await context.fieldRateLimits.login({ args, context, info });
        return context.services.accounts.login(args.input, context.clientAddress);
      },
    }),
  );
}
