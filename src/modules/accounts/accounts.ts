import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { isUniqueViolation } from '../../db/prisma-errors.js';
import { ConflictError, InvalidCredentialsError, NotFoundError, OtpRequiredError } from '../../errors.js';
import type { PrismaClient } from '../../generated/prisma/client.js';
import type { Clock } from '../../lib/clock.js';
import { newId } from '../../lib/ids.js';
import { parseInput } from '../../lib/validation.js';
import type { LoginGuard } from './login-guard.js';
import type { IssuedToken, LoginTokens } from './login-tokens.js';
import { decoyPasswordHash, hashPassword, verifyPassword } from './password.js';
import type { TwoFactorLogin } from './two-factor-login.js';

const email = z
  .string()
  .trim()
  .max(254)
  .pipe(z.email())
  .transform((value) => value.toLowerCase());

const password = z.string().min(8).max(1024);

const createAccountInput = z.object({ email, password });

export const loginInput = z
  .object({
    email: z.string().min(1).max(254).meta({ description: 'The e-mail the account was created with' }),
    password: z.string().min(1).max(1024).meta({ description: "The account's password" }),
    otp: z
      .string()
      .min(1)
      .max(64)
      .meta({
        description:
          'With two-factor login on: the 6-digit code of the authenticator app, or a recovery code. Each is accepted once',
      })
      .nullish(),
  })
  .meta({ description: "An account's credentials" });

export interface CreatedAccount {
  account: string;
  email: string;
}

/** An account as the operator's CLI lists it. */
export interface AccountSummary {
  id: string;
  email: string;
  disabled: boolean;
  twoFactorEnabled: boolean;
  createdAt: Date;
}

export interface AccountsOptions {
  prisma: PrismaClient;
  clock: Clock;
  tokens: LoginTokens;
  guard: LoginGuard;
  twoFactor: TwoFactorLogin;
  /** The countries a new account may send to; empty for every country. */
  defaultAllowedCountries: readonly string[];
}

export class Accounts {
  private readonly prisma: PrismaClient;
  private readonly clock: Clock;
  private readonly tokens: LoginTokens;
  private readonly guard: LoginGuard;
  private readonly twoFactor: TwoFactorLogin;
  private readonly defaultAllowedCountries: readonly string[];

  constructor(options: AccountsOptions) {
    ({
      prisma: this.prisma,
      clock: this.clock,
      tokens: this.tokens,
      guard: this.guard,
      twoFactor: this.twoFactor,
      defaultAllowedCountries: this.defaultAllowedCountries,
    } = options);
  }

  async create(input: { email?: unknown; password?: unknown }): Promise<CreatedAccount> {
    const data = parseInput(createAccountInput, input);
    const passwordHash = await hashPassword(data.password);
    const id = newId('acc');
    const existing = await this.prisma.account.findUnique({
      where: { email: data.email },
      select: { id: true },
    });
    if (existing) throw new ConflictError('An account with this e-mail already exists');
    try {
      await this.prisma.account.create({
        data: {
          id,
          email: data.email,
          passwordHash,
          settings: { create: {} },
          quota: { create: { allowedCountries: [...this.defaultAllowedCountries] } },
        },
      });
    } catch (error) {
      if (isUniqueViolation(error)) throw new ConflictError('An account with this e-mail already exists');
      throw error;
    }
    return { account: id, email: data.email };
  }

  /**
   * On an empty database, an account to try the service with. Returns its password once;
   * null when any account exists (or another process created the demo account first).
   */
  async createDemoAccountIfEmpty(): Promise<{ email: string; password: string } | null> {
    if ((await this.prisma.account.count()) > 0) return null;
    const demo = { email: 'demo@tern.local', password: randomBytes(12).toString('base64url') };
    try {
      await this.create(demo);
    } catch (error) {
      if (error instanceof ConflictError) return null;
      throw error;
    }
    return demo;
  }

  /**
   * A login token for the e-mail and password, and, when the account has two-factor login on,
   * a code of its authenticator app or a recovery code as `otp`. Without `otp` the answer is
   * OtpRequiredError, given only once the password is right; a wrong `otp` is a failed attempt
   * for the login lock like a wrong password.
   */
  async login(
    input: { email?: unknown; password?: unknown; otp?: unknown },
    clientAddress: string,
  ): Promise<IssuedToken> {
    const data = parseInput(loginInput, input);
    const email = data.email.trim().toLowerCase();
    const attempt = await this.guard.beforeAttempt(email, clientAddress);
    const account = await this.prisma.account.findUnique({
      where: { email },
      select: {
        id: true,
        passwordHash: true,
        disabledAt: true,
        tokenVersion: true,
        settings: { select: { twoFactorEnabled: true } },
      },
    });
    const valid = await verifyPassword(data.password, account?.passwordHash ?? (await decoyPasswordHash));
    if (!account || !valid) {
      await this.guard.failed(attempt);
      throw new InvalidCredentialsError();
    }
    if (account.settings?.twoFactorEnabled) {
      if (!data.otp) throw new OtpRequiredError();
      if (!(await this.twoFactor.acceptCode(account.id, data.otp))) {
        await this.guard.failed(attempt);
        throw new InvalidCredentialsError('The one-time code is wrong, expired or was already used');
      }
    }
    if (account.disabledAt) throw new InvalidCredentialsError('The account is disabled');
    await this.guard.succeeded(attempt);
    return this.tokens.issue(account.id, account.tokenVersion);
  }

  /** The account of an e-mail, compared as login compares it; NotFoundError otherwise. */
  async idByEmail(emailAddress: string): Promise<string> {
    const account = await this.prisma.account.findUnique({
      where: { email: emailAddress.trim().toLowerCase() },
      select: { id: true },
    });
    if (!account) throw new NotFoundError('Account');
    return account.id;
  }

  /** The e-mails of the given accounts (those that exist). */
  emailsOf(ids: string[]): Promise<{ id: string; email: string }[]> {
    return this.prisma.account.findMany({ where: { id: { in: ids } }, select: { id: true, email: true } });
  }

  /** Every account, oldest first, a page at a time (by id, which grows with time). */
  async *all(pageSize = 500): AsyncGenerator<AccountSummary> {
    let after: string | undefined;
    for (;;) {
      const page = await this.prisma.account.findMany({
        ...(after ? { where: { id: { gt: after } } } : {}),
        orderBy: { id: 'asc' },
        take: pageSize,
        select: {
          id: true,
          email: true,
          disabledAt: true,
          createdAt: true,
          settings: { select: { twoFactorEnabled: true } },
        },
      });
      for (const account of page) {
        yield {
          id: account.id,
          email: account.email,
          disabled: account.disabledAt !== null,
          twoFactorEnabled: account.settings?.twoFactorEnabled ?? false,
          createdAt: account.createdAt,
        };
      }
      if (page.length < pageSize) return;
      after = page[page.length - 1]!.id;
    }
  }

  /** While disabled, the account cannot log in and every token and key of it is refused. */
  async setDisabled(accountId: string, disabled: boolean): Promise<void> {
    const { count } = await this.prisma.account.updateMany({
      where: { id: accountId, disabledAt: disabled ? null : { not: null } },
      data: { disabledAt: disabled ? this.clock.now() : null },
    });
    if (count === 0 && !(await this.prisma.account.count({ where: { id: accountId } })))
      throw new NotFoundError('Account');
  }

  /** A new password; every login token issued before it stops working (API keys are not touched). */
  async resetPassword(accountId: string, newPassword: unknown): Promise<void> {
    const data = parseInput(z.object({ password }), { password: newPassword });
    const passwordHash = await hashPassword(data.password);
    const { count } = await this.prisma.account.updateMany({
      where: { id: accountId },
      data: { passwordHash, tokenVersion: { increment: 1 } },
    });
    if (count === 0) throw new NotFoundError('Account');
  }
}
