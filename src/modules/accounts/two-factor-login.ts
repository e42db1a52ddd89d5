import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';
import { customAlphabet } from 'nanoid';
import { Secret, TOTP } from 'otpauth';
import type { Logger } from 'pino';
import { RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import { z } from 'zod';
import {
  ForbiddenError,
  InvalidStateError,
  NotFoundError,
  RateLimitedError,
  ValidationError,
} from '../../errors.js';
import type { AccountSettings, Prisma, PrismaClient } from '../../generated/prisma/client.js';
import type { Clock } from '../../lib/clock.js';
import { SealedBox } from '../../lib/sealed-box.js';
import { parseInput } from '../../lib/validation.js';
import type { Credential } from './authentication.js';

/** RFC 6238 as every authenticator app implements it: HMAC-SHA-1, 6 digits, 30-second steps. */
const TOTP_PARAMETERS = { algorithm: 'SHA1', digits: 6, period: 30 } as const;
/** Codes of the step before and after the current one are accepted too (a phone's clock drifts). */
const DRIFT_STEPS = 1;
const ISSUER = 'Tern';

export const RECOVERY_CODE_COUNT = 10;
// Without 0/o, 1/l/i: codes are read off paper. 16 characters of 32 are 80 random bits.
const RECOVERY_ALPHABET = '23456789abcdefghjkmnpqrstuvwxyz';
const RECOVERY_CODE_CHARACTERS = 16;
const recoveryCharacters = customAlphabet(RECOVERY_ALPHABET, RECOVERY_CODE_CHARACTERS);

/** Codes tried to confirm or turn off two-factor login, per account, before it is refused for a while. */
export const CODE_ATTEMPTS = 10;
export const CODE_ATTEMPTS_WINDOW_SECONDS = 15 * 60;

export const codeInput = z
  .strictObject({
    code: z.string().trim().min(1).max(64).meta({
      description:
        'The 6-digit code of the authenticator app (or, to turn two-factor login off, a recovery code)',
    }),
  })
  .meta({ description: 'A code that proves the authenticator app (or a recovery code) is at hand' });

export interface TwoFactorSetup {
  /** The TOTP secret in base32, for typing into an authenticator app. */
  secret: string;
  /** The same as an otpauth:// URI, for a QR code. */
  otpauthUrl: string;
}

export interface TwoFactorActivation {
  settings: AccountSettings;
  /** Shown once: only their hashes are kept. */
  recoveryCodes: string[];
}

type SettingsQuery = Omit<Prisma.AccountSettingsFindUniqueArgs, 'where'>;

export interface TwoFactorLoginOptions {
  prisma: PrismaClient;
  clock: Clock;
  sealingKey: Buffer;
  redis: Redis;
  redisPrefix: string;
  logger: Logger;
}

/**
 * Two-factor login with TOTP. Set-up stores a new secret (sealed like webhook secrets); the
 * first code from the app confirms it and turns two-factor login on, with recovery codes for
 * a lost phone. Every code is accepted once, whichever process sees it: the time step of the
 * last accepted code is recorded with a conditional UPDATE, and a code of that step or an
 * earlier one is refused; a recovery code's row is deleted as it is used.
 */
export class TwoFactorLogin {
  private readonly box: SealedBox;
  private readonly attempts: RateLimiterRedis;
  private readonly prisma: PrismaClient;
  private readonly clock: Clock;
  private readonly logger: Logger;

  constructor(options: TwoFactorLoginOptions) {
    ({ prisma: this.prisma, clock: this.clock, logger: this.logger } = options);
    const { sealingKey, redis, redisPrefix } = options;
    this.box = new SealedBox(sealingKey);
    this.attempts = new RateLimiterRedis({
      storeClient: redis,
      keyPrefix: `${redisPrefix}:two-factor-codes`,
      points: CODE_ATTEMPTS,
      duration: CODE_ATTEMPTS_WINDOW_SECONDS,
    });
  }

  /** A new secret, not yet in force; a set-up that was never confirmed is replaced. */
  async setUp(accountId: string, by: Credential): Promise<TwoFactorSetup> {
    assertLoginToken(by);
    const account = await this.prisma.account.findUnique({
      where: { id: accountId },
      select: { email: true, settings: { select: { twoFactorEnabled: true } } },
    });
    if (!account) throw new NotFoundError('Account');
    if (account.settings?.twoFactorEnabled)
      throw new InvalidStateError('Two-factor login is already on: turn it off before setting it up again');
    const secret = new Secret({ size: 20 });
    const secretSealed = this.box.seal(accountId, secret.base32);
    // Only while two-factor login is off: a set-up racing a confirmation must not replace the secret in force.
    const replaced = await this.prisma.$executeRaw`
      INSERT INTO two_factor_secrets (account_id, secret_sealed, last_used_step, created_at)
      SELECT ${accountId}, ${secretSealed}, NULL, ${this.clock.now()}
      FROM account_settings WHERE account_id = ${accountId} AND NOT two_factor_enabled
      ON CONFLICT (account_id) DO UPDATE SET secret_sealed = EXCLUDED.secret_sealed, last_used_step = NULL, created_at = EXCLUDED.created_at`;
    if (replaced === 0)
      throw new InvalidStateError('Two-factor login is already on: turn it off before setting it up again');
    const totp = new TOTP({ ...TOTP_PARAMETERS, issuer: ISSUER, label: account.email, secret });
    return { secret: secret.base32, otpauthUrl: totp.toString() };
  }

  /** The first code of the app turns two-factor login on; answers the recovery codes, once. */
  async confirm(accountId: string, input: unknown, by: Credential): Promise<TwoFactorActivation> {
    assertLoginToken(by);
    const { code } = parseInput(codeInput, input);
    if (await this.isEnabled(accountId)) throw new InvalidStateError('Two-factor login is already on');
    if (!(await this.hasSecret(accountId)))
      throw new InvalidStateError('Two-factor login has not been set up: set it up first');
    await this.countAttempt(accountId);
    if (!(await this.acceptTotp(accountId, code))) throw wrongCode();
    await this.forgetAttempts(accountId);

    const recoveryCodes = Array.from({ length: RECOVERY_CODE_COUNT }, newRecoveryCode);
    const settings = await this.prisma.$transaction(async (tx) => {
      const { count } = await tx.accountSettings.updateMany({
        where: { accountId, twoFactorEnabled: false },
        data: { twoFactorEnabled: true },
      });
      if (count === 0) throw new InvalidStateError('Two-factor login is already on');
      await tx.recoveryCode.deleteMany({ where: { accountId } });
      await tx.recoveryCode.createMany({
        data: recoveryCodes.map((recoveryCode) => ({ accountId, codeHash: hashRecoveryCode(recoveryCode) })),
      });
      return tx.accountSettings.findUniqueOrThrow({ where: { accountId } });
    });
    return { settings, recoveryCodes };
  }

  /** Turns two-factor login off with a code of the app or a recovery code. */
  async disable(accountId: string, input: unknown, by: Credential, query: SettingsQuery = {}) {
    assertLoginToken(by);
    const { code } = parseInput(codeInput, input);
    if (!(await this.isEnabled(accountId))) throw new InvalidStateError('Two-factor login is not on');
    await this.countAttempt(accountId);
    if (!(await this.acceptCode(accountId, code))) throw wrongCode();
    await this.forgetAttempts(accountId);
    return this.turnOff(accountId, query);
  }

  /** Without a code: for an operator helping someone who lost both phone and recovery codes. */
  async turnOff(accountId: string, query: SettingsQuery = {}) {
    const [, , settings] = await this.prisma.$transaction([
      this.prisma.twoFactorSecret.deleteMany({ where: { accountId } }),
      this.prisma.recoveryCode.deleteMany({ where: { accountId } }),
      this.prisma.accountSettings.update({
        ...query,
        where: { accountId },
        data: { twoFactorEnabled: false },
      }),
    ]);
    return settings;
  }

  /** A code of the app or a recovery code, accepted (and so used up) or not. */
  async acceptCode(accountId: string, code: string): Promise<boolean> {
    const text = code.trim();
    if (/^\d{6}$/.test(text)) return this.acceptTotp(accountId, text);
    const { count } = await this.prisma.recoveryCode.deleteMany({
      where: { accountId, codeHash: hashRecoveryCode(text) },
    });
    return count === 1;
  }

  private async isEnabled(accountId: string): Promise<boolean> {
    const settings = await this.prisma.accountSettings.findUnique({
      where: { accountId },
      select: { twoFactorEnabled: true },
    });
    if (!settings) throw new NotFoundError('Settings');
    return settings.twoFactorEnabled;
  }

  private async hasSecret(accountId: string): Promise<boolean> {
    return (await this.prisma.twoFactorSecret.count({ where: { accountId } })) > 0;
  }

  /**
   * A code of the account's secret for now, one step either side, not used before. The step is
   * recorded only if it is later than the last one accepted and the secret is still the one
   * read, in one statement: two processes given the same code cannot both accept it.
   */
  private async acceptTotp(accountId: string, code: string): Promise<boolean> {
    const row = await this.prisma.twoFactorSecret.findUnique({
      where: { accountId },
      select: { secretSealed: true },
    });
    if (!row || !/^\d{6}$/.test(code)) return false;
    const secret = Secret.fromBase32(this.box.unseal(accountId, row.secretSealed));
    const timestamp = this.clock.now().getTime();
    const delta = TOTP.validate({ ...TOTP_PARAMETERS, token: code, secret, timestamp, window: DRIFT_STEPS });
    if (delta === null) return false;
    const step = TOTP.counter({ period: TOTP_PARAMETERS.period, timestamp }) + delta;
    const { count } = await this.prisma.twoFactorSecret.updateMany({
      where: {
        accountId,
        secretSealed: row.secretSealed,
        OR: [{ lastUsedStep: null }, { lastUsedStep: { lt: step } }],
      },
      data: { lastUsedStep: step },
    });
    return count === 1;
  }

  /**
   * Counted before the code is checked, atomically in Redis: however many arrive at once, no
   * more than CODE_ATTEMPTS codes are tried per window. Like the other limits, Redis away lets
   * the attempt through uncounted rather than refusing it.
   */
  private async countAttempt(accountId: string): Promise<void> {
    try {
      await this.attempts.consume(accountId);
    } catch (outcome) {
      if (outcome instanceof RateLimiterRes)
        throw new RateLimitedError(Math.max(1, Math.ceil(outcome.msBeforeNext / 1000)));
      this.logger.warn({ err: outcome }, 'two-factor code attempt not counted: Redis unavailable');
    }
  }

  private async forgetAttempts(accountId: string): Promise<void> {
    await this.attempts.delete(accountId).catch(() => undefined);
  }
}

function wrongCode(): ValidationError {
  return new ValidationError(
    [{ field: 'code', issue: 'invalid_value' }],
    'The code is wrong, expired or was already used',
  );
}

/** `abcd-efgh-jkmn-pqrs`: grouped to be copied by hand. */
function newRecoveryCode(): string {
  return recoveryCharacters().match(/.{4}/g)!.join('-');
}

/**
 * SHA-256 of the code as typed without case, spaces or dashes: 80 random bits leave nothing to
 * gain from a slow hash, and a deterministic one lets the code be looked up and deleted in one
 * statement.
 */
function hashRecoveryCode(code: string): string {
  return createHash('sha256').update(code.toLowerCase().replace(/[\s-]/g, ''), 'utf8').digest('base64url');
}

/**
 * Two-factor login guards the login, so only a login can change it: a leaked API key must not
 * be able to turn it on with a secret of its own (locking the owner out) or turn it off.
 */
function assertLoginToken(by: Credential): void {
  if (by === 'api_key')
    throw new ForbiddenError('API keys cannot change two-factor login: use a login token');
}
