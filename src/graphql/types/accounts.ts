import { InvalidCredentialsError, OtpRequiredError, ValidationError } from '../../errors.js';
import type { IssuedToken } from '../../modules/accounts/tokens.js';
import type { Services } from '../../services.js';
import type { Builder } from '../builder.js';
import type { FieldRateLimits } from '../field-rate-limits.js';

export function addAccountTypes(builder: Builder, { accounts }: Services, rateLimits: FieldRateLimits) {
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
        await rateLimits.login({ args, context, info });
        return accounts.login(args.input, context.clientAddress);
      },
    }),
  );
}
