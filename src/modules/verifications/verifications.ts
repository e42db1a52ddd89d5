import { NotFoundError, RateLimitedError, ValidationError } from '../../errors.js';
import type { Prisma, PrismaClient } from '../../generated/prisma/client.js';
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
import { type VerificationView, viewOf } from './verification-view.js';

/** The resend cool-down: the first resend waits this long after the start, each next one twice the last. */
export const RESEND_COOL_DOWN_MS = 30_000;
/** Codes one verification sends at most: its start and four resends. */
export const MAX_SENDS = 5;
/** New verifications of one number in one account: per rolling hour and per rolling day. */
export const STARTS_PER_HOUR = 5;
export const STARTS_PER_DAY = 10;

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

type Tx = Prisma.TransactionClient;
type VerificationRow = Awaited<ReturnType<PrismaClient['verification']['findFirstOrThrow']>>;

/** What a start changed, so that a send the path refuses can be undone. */
interface Planned {
  row: VerificationRow;
  /** The row before a resend changed it; null for a new verification. */
  before: VerificationRow | null;
}

export interface VerificationsOptions {
  prisma: PrismaClient;
  clock: Clock;
  sending: MessageSending;
  codeKey: Buffer;
}

/**
 * Starts verifications and reads them: a code drawn, its HMAC stored, and a message sent
 * through the ordinary send path whose stored text has the code masked while the carrier gets
 * it sealed (message-rows.ts). The limits (resend cool-down, sends per verification, starts per
 * number) are decided under a transaction lock per account and number, so they hold exactly
 * across processes.
 */
export class Verifications {
  private readonly prisma: PrismaClient;
  private readonly clock: Clock;
  private readonly sending: MessageSending;
  private readonly codeKey: Buffer;

  constructor(options: VerificationsOptions) {
    ({ prisma: this.prisma, clock: this.clock, sending: this.sending, codeKey: this.codeKey } = options);
  }

  /** A new verification of `to`, or, while one is pending, a new code for it (a resend). */
  async start(accountId: string, input: unknown): Promise<VerificationView> {
    const data = parseInput(startVerificationInput, input);
    const content = await this.contentOf(accountId, data);
    const code = newCode(data.codeLength ?? CODE_LENGTH.default);
    const messageId = newId('msg');
    const planned = await this.plan(accountId, data, code, messageId);
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
  private async contentOf(accountId: string, data: StartVerificationInput): Promise<string> {
    if (!data.template) return defaultContent(countryOf(data.to));
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

  private plan(
    accountId: string,
    data: StartVerificationInput,
    code: string,
    messageId: string,
  ): Promise<Planned> {
    return this.prisma.$transaction(async (tx) => {
      const now = this.clock.now();
      await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtextextended(${`verification:${accountId}:${data.to}`}, 0))`;
      const expiresAt = new Date(now.getTime() + (data.ttl ?? TTL_SECONDS.default) * 1000);
      const pending = await tx.verification.findFirst({
        where: { accountId, to: data.to, status: 'pending', expiresAt: { gt: now } },
        orderBy: { createdAt: 'desc' },
      });
      if (pending) {
        assertResendAllowed(pending, now);
        const row = await tx.verification.update({
          where: { id: pending.id },
          data: {
            codeHmac: codeHmac(this.codeKey, pending.id, code),
            sends: { increment: 1 },
            lastSentAt: now,
            messageId,
            expiresAt,
          },
        });
        return { row, before: pending };
      }
      await assertStartAllowed(tx, accountId, data.to, now);
      const id = newId('vrf');
      const row = await tx.verification.create({
        data: {
          id,
          accountId,
          to: data.to,
          country: countryOf(data.to),
          codeHmac: codeHmac(this.codeKey, id, code),
          lastSentAt: now,
          messageId,
          expiresAt,
          createdAt: now,
        },
      });
      return { row, before: null };
    });
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

/** A resend waits 30 s after the start, then twice as long after each resend; five codes at most. */
function assertResendAllowed(pending: VerificationRow, now: Date): void {
  if (pending.sends >= MAX_SENDS)
    throw new RateLimitedError(
      secondsUntil(pending.expiresAt, now),
      `This verification has sent its ${MAX_SENDS} codes; start a new one once it expires`,
    );
  const due = pending.lastSentAt.getTime() + RESEND_COOL_DOWN_MS * 2 ** (pending.sends - 1);
  if (now.getTime() < due)
    throw new RateLimitedError(secondsUntil(new Date(due), now), 'A code was sent moments ago; resend later');
}

/** Starts of the number in the account, in the last hour and day, under their limits. */
async function assertStartAllowed(tx: Tx, accountId: string, to: string, now: Date): Promise<void> {
  const starts = await tx.verification.findMany({
    where: { accountId, to, createdAt: { gt: new Date(now.getTime() - DAY_MS) } },
    select: { createdAt: true },
    orderBy: { createdAt: 'desc' },
    take: STARTS_PER_DAY,
  });
  const lastHour = starts.filter((start) => start.createdAt.getTime() > now.getTime() - HOUR_MS);
  // Room comes back when the oldest start that counts leaves its window.
  if (lastHour.length >= STARTS_PER_HOUR) {
    const freed = lastHour[STARTS_PER_HOUR - 1]!.createdAt.getTime() + HOUR_MS;
    throw new RateLimitedError(
      secondsUntil(new Date(freed), now),
      'Too many verifications of this number this hour',
    );
  }
  if (starts.length >= STARTS_PER_DAY) {
    const freed = starts[STARTS_PER_DAY - 1]!.createdAt.getTime() + DAY_MS;
    throw new RateLimitedError(
      secondsUntil(new Date(freed), now),
      'Too many verifications of this number today',
    );
  }
}

function secondsUntil(when: Date, now: Date): number {
  return Math.max(1, Math.ceil((when.getTime() - now.getTime()) / 1000));
}
