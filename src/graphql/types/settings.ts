import type { Builder } from '../builder.js';
import { EXPECTED_ERRORS } from './common.js';

export function addSettingsTypes(builder: Builder) {
  builder.prismaObject('AccountSettings', {
    name: 'Settings',
    fields: (t) => ({
      accountId: t.exposeID('accountId'),
      timezone: t.exposeString('timezone', { description: 'IANA time zone name' }),
      defaultSender: t.exposeString('defaultSender', { nullable: true }),
      twoFactorEnabled: t.exposeBoolean('twoFactorEnabled'),
      updatedAt: t.expose('updatedAt', { type: 'DateTime' }),
    }),
  });

  const updateSettingsInput = builder.inputType('UpdateSettingsInput', {
    fields: (t) => ({
      timezone: t.string({ description: 'An IANA time zone name, e.g. Europe/Lisbon' }),
      defaultSender: t.string({ description: '3..11 letters and digits, or 3..15 digits; null clears it' }),
    }),
  });

  builder.queryField('settings', (t) =>
    t.withAuth({ account: true }).prismaField({
      type: 'AccountSettings',
      resolve: (query, _root, _args, { accountId, services }) => services.settings.get(accountId, query),
    }),
  );

  builder.mutationField('updateSettings', (t) =>
    t.withAuth({ account: true }).prismaField({
      type: 'AccountSettings',
      errors: { types: EXPECTED_ERRORS },
      args: { input: t.arg({ type: updateSettingsInput, required: true }) },
      resolve: (query, _root, { input }, { accountId, services }) => services.settings.update(accountId, input, query),
    }),
  );
}
