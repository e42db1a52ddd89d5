import { FraudBlockedError, NotFoundError, QuotaExceededError, ValidationError } from '../../errors.js';
import type { VerificationCheck } from '../../modules/verifications/verification-checks.js';
import {
  checkVerificationInput,
  startVerificationInput,
} from '../../modules/verifications/verification-input.js';
import {
  MAX_VERIFICATION_COUNTRIES,
  type VerificationCountryCounts,
  type VerificationStatsAnswer,
  verificationStatsInput,
} from '../../modules/verifications/verification-stats.js';
import type { VerificationView } from '../../modules/verifications/verification-view.js';
import type { Builder } from '../builder.js';
import { argsFromZod, inputTypeFromZod } from '../zod-input.js';
import { idArg, inputArg, meaningsAsValues } from './args.js';

const STATUS_MEANING = {
  pending: 'its code was sent and may still be checked',
  approved: 'its code was checked right (once)',
  expired: 'its ttl ran out before its code was checked right',
  max_attempts_reached: 'five checks failed: even the right code is refused now',
  failed: 'the message of its last code failed (`error` says why); a resend may be tried',
};

const CHECK_MEANING = {
  approved: 'the code is right: the verification is approved',
  denied: 'the code is wrong, or the verification was already approved',
  expired: 'the verification expired; start a new one',
  max_attempts_reached: 'five checks were made already; start a new one once it expires',
};

export function addVerificationTypes(builder: Builder) {
  addVerificationFields(builder, addVerificationObjects(builder));
  addVerificationStatsField(builder);
}

const COUNTS = {
  started: 'Verifications started in the range',
  approved: 'Of them, approved',
  expired: 'Of them, expired unapproved',
} as const;

function addVerificationStatsField(builder: Builder) {
  const country = builder.objectRef<VerificationCountryCounts>('VerificationCountryStats').implement({
    description: 'The verifications of numbers of one country',
    fields: (t) => ({
      country: t.exposeString('country', {
        nullable: true,
        description: 'ISO 3166 alpha-2 code; null for numbers of no known country',
      }),
      started: t.exposeInt('started', { description: COUNTS.started }),
      approved: t.exposeInt('approved', { description: COUNTS.approved }),
      expired: t.exposeInt('expired', { description: COUNTS.expired }),
      conversion: t.exposeFloat('conversion', {
        nullable: true,
        description: 'approved / started: low where codes go to numbers nobody reads (traffic pumping)',
      }),
    }),
  });
  const stats = builder.objectRef<VerificationStatsAnswer>('VerificationStats').implement({
    description: "An account's verifications over a range, and their conversion by country",
    fields: (t) => ({
      from: t.expose('from', { type: 'DateTime', description: 'Start of the range' }),
      to: t.expose('to', { type: 'DateTime', description: 'Its end (exclusive)' }),
      started: t.exposeInt('started', { description: COUNTS.started }),
      approved: t.exposeInt('approved', { description: COUNTS.approved }),
      expired: t.exposeInt('expired', { description: COUNTS.expired }),
      conversion: t.exposeFloat('conversion', { nullable: true, description: 'approved / started' }),
      countries: t.field({
        type: [country],
        description: `Most started first (at most ${MAX_VERIFICATION_COUNTRIES})`,
        complexity: { field: MAX_VERIFICATION_COUNTRIES, multiplier: MAX_VERIFICATION_COUNTRIES },
        resolve: (s) => s.countries,
      }),
    }),
  });
  builder.queryField('verificationStats', (t) =>
    t.withAuth({ account: true }).field({
      type: stats,
      description:
        'Verifications started in a range (at most 400 days): approved, expired, conversion by country',
      errors: { types: [ValidationError] },
      args: argsFromZod(t.arg, verificationStatsInput, { from: 'DateTime', to: 'DateTime' }),
      resolve: (_root, args, { accountId, services }) => services.verificationStats.read(accountId, args),
    }),
  );
}

function addVerificationObjects(builder: Builder) {
  const status = builder.enumType('VerificationStatus', {
    description: 'Where a verification stands',
    values: meaningsAsValues(STATUS_MEANING),
  });
  const checkStatus = builder.enumType('VerificationCheckStatus', {
    description: 'What a check of a code found',
    values: meaningsAsValues(CHECK_MEANING),
  });
  const error = builder.objectRef<{ code: string; message: string }>('VerificationError').implement({
    description: 'Why the message of its last code failed',
    fields: (t) => ({
      code: t.exposeString('code', { description: "The carrier's or Tern's error code of the message" }),
      message: t.exposeString('message', { description: 'What it means' }),
    }),
  });
  const verification = builder.objectRef<VerificationView>('Verification').implement({
    description: 'A one-time code sent to a number; the code itself is never shown nor stored',
    fields: (t) => ({
      id: t.exposeID('id', { description: 'Its id, prefixed by its kind' }),
      to: t.exposeString('to', { description: 'The number: E.164 digits without the plus sign' }),
      status: t.field({ type: status, description: 'Where it stands', resolve: (v) => v.status }),
      attempts: t.exposeInt('attempts', { description: 'Checks made so far (five at most)' }),
      sends: t.exposeInt('sends', { description: 'Codes sent: the start and each resend (five at most)' }),
      messageId: t.exposeID('messageId', {
        nullable: true,
        description: 'The message of its last code; its text shows the code masked',
      }),
      error: t.field({
        type: error,
        nullable: true,
        description: 'While `failed`: the error of its message',
        resolve: (v) => v.error,
      }),
      expiresAt: t.expose('expiresAt', { type: 'DateTime', description: 'When its code stops being valid' }),
      createdAt: t.expose('createdAt', { type: 'DateTime', description: 'When it was started' }),
      approvedAt: t.expose('approvedAt', {
        type: 'DateTime',
        nullable: true,
        description: 'When it was approved',
      }),
    }),
  });
  const check = builder.objectRef<VerificationCheck>('VerificationCheck').implement({
    description: 'The outcome of one check of a code',
    fields: (t) => ({
      id: t.exposeID('id', { description: 'The verification checked' }),
      status: t.field({ type: checkStatus, description: 'What the check found', resolve: (c) => c.status }),
    }),
  });
  return { verification, check };
}

function addVerificationFields(builder: Builder, refs: ReturnType<typeof addVerificationObjects>) {
  const startInput = inputTypeFromZod(builder, 'StartVerificationInput', startVerificationInput, {
    template: 'ID',
  });
  const checkInput = inputTypeFromZod(builder, 'CheckVerificationInput', checkVerificationInput);

  builder.queryField('verification', (t) =>
    t.withAuth({ account: true }).field({
      type: refs.verification,
      description: 'One verification of the account',
      errors: { types: [NotFoundError] },
      args: { id: idArg(t.arg) },
      resolve: (_root, { id }, { accountId, services }) => services.verifications.get(accountId, id),
    }),
  );

  builder.mutationField('startVerification', (t) =>
    t.withAuth({ account: true }).field({
      type: refs.verification,
      description:
        'Sends a one-time code to a number; while a verification of that number is pending, sends it a new code instead (a resend: 30 s after the last, doubling, five codes at most). Five starts per number an hour, ten a day; over a limit, a rate_limited error with Retry-After',
      errors: { types: [ValidationError, QuotaExceededError, FraudBlockedError] },
      args: { input: inputArg(t.arg, startInput) },
      resolve: (_root, { input }, { accountId, services }) => services.verifications.start(accountId, input),
    }),
  );

  builder.mutationField('checkVerification', (t) =>
    t.withAuth({ account: true }).field({
      type: refs.check,
      description:
        'Checks a code: approved once, five checks at most (past them even the right code is refused), never after its expiry',
      errors: { types: [ValidationError, NotFoundError] },
      args: { id: idArg(t.arg), input: inputArg(t.arg, checkInput) },
      resolve: (_root, { id, input }, { accountId, services }) =>
        services.verificationChecks.check(accountId, id, input),
    }),
  );
}
