import { InvalidCredentialsError, OtpRequiredError, ValidationError } from '../../errors.js';
import { loginInput as loginSchema } from '../../modules/accounts/accounts.js';
import type { IssuedToken } from '../../modules/accounts/login-tokens.js';
import type { Builder } from '../builder.js';
import { inputTypeFromZod } from '../zod-input.js';
import { inputArg } from './args.js';

export function addAccountTypes(builder: Builder) {
  const token = builder.objectRef<IssuedToken>('Token').implement({
    description: 'A login token: send it as `Authorization: Bearer <token>`',
    fields: (t) => ({
      token: t.exposeString('token', { description: 'A signed JWT' }),
      tokenType: t.exposeString('tokenType', { description: 'Always `Bearer`' }),
      expiresIn: t.exposeInt('expiresIn', { description: 'Seconds of validity' }),
      accountId: t.exposeID('accountId', { description: 'The account it acts for' }),
    }),
  });

  const loginInput = inputTypeFromZod(builder, 'LoginInput', loginSchema);

  builder.mutationField('login', (t) =>
    t.field({
      type: token,
      description: 'A login token for an email and password; the only field that needs no token',
      skipTypeScopes: true,
      errors: { types: [ValidationError, InvalidCredentialsError, OtpRequiredError] },
      args: {
        input: inputArg(t.arg, loginInput),
      },
      resolve: async (_root, args, context, info) => {
        await context.fieldRateLimits.login({ args, context, info });
        return context.services.accounts.login(args.input, context.clientAddress);
      },
    }),
  );
}
