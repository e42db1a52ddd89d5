import { parseArgs, type ParseArgsConfig } from 'node:util';
import { read } from 'read';
import { ConfigError, environmentWithDotEnv, loadConfig } from './config.js';
import { migrateDatabase } from './db/migrations.js';
import { closeDependencies, createDependencies } from './deps.js';
import { AppError, NotFoundError, ValidationError } from './errors.js';
import { MAX_API_KEYS_PER_ACCOUNT } from './modules/api-keys/api-keys.service.js';
import { createServices, type Services } from './services.js';
import { UnreachableError } from './startup.js';

/**
 * Operator commands: `npm run cli -- <group> <command> [options]`. Each result is one JSON line
 * on stdout; an error is one `tern: …` line on stderr, with exit code 1 (a command line that
 * cannot be understood names the --help to read). `--help` at every level prints what is there
 * and exits 0.
 */

type Options = NonNullable<ParseArgsConfig['options']>;
type Values = Record<string, string | boolean | undefined>;

interface Command {
  summary: string;
  /** The options as the help shows them, after the command's name. */
  synopsis: string;
  options: Options;
  required: string[];
  details?: string;
  run(services: Services, values: Values): Promise<void>;
}

interface Group {
  summary: string;
  commands: Record<string, Command>;
}

// Enough for any password the service accepts (1024 characters of up to 4 bytes) and its newline.
const MAX_STDIN_BYTES = 8 * 1024;

const EMAIL = { email: { type: 'string' } } satisfies Options;
const PASSWORD_DETAILS = [
  'Without --password, the password is asked for (twice, not echoed) when stdin is a terminal,',
  'and otherwise read from the first line of stdin, which keeps it out of the process list and',
  'the shell history: printf %s "$PASSWORD" | npm run cli -- accounts create --email E',
].join('\n');

const GROUPS: Record<string, Group> = {
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
        details: 'Prints one line per account: {"account","email","disabled","two_factor_enabled","created_at"}.',
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
        summary: 'disable an account: it cannot log in, and its login tokens and API keys are refused at once',
        synopsis: '--email EMAIL',
        options: EMAIL,
        required: ['email'],
        details: 'Prints {"account","email","disabled":true}. Nothing of the account is deleted; enable undoes it.',
        run: (services, values) => setDisabled(services, values, true),
      },
      enable: {
        summary: 'enable a disabled account again',
        synopsis: '--email EMAIL',
        options: EMAIL,
        required: ['email'],
        details: 'Prints {"account","email","disabled":false}. Its unexpired login tokens and API keys work again.',
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
      'two-factor-off': {
        summary: 'turn two-factor login off for an account that lost its authenticator and recovery codes',
        synopsis: '--email EMAIL',
        options: EMAIL,
        required: ['email'],
        details: 'Deletes the TOTP secret and the recovery codes. Prints {"account","email","two_factor_enabled":false}.',
        async run(services, values) {
          const account = await accountOf(services, values);
          await services.twoFactor.turnOff(account);
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
          const created = await services.apiKeys.create(account, { name: values.name, expiresAt: values['expires-at'] }, 'operator');
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
        details: 'Prints one line per key: {"api_key","name","prefix","created_at","expires_at","last_used_at"}.',
        async run(services, values) {
          const account = await accountOf(services, values);
          // The whole list fits in one page: an account holds at most that many keys.
          for (const key of await services.apiKeys.list(account, { page: 1, perPage: MAX_API_KEYS_PER_ACCOUNT })) {
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
        details: 'KEY_ID is the key\'s id (key_…), as api-keys list shows it. Prints {"api_key","deleted":true}.',
        async run(services, values) {
          const account = await accountOf(services, values);
          const revoked = await services.apiKeys.revoke(account, String(values.id), 'operator');
          print({ api_key: revoked.id, deleted: revoked.deleted });
        },
      },
    },
  },
};

class UsageError extends Error {}

function print(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value)}\n`);
}

function topHelp(): string {
  const groups = Object.entries(GROUPS).map(([name, group]) => `  ${name.padEnd(10)} ${group.summary}`);
  return ['usage: npm run cli -- <group> <command> [options]', '', 'groups:', ...groups, '', 'npm run cli -- <group> --help lists its commands.'].join('\n');
}

function groupHelp(name: string, group: Group): string {
  const commands = Object.entries(group.commands).map(([command, spec]) => `  ${command.padEnd(16)} ${spec.summary}`);
  return [`usage: npm run cli -- ${name} <command> [options]`, '', 'commands:', ...commands, '', `npm run cli -- ${name} <command> --help tells more.`].join('\n');
}

function commandHelp(group: string, name: string, command: Command): string {
  return [`usage: npm run cli -- ${group} ${name} ${command.synopsis}`.trimEnd(), '', `${command.summary[0]!.toUpperCase()}${command.summary.slice(1)}.`, ...(command.details ? [command.details] : [])].join('\n');
}

async function setDisabled(services: Services, values: Values, disabled: boolean): Promise<void> {
  const account = await accountOf(services, values);
  await services.accounts.setDisabled(account, disabled);
  print({ account, email: values.email, disabled });
}

async function accountOf(services: Services, values: Values): Promise<string> {
  try {
    return await services.accounts.idByEmail(String(values.email));
  } catch (error) {
    if (error instanceof NotFoundError) throw new AppError('not_found', `no account has the e-mail ${String(values.email)}`);
    throw error;
  }
}

/** --password, else a prompt on a terminal, else the first line of stdin. */
async function passwordFrom(values: Values): Promise<string> {
  if (typeof values.password === 'string') return values.password;
  if (process.stdin.isTTY) {
    const password = await read({ prompt: 'Password: ', silent: true, replace: '*', output: process.stderr });
    const again = await read({ prompt: 'Password again: ', silent: true, replace: '*', output: process.stderr });
    if (password !== again) throw new UsageError('the two passwords differ');
    return password;
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of process.stdin as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_STDIN_BYTES) throw new UsageError(`stdin holds more than ${MAX_STDIN_BYTES} bytes: give the password alone on its first line`);
    chunks.push(chunk);
  }
  const [firstLine = ''] = Buffer.concat(chunks).toString('utf8').split(/\r?\n/);
  return firstLine;
}

/** The command to run and its options; null when help was asked for and printed. */
function parseCommandLine(argv: string[]): { command: Command; values: Values } | null {
  const [groupName, commandName, ...rest] = argv;
  const wantsHelp = (arg: string | undefined) => arg === '--help' || arg === '-h' || arg === 'help';
  if (groupName === undefined || wantsHelp(groupName)) {
    if (groupName === undefined) throw new UsageError('a group and a command are needed (npm run cli -- --help lists them)');
    process.stdout.write(`${topHelp()}\n`);
    return null;
  }
  const group = Object.hasOwn(GROUPS, groupName) ? GROUPS[groupName] : undefined;
  if (!group) throw new UsageError(`unknown group "${groupName}" (npm run cli -- --help lists them)`);
  const groupHint = `(npm run cli -- ${groupName} --help lists them)`;
  if (commandName === undefined) throw new UsageError(`a command is needed ${groupHint}`);
  if (wantsHelp(commandName)) {
    process.stdout.write(`${groupHelp(groupName, group)}\n`);
    return null;
  }
  const command = Object.hasOwn(group.commands, commandName) ? group.commands[commandName] : undefined;
  if (!command) throw new UsageError(`unknown command "${groupName} ${commandName}" ${groupHint}`);
  const commandHint = `(npm run cli -- ${groupName} ${commandName} --help tells more)`;
  let values: Values;
  try {
    ({ values } = parseArgs({ args: rest, options: { ...command.options, help: { type: 'boolean', short: 'h' } }, strict: true, allowPositionals: false }));
  } catch (error) {
    const problem = error instanceof Error ? error.message.split('\n')[0] : String(error);
    throw new UsageError(`${problem} ${commandHint}`);
  }
  if (values.help) {
    process.stdout.write(`${commandHelp(groupName, commandName, command)}\n`);
    return null;
  }
  const missing = command.required.filter((name) => values[name] === undefined).map((name) => `--${name}`);
  if (missing.length > 0) throw new UsageError(`missing ${missing.join(', ')} ${commandHint}`);
  return { command, values };
}

async function main(argv: string[]): Promise<void> {
  const parsed = parseCommandLine(argv);
  if (!parsed) return;
  const config = loadConfig({ ...environmentWithDotEnv(), LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn' });
  await migrateDatabase(config.databaseUrl);
  const deps = createDependencies(config);
  try {
    await parsed.command.run(createServices(deps), parsed.values);
  } finally {
    await closeDependencies(deps);
  }
}

main(process.argv.slice(2)).catch((error: unknown) => {
  let message = error instanceof Error ? error.message : String(error);
  if (error instanceof ValidationError) {
    // Named as the options are: --expires-at for the service's expiresAt.
    const option = (field: string) => field.replace(/[A-Z]/g, (capital) => `-${capital.toLowerCase()}`);
    message = `invalid ${error.details.map((d) => `${option(d.field)} (${d.issue.replaceAll('_', ' ')})`).join(', ')}`;
  } else if (!(error instanceof UsageError || error instanceof AppError || error instanceof ConfigError || error instanceof UnreachableError)) {
    message = `unexpected error: ${message}`;
  }
  process.stderr.write(`tern: ${message}\n`);
  process.exit(1);
});
