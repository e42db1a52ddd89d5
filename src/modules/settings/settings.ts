import { z } from 'zod';
import { NotFoundError } from '../../errors.js';
import type { Prisma, PrismaClient } from '../../generated/prisma/client.js';
import { issue, parseInput } from '../../lib/validation.js';

function isIanaTimeZone(name: string): boolean {
  if (!/^[A-Za-z][A-Za-z0-9_+-]*(\/[A-Za-z0-9_+-]+)*$/.test(name)) return false;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: name });
    return true;
  } catch {
    return false;
  }
}

export const updateSettingsInput = z
  .strictObject({
    timezone: z
      .string()
      .max(64)
      .refine(isIanaTimeZone, issue('invalid_value'))
      .meta({ description: 'An IANA time zone name', examples: ['America/Sao_Paulo', 'UTC'] })
      .optional(),
    defaultSender: z
      .string()
      .refine(
        (value) => /^[A-Za-z0-9]{3,11}$/.test(value) || /^[0-9]{3,15}$/.test(value),
        issue('invalid_format'),
      )
      .meta({
        pattern: '^([A-Za-z0-9]{3,11}|[0-9]{3,15})$',
        description: 'An alphanumeric sender (3–11) or a number (3–15 digits); null clears it',
      })
      .nullable()
      .optional(),
  })
  .meta({ description: 'The settings to change; a field left out keeps its value' });

type SettingsQuery = Omit<Prisma.AccountSettingsFindUniqueArgs, 'where'>;

export class Settings {
  constructor(private readonly prisma: PrismaClient) {}

  async get(accountId: string, query: SettingsQuery = {}) {
    const settings = await this.prisma.accountSettings.findUnique({ ...query, where: { accountId } });
    if (!settings) throw new NotFoundError('Settings');
    return settings;
  }

  async update(accountId: string, input: unknown, query: SettingsQuery = {}) {
    const data = parseInput(updateSettingsInput, input);
    return this.prisma.accountSettings.update({ ...query, where: { accountId }, data });
  }
}
