import { NotFoundError, QuotaExceededError, ValidationError } from '../../errors.js';
import type { VerificationCheck } from '../../modules/verifications/verification-checks.js';
import {
  checkVerificationInput,
  startVerificationInput,
} from '../../modules/verifications/verification-input.js';
import type { VerificationView } from '../../modules/verifications/verification-view.js';
import type { Builder } from '../builder.js';
import { inputTypeFromZod } from '../zod-input.js';
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
      errors: { types: [ValidationError, QuotaExceededError] },
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
