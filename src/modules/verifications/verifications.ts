import type pg from 'pg';
import { NotFoundError, ValidationError } from '../../errors.js';
import type { PrismaClient } from '../../generated/prisma/client.js';
import type { Clock } from '../../lib/clock.js';
import { newId } from '../../lib/ids.js';
import { countryOf } from '../../lib/phone.js';
import { parseInput } from '../../lib/validation.js';
import type { MessageSending } from '../messages/message-sending.js';
import { codeHmac, codeTexts, defaultContent, hasCodePlaceholder, newCode } from './verification-codes.js';
import {
  CODE_LENGTH,
  type StartVerificationInput,
  startVerificationInput,
  TTL_SECONDS,
} from './verification-input.js';
import { type Planned, VerificationPlans } from './verification-plans.js';
import { type VerificationView, viewOf } from './verification-view.js';

export interface VerificationsOptions {
  prisma: PrismaClient;
  /** The pool under Prisma: the transactions of starts run on it. */
  pool: pg.Pool;
  clock: Clock;
  sending: MessageSending;
  codeKey: Buffer;
}

/**
 * Starts verifications and reads them: a code drawn, its HMAC stored, and a message sent
 * through the ordinary send path whose stored text has the code masked while the carrier gets
 * it sealed (message-rows.ts). The limits (resend cool-down, sends per verification, starts per
 * number) are decided under a transaction lock per account and number (verification-plans.ts),
 * so they hold exactly across processes; starts arriving together share that transaction.
 */
export class Verifications {
  private readonly prisma: PrismaClient;
  private readonly plans: VerificationPlans;
  private readonly clock: Clock;
  private readonly sending: MessageSending;
  private readonly codeKey: Buffer;

  constructor(options: VerificationsOptions) {
    ({ prisma: this.prisma, clock: this.clock, sending: this.sending, codeKey: this.codeKey } = options);
    this.plans = new VerificationPlans(options.pool);
  }

  /** A new verification of `to`, or, while one is pending, a new code for it (a resend). */
  async start(accountId: string, input: unknown): Promise<VerificationView> {
    const data = parseInput(startVerificationInput, input);
    const country = countryOf(data.to);
    const content = await this.contentOf(accountId, data, country);
    const code = newCode(data.codeLength ?? CODE_LENGTH.default);
    const messageId = newId('msg');
    const now = this.clock.now();
    const planned = await this.plans.plan({
      accountId,
      to: data.to,
      country,
      now,
      expiresAt: new Date(now.getTime() + (data.ttl ?? TTL_SECONDS.default) * 1000),
      messageId,
      newId: newId('vrf'),
      hmacFor: (verificationId) => codeHmac(this.codeKey, verificationId, code),
    });
    const { text, masked } = codeTexts(content, code);
    try {
      await this.sending.sendMasked(accountId, {
        id: messageId,
        to: data.to,
        text,
        maskedText: masked,
        validitySeconds: data.ttl ?? TTL_SECONDS.default,
      });
    } catch (error) {
      await this.undo(planned, messageId);
      throw error;
    }
    return viewOf(planned.row, null, this.clock.now());
  }

  async get(accountId: string, id: string): Promise<VerificationView> {
    const row = await this.prisma.verification.findFirst({ where: { id, accountId } });
    if (!row) throw new NotFoundError('Verification');
    const message = row.messageId
      ? await this.prisma.message.findFirst({
          where: { id: row.messageId, accountId },
          select: { status: true, errorCode: true, errorMessage: true },
        })
      : null;
    return viewOf(row, message, this.clock.now());
  }

  /** The template's content, which must hold `{{code}}`, or the default text of the number's country. */
  private async contentOf(
    accountId: string,
    data: StartVerificationInput,
    country: string | null,
  ): Promise<string> {
    if (!data.template) return defaultContent(country);
    const template = await this.prisma.template.findFirst({
      where: { id: data.template, accountId },
      select: { content: true },
    });
    if (!template) throw new ValidationError([{ field: 'template', issue: 'not_found' }]);
    if (!hasCodePlaceholder(template.content))
      throw new ValidationError(
        [{ field: 'template', issue: 'invalid_value' }],
        'The template has no {{code}} placeholder',
      );
    return template.content;
  }

  /**
   * The send path refused the message (no route, quota, country, opt-out): a new verification is
   * removed, a resend gives the previous code back, so the refusal leaves nothing behind.
   */
  private async undo({ row, before }: Planned, messageId: string): Promise<void> {
    if (!before) {
      await this.prisma.verification.deleteMany({ where: { id: row.id, messageId } });
      return;
    }
    await this.prisma.verification.updateMany({
      where: { id: row.id, messageId },
      data: {
        codeHmac: before.codeHmac,
        sends: before.sends,
        lastSentAt: before.lastSentAt,
        messageId: before.messageId,
        expiresAt: before.expiresAt,
      },
    });
  }
}
