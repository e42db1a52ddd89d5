import { InvalidStateError, ValidationError } from '../../errors.js';
import {
  type TwoFactorActivation,
  type TwoFactorSetup,
  codeInput as twoFactorCodeInput,
} from '../../modules/accounts/two-factor-login.js';
import type { QuotaView } from '../../modules/quotas/account-quotas.js';
import { type ApprovedSender, MAX_SENDERS_PER_ACCOUNT } from '../../modules/senders/account-senders.js';
import { updateSettingsInput as updateSettingsSchema } from '../../modules/settings/settings.js';
import type { Builder } from '../builder.js';
import { inputTypeFromZod } from '../zod-input.js';
import { inputArg } from './args.js';
import type { SendWindowTypeRefs } from './send-window.js';

function addQuotaTypes(builder: Builder) {
  const limits = builder.objectRef<QuotaView['limits']>('QuotaLimits').implement({
    description: 'What the operator lets the account send; the account cannot change it',
    fields: (t) => ({
      dailySegments: t.exposeInt('dailySegments', {
        nullable: true,
        description: 'Segments a day, in the quota’s time zone; null for no limit',
      }),
      monthlySegments: t.exposeInt('monthlySegments', {
        nullable: true,
        description: 'Segments a calendar month, in the quota’s time zone; null for no limit',
      }),
      allowedCountries: t.exposeStringList('allowedCountries', {
        description: 'ISO 3166 alpha-2 codes of the countries it may send to; empty for every country',
      }),
      timezone: t.exposeString('timezone', {
        description:
          'The IANA time zone whose days and months the quotas count, fixed with the limits; the account’s own time zone does not move it',
      }),
    }),
  });
  const usage = builder.objectRef<QuotaView['usage']>('QuotaUsage').implement({
    description:
      'Segments reserved by accepted messages in the current day and month (the quota’s time zone); those that failed before reaching a carrier are given back',
    fields: (t) => ({
      todaySegments: t.exposeInt('todaySegments', { description: 'Segments used today' }),
      monthSegments: t.exposeInt('monthSegments', { description: 'Segments used this month' }),
    }),
  });
  const approvedSender = builder.objectRef<ApprovedSender>('ApprovedSender').implement({
    description: 'A sender the operator approved for the account: a message may name it as `from`',
    fields: (t) => ({
      sender: t.exposeString('sender', { description: 'Letters, digits and spaces, or a number as digits' }),
      kind: t.exposeString('kind', { description: '`alphanumeric` or `numeric`' }),
      countries: t.exposeStringList('countries', {
        nullable: true,
        description: 'ISO 3166 alpha-2 codes of the countries it may send to; null for every country',
      }),
      pool: t.exposeBoolean('pool', { description: 'Whether it belongs to the account’s sender pool' }),
    }),
  });
  builder.prismaObjectFields('AccountSettings', (t) => ({
    senders: t.field({
      type: [approvedSender],
      description: `The senders the operator approved (at most ${MAX_SENDERS_PER_ACCOUNT}); the account cannot change them`,
      complexity: MAX_SENDERS_PER_ACCOUNT,
      select: { accountId: true },
      resolve: (settings, _args, { services }) => services.accountSenders.list(settings.accountId),
    }),
    limits: t.field({
      type: limits,
      description: 'The segment quotas and destination countries the operator set',
      select: { accountId: true },
      resolve: async (settings, _args, { services }) =>
        (await services.accountQuotas.view(settings.accountId)).limits,
    }),
    usage: t.field({
      type: usage,
      description: 'What the account used of its quotas',
      select: { accountId: true },
      resolve: async (settings, _args, { services }) =>
        (await services.accountQuotas.view(settings.accountId)).usage,
    }),
  }));
}

export function addSettingsTypes(builder: Builder, windows: SendWindowTypeRefs) {
  addQuotaTypes(builder);
  builder.prismaObject('AccountSettings', {
    name: 'Settings',
    description: "The account's settings",
    fields: (t) => ({
      accountId: t.exposeID('accountId', { description: 'The account' }),
      timezone: t.exposeString('timezone', { description: 'IANA time zone name' }),
      defaultSender: t.exposeString('defaultSender', {
        nullable: true,
        description: 'The sender id of messages that name none; null: the carrier decides',
      }),
      twoFactorEnabled: t.exposeBoolean('twoFactorEnabled', { description: 'Whether login asks for a code' }),
      sendWindow: t.field({
        type: windows.sendWindow,
        nullable: true,
        description: 'When campaign messages (and single sends that ask) may go; null: any time',
        select: { sendWindow: true },
        resolve: (settings) => windows.resolveWindow(settings.sendWindow),
      }),
      messageValidity: t.exposeInt('messageValidity', {
        description: 'Seconds a message may wait for its hand-over before it fails as expired',
      }),
      updatedAt: t.expose('updatedAt', { type: 'DateTime', description: 'When it last changed' }),
    }),
  });

  const updateSettingsInput = inputTypeFromZod(builder, 'UpdateSettingsInput', updateSettingsSchema, {
    sendWindow: windows.sendWindowInput,
  });

  builder.queryField('settings', (t) =>
    t.withAuth({ account: true }).prismaField({
      type: 'AccountSettings',
      description: "The account's settings",
      resolve: (query, _root, _args, { accountId, services }) => services.settings.get(accountId, query),
    }),
  );

  builder.mutationField('updateSettings', (t) =>
    t.withAuth({ account: true }).prismaField({
      type: 'AccountSettings',
      description: 'Changes the time zone or the default sender',
      // A bad value is all a change of settings can fail on: every account has its settings row.
      errors: { types: [ValidationError] },
      args: {
        input: inputArg(t.arg, updateSettingsInput),
      },
      resolve: (query, _root, { input }, { accountId, services }) =>
        services.settings.update(accountId, input, query),
    }),
  );

  addTwoFactorFields(builder);
}

/** Two-factor login's types and mutations: set up, confirm, turn off. */
function addTwoFactorFields(builder: Builder) {
  const twoFactorSetup = builder.objectRef<TwoFactorSetup>('TwoFactorSetup').implement({
    description: 'A new TOTP secret (SHA-1, 6 digits, 30 s), not in force until a code of it is confirmed',
    fields: (t) => ({
      secret: t.exposeString('secret', { description: 'Base32, for typing into an authenticator app' }),
      otpauthUrl: t.exposeString('otpauthUrl', {
        description: 'The same as an otpauth:// URI, for a QR code',
      }),
    }),
  });

  const twoFactorActivation = builder.objectRef<TwoFactorActivation>('TwoFactorActivation').implement({
    description:
      'The settings with two-factor login on, and the recovery codes: this is the only time they are shown',
    fields: (t) => ({
      accountId: t.id({ description: 'The account', resolve: ({ settings: row }) => row.accountId }),
      timezone: t.string({
        description: 'IANA time zone name',
        resolve: ({ settings: row }) => row.timezone,
      }),
      defaultSender: t.string({
        nullable: true,
        description: 'The sender id of messages that name none',
        resolve: ({ settings: row }) => row.defaultSender,
      }),
      twoFactorEnabled: t.boolean({
        description: 'Always true here',
        resolve: ({ settings: row }) => row.twoFactorEnabled,
      }),
      updatedAt: t.field({
        type: 'DateTime',
        description: 'When it last changed',
        resolve: ({ settings: row }) => row.updatedAt,
      }),
      recoveryCodes: t.exposeStringList('recoveryCodes', {
        description: 'Each logs in (as `otp`) or turns two-factor login off once',
      }),
    }),
  });

  const codeInput = inputTypeFromZod(builder, 'TwoFactorCodeInput', twoFactorCodeInput);

  builder.mutationField('setUpTwoFactor', (t) =>
    t.withAuth({ account: true }).field({
      type: twoFactorSetup,
      description:
        'A new TOTP secret for two-factor login; confirmTwoFactor with a code of it turns two-factor login on. Only with a login token (an API key gets 403 forbidden)',
      errors: { types: [InvalidStateError] },
      resolve: (_root, _args, { accountId, credential, services }) =>
        services.twoFactorLogin.setUp(accountId, credential),
    }),
  );

  builder.mutationField('confirmTwoFactor', (t) =>
    t.withAuth({ account: true }).field({
      type: twoFactorActivation,
      description:
        'Turns two-factor login on with a code of the secret of setUpTwoFactor; a wrong code is a ValidationError on code. Only with a login token',
      errors: { types: [ValidationError, InvalidStateError] },
      args: {
        input: inputArg(t.arg, codeInput),
      },
      resolve: (_root, { input }, { accountId, credential, services }) =>
        services.twoFactorLogin.confirm(accountId, input, credential),
    }),
  );

  builder.mutationField('disableTwoFactor', (t) =>
    t.withAuth({ account: true }).prismaField({
      type: 'AccountSettings',
      description:
        'Turns two-factor login off with a code of the authenticator app or a recovery code. Only with a login token',
      errors: { types: [ValidationError, InvalidStateError] },
      args: {
        input: inputArg(t.arg, codeInput),
      },
      resolve: (query, _root, { input }, { accountId, credential, services }) =>
        services.twoFactorLogin.disable(accountId, input, credential, query),
    }),
  );
}
