import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { isUniqueViolation } from '../../db/prisma-errors.js';
import { ConflictError, InvalidCredentialsError } from '../../errors.js';
import type { PrismaClient } from '../../generated/prisma/client.js';
import { newId } from '../../ids.js';
import { parseInput } from '../../validation.js';
import { decoyPasswordHash, hashPassword, verifyPassword } from './password.js';
import type { LoginGuard } from './login-guard.js';
import type { IssuedToken, TokenService } from './tokens.js';

const email = z
  .string()
  .trim()
  .max(254)
  .pipe(z.email())
  .transform((value) => value.toLowerCase());

const createAccountInput = z.object({
  email,
  password: z.string().min(8).max(1024),
});

const loginInput = z.object({
  email: z.string().min(1).max(254),
  password: z.string().min(1).max(1024),
});

export interface CreatedAccount {
  account: string;
  email: string;
}

export class AccountService {
  constructor(
    private readonly prisma: PrismaClient,
    private readonly tokens: TokenService,
    private readonly guard: LoginGuard,
  ) {}

  async create(input: { email?: unknown; password?: unknown }): Promise<CreatedAccount> {
    const data = parseInput(createAccountInput, input);
    const passwordHash = await hashPassword(data.password);
    const id = newId('acc');
    const existing = await this.prisma.account.findUnique({ where: { email: data.email }, select: { id: true } });
    if (existing) throw new ConflictError('An account with this e-mail already exists');
    try {
      await this.prisma.account.create({
        data: { id, email: data.email, passwordHash, settings: { create: {} } },
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

  async login(input: { email?: unknown; password?: unknown }, clientAddress: string): Promise<IssuedToken> {
    const data = parseInput(loginInput, input);
    const email = data.email.trim().toLowerCase();
    await this.guard.beforeAttempt(email, clientAddress);
    const account = await this.prisma.account.findUnique({ where: { email }, select: { id: true, passwordHash: true } });
    const valid = await verifyPassword(data.password, account?.passwordHash ?? (await decoyPasswordHash));
    if (!account || !valid) {
      await this.guard.failed(email, clientAddress);
      throw new InvalidCredentialsError();
    }
    await this.guard.succeeded(email, clientAddress);
    return this.tokens.issue(account.id);
  }
}
