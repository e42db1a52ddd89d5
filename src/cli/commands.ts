import { read } from 'read';
import { ValidationError } from '../errors.js';
import { MAX_API_KEYS_PER_ACCOUNT } from '../modules/api-keys/api-keys.js';
import { MAX_SENDERS_PER_ACCOUNT } from '../modules/senders/account-senders.js';
import type { Services } from '../services.js';
import { CARRIER_GROUPS } from './carrier-commands.js';
import { accountOf, type Group, type Options, print, UsageError, type Values } from './command-kit.js';
import { GUARD_COMMAND } from './guard-command.js';
import { SENDER_GROUPS } from './sender-commands.js';

// The operator commands, by group: what each takes and what it does; src/cli.ts parses and runs them.

// Enough for any password the service accepts (1024 characters of up to 4 bytes) and its newline.
const MAX_STDIN_BYTES = 8 * 1024;

const EMAIL = { email: { type: 'string' } } satisfies Options;
const PASSWORD_DETAILS = [
  'Without --password, the password is asked for (twice, not echoed) when stdin is a terminal,',
  'and otherwise read from the first line of stdin, which keeps it out of the process list and',
  'the shell history: printf %s "$PASSWORD" | npm run cli -- accounts create --email E',
].join('\n');

export const GROUPS: Record<string, Group> = {
  accounts: {
    summary: 'create, list, disable and enable accounts; reset a password; turn two-factor login off',
    commands: {
      create: {
        summary: 'create an account',
        synopsis: '--email EMAIL [--password PASSWORD]',
        options: { ...EMAIL, password: { type: 'string' } },
        required: ['email'],
        details: `The password needs at least 8 characters. ${PASSWORD_DETAILS}\nPrints {"account","email"}.`,
        async run(services, values) {
          const password = await passwordFrom(values);
          print(await services.accounts.create({ email: values.email, password }));
        },
      },
      list: {
        summary: 'list every account, oldest first',
        synopsis: '',
        options: {},
        required: [],
        details:
          'Prints one line per account: {"account","email","disabled","two_factor_enabled","created_at"}.',
        async run(services) {
          for await (const account of services.accounts.all()) {
            print({
              account: account.id,
              email: account.email,
              disabled: account.disabled,
              two_factor_enabled: account.twoFactorEnabled,
              created_at: account.createdAt.toISOString(),
            });
          }
        },
      },
      disable: {
        summary:
          'disable an account: it cannot log in, and its login tokens and API keys are refused at once',
        synopsis: '--email EMAIL',
        options: EMAIL,
        required: ['email'],
        details:
          'Prints {"account","email","disabled":true}. Nothing of the account is deleted; enable undoes it.',
        run: (services, values) => setDisabled(services, values, true),
      },
      enable: {
        summary: 'enable a disabled account again',
        synopsis: '--email EMAIL',
        options: EMAIL,
        required: ['email'],
        details:
          'Prints {"account","email","disabled":false}. Its unexpired login tokens and API keys work again.',
        run: (services, values) => setDisabled(services, values, false),
      },
      'reset-password': {
        summary: 'give an account a new password; every login token issued before stops working',
        synopsis: '--email EMAIL [--password PASSWORD]',
        options: { ...EMAIL, password: { type: 'string' } },
        required: ['email'],
        details: `${PASSWORD_DETAILS.replace('accounts create', 'accounts reset-password')}\nAPI keys are not affected (revoke them with api-keys revoke). Prints {"account","email","password_reset":true}.`,
        async run(services, values) {
          const account = await accountOf(services, values);
          await services.accounts.resetPassword(account, await passwordFrom(values));
          print({ account, email: values.email, password_reset: true });
        },
      },
      limits: {
        summary: "set an account's segment quotas and the countries it may send to",
        synopsis:
          '--email EMAIL [--daily-segments N|none] [--monthly-segments N|none] [--countries GB,IE|all] [--timezone ZONE]',
        options: {
          ...EMAIL,
          'daily-segments': { type: 'string' },
          'monthly-segments': { type: 'string' },
          countries: { type: 'string' },
          timezone: { type: 'string' },
        },
        required: ['email'],
        details: [
          'N is a whole number of segments a day or a calendar month, in the quota’s time zone; none removes',
          'the limit. --timezone ZONE (an IANA name) sets that zone; left out, it is the account’s own time zone',
          'when limits are first set, and the account changing its time zone does not move it. --countries takes ISO 3166 alpha-2 codes separated by commas, or all. An option left out',
          'keeps its value; with none, the command shows the limits. A send over a quota is refused with 429',
          'quota_exceeded, a send to another country with 422 destination_not_allowed.',
          'Prints {"account","email","daily_segments","monthly_segments","allowed_countries","timezone"}.',
        ].join('\n'),
        async run(services, values) {
          const account = await accountOf(services, values);
          const limits = await services.accountQuotas.setLimits(account, limitsFrom(values));
          print({
            account,
            email: values.email,
            daily_segments: limits.dailySegments,
            monthly_segments: limits.monthlySegments,
            allowed_countries: limits.allowedCountries,
            timezone: limits.timezone,
          });
        },
      },
      senders: {
        summary: 'approve, list and remove the senders an account may name as `from`',
        synopsis: '--email EMAIL (--add SENDER [--countries GB,IE] [--pool] | --remove SENDER | --list)',
        options: {
          ...EMAIL,
          add: { type: 'string' },
          countries: { type: 'string' },
          pool: { type: 'boolean' },
          remove: { type: 'string' },
          list: { type: 'boolean' },
        },
        required: ['email'],
        details: [
          'SENDER is 1..11 letters, digits and spaces (ACME), or an E.164 number (+447700900000, kept as digits).',
          `An account holds at most ${MAX_SENDERS_PER_ACCOUNT} senders. --add again changes a sender's --countries`,
          '(ISO 3166 alpha-2 codes; left out: every country) and --pool. A send naming any other `from`, or one',
          'to a country its sender is not approved for, is refused with 422 sender_not_allowed.',
          'Prints one line per sender: {"account","sender","kind","countries","pool"}; --remove prints',
          '{"account","sender","removed":true}.',
        ].join('\n'),
        run: sendersCommand,
      },
      guard: GUARD_COMMAND,
      'two-factor-off': {
        summary: 'turn two-factor login off for an account that lost its authenticator and recovery codes',
        synopsis: '--email EMAIL',
        options: EMAIL,
        required: ['email'],
        details:
          'Deletes the TOTP secret and the recovery codes. Prints {"account","email","two_factor_enabled":false}.',
        async run(services, values) {
          const account = await accountOf(services, values);
          await services.twoFactorLogin.turnOff(account);
          print({ account, email: values.email, two_factor_enabled: false });
        },
      },
    },
  },
  'api-keys': {
    summary: 'create, list and revoke the API keys of an account',
    commands: {
      create: {
        summary: 'create an API key; the key is printed once and cannot be shown again',
        synopsis: '--email EMAIL --name NAME [--expires-at ISO_TIME]',
        options: { ...EMAIL, name: { type: 'string' }, 'expires-at': { type: 'string' } },
        required: ['email', 'name'],
        details: `NAME is 1..80 characters; an account holds at most ${MAX_API_KEYS_PER_ACCOUNT} keys.\nPrints {"api_key","name","key","prefix","created_at","expires_at"}.`,
        async run(services, values) {
          const account = await accountOf(services, values);
          const created = await services.apiKeys.create(
            account,
            { name: values.name, expiresAt: values['expires-at'] },
            'operator',
          );
          print({
            api_key: created.id,
            name: created.name,
            key: created.key,
            prefix: created.prefix,
            created_at: created.createdAt.toISOString(),
            expires_at: created.expiresAt?.toISOString() ?? null,
          });
        },
      },
      list: {
        summary: 'list the API keys of an account, newest first (never the keys themselves)',
        synopsis: '--email EMAIL',
        options: EMAIL,
        required: ['email'],
        details:
          'Prints one line per key: {"api_key","name","prefix","created_at","expires_at","last_used_at"}.',
        async run(services, values) {
          const account = await accountOf(services, values);
          // The whole list fits in one page: an account holds at most that many keys.
          for (const key of await services.apiKeys.list(account, {
            page: 1,
            perPage: MAX_API_KEYS_PER_ACCOUNT,
          })) {
            print({
              api_key: key.id,
              name: key.name,
              prefix: key.prefix,
              created_at: key.createdAt.toISOString(),
              expires_at: key.expiresAt?.toISOString() ?? null,
              last_used_at: key.lastUsedAt?.toISOString() ?? null,
            });
          }
        },
      },
      revoke: {
        summary: 'revoke an API key: every API process refuses it from the next request on',
        synopsis: '--email EMAIL --id KEY_ID',
        options: { ...EMAIL, id: { type: 'string' } },
        required: ['email', 'id'],
        details:
          'KEY_ID is the key\'s id (key_…), as api-keys list shows it. Prints {"api_key","deleted":true}.',
        async run(services, values) {
          const account = await accountOf(services, values);
          const revoked = await services.apiKeys.revoke(account, String(values.id), 'operator');
          print({ api_key: revoked.id, deleted: revoked.deleted });
        },
      },
    },
  },
  ...CARRIER_GROUPS,
  ...SENDER_GROUPS,
};

async function sendersCommand(services: Services, values: Values): Promise<void> {
  const chosen = ['add', 'remove', 'list'].filter((option) => values[option] !== undefined);
  if (chosen.length !== 1) throw new UsageError('accounts senders takes one of --add, --remove or --list');
  if (values.add === undefined && (values.countries !== undefined || values.pool !== undefined))
    throw new UsageError('--countries and --pool go with --add');
  const account = await accountOf(services, values);
  const senders = services.accountSenders;
  if (typeof values.remove === 'string') {
    await senders.remove(account, values.remove).catch(namedAs('remove'));
    print({ account, sender: values.remove.replace(/^\+/, ''), removed: true });
    return;
  }
  if (typeof values.add === 'string') {
    const countries = typeof values.countries === 'string' ? countryCodes(values.countries) : undefined;
    const added = await senders
      .add(account, { sender: values.add, countries, pool: values.pool === true })
      .catch(namedAs('add'));
    print({ account, ...added });
    return;
  }
  for (const sender of await senders.list(account)) print({ account, ...sender });
}

/** A refusal of the service's `sender` field, told as the option that gave it. */
function namedAs(option: string) {
  const rename = (field: string) => (field === 'sender' ? option : field);
  return (error: unknown): never => {
    if (!(error instanceof ValidationError)) throw error;
    const hints = new Map([...error.hints].map(([field, hint]) => [rename(field), hint]));
    const details = error.details.map((detail) => ({ ...detail, field: rename(detail.field) }));
    throw new ValidationError(details, error.message, hints);
  };
}

async function setDisabled(services: Services, values: Values, disabled: boolean): Promise<void> {
  const account = await accountOf(services, values);
  await services.accounts.setDisabled(account, disabled);
  print({ account, email: values.email, disabled });
}

// Codes people write for a country that ISO 3166 names otherwise.
const COUNTRY_CODE_MISTAKES: Readonly<Record<string, string>> = { UK: 'GB', EL: 'GR' };

function countryCodes(text: string): string[] {
  const codes = text
    .split(',')
    .map((code) => code.trim().toUpperCase())
    .filter(Boolean);
  for (const code of codes) {
    const meant = COUNTRY_CODE_MISTAKES[code];
    if (meant)
      throw new UsageError(
        `--countries takes ISO 3166 alpha-2 codes: ${code} is not one; did you mean ${meant}?`,
      );
  }
  return codes;
}

/** The options of `accounts limits` as the change they ask for; a value that is not one is a usage error. */
function limitsFrom(values: Values): Record<string, unknown> {
  const segments = (option: string) => {
    const value = values[option];
    if (value === undefined) return undefined;
    if (value === 'none') return null;
    if (typeof value !== 'string' || !/^[0-9]+$/.test(value))
      throw new UsageError(`--${option} takes a whole number of segments or none`);
    return Number(value);
  };
  const countries = values.countries;
  return {
    dailySegments: segments('daily-segments'),
    monthlySegments: segments('monthly-segments'),
    timezone: values.timezone,
    allowedCountries:
      typeof countries !== 'string'
        ? undefined
        : countries.trim().toLowerCase() === 'all'
          ? []
          : countryCodes(countries),
  };
}

/** --password, else a prompt on a terminal, else the first line of stdin. */
async function passwordFrom(values: Values): Promise<string> {
  if (typeof values.password === 'string') return values.password;
  if (process.stdin.isTTY) {
    const password = await read({ prompt: 'Password: ', silent: true, replace: '*', output: process.stderr });
    const again = await read({
      prompt: 'Password again: ',
      silent: true,
      replace: '*',
      output: process.stderr,
    });
    if (password !== again) throw new UsageError('the two passwords differ');
    return password;
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of process.stdin as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_STDIN_BYTES)
      throw new UsageError(
        `stdin holds more than ${MAX_STDIN_BYTES} bytes: give the password alone on its first line`,
      );
    chunks.push(chunk);
  }
  const [firstLine = ''] = Buffer.concat(chunks).toString('utf8').split(/\r?\n/);
  return firstLine;
}
