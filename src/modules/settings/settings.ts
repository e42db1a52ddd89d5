import { z } from 'zod';
import { NotFoundError } from '../../errors.js';
import { Prisma, type PrismaClient } from '../../generated/prisma/client.js';
import { timeZoneInput } from '../../lib/time-zone.js';
import { issue, parseInput } from '../../lib/validation.js';
import { messageValidityInput } from '../messages/message-timing.js';
import { sendWindowInput } from './send-window.js';

export const updateSettingsInput = z
  .strictObject({
    timezone: timeZoneInput
      .meta({
        description:
          'An IANA time zone name PostgreSQL knows too: statistics’ days and send windows are read in it; quota days and months are those of limits.timezone',
      })
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
    sendWindow: sendWindowInput
      .meta({ description: 'When campaign messages may go, in each recipient’s local time; null: any time' })
      .nullable()
      .optional(),
    messageValidity: messageValidityInput
      .meta({ description: 'Seconds a message may wait for its hand-over before it fails as expired' })
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
    const { sendWindow, ...data } = parseInput(updateSettingsInput, input);
    return this.prisma.accountSettings.update({
      ...query,
      where: { accountId },
      data: {
        ...data,
        ...(sendWindow === undefined ? {} : { sendWindow: sendWindow ?? Prisma.DbNull }),
      },
    });
  }
}
