import { parseArgs } from 'node:util';
import { type Command, type Group, UsageError, type Values } from './cli/command-kit.js';
import { GROUPS } from './cli/commands.js';
import { ConfigError, environmentWithDotEnv } from './config/environment.js';
import { checkTernDatabase, NotTernDatabaseError } from './db/tern-database.js';
import { AppError, ValidationError } from './errors.js';
import { UnreachableError } from './lib/unreachable.js';

/**
 * Operator commands: `npm run cli -- <group> <command> [options]`. Each result is one JSON line
 * on stdout; an error is one `tern: …` line on stderr, with exit code 1 (a command line that
 * cannot be understood names the --help to read). `--help` at every level prints what is there
 * and exits 0.
 */

function topHelp(): string {
  const groups = Object.entries(GROUPS).map(([name, group]) => `  ${name.padEnd(10)} ${group.summary}`);
  return [
    'usage: npm run cli -- <group> <command> [options]',
    '',
    'groups:',
    ...groups,
    '',
    'npm run cli -- <group> --help lists its commands.',
  ].join('\n');
}

function groupHelp(name: string, group: Group): string {
  const commands = Object.entries(group.commands).map(
    ([command, spec]) => `  ${command.padEnd(16)} ${spec.summary}`,
  );
  return [
    `usage: npm run cli -- ${name} <command> [options]`,
    '',
    'commands:',
    ...commands,
    '',
    `npm run cli -- ${name} <command> --help tells more.`,
  ].join('\n');
}

function commandHelp(group: string, name: string, command: Command): string {
  return [
    `usage: npm run cli -- ${group} ${name} ${command.synopsis}`.trimEnd(),
    '',
    `${command.summary[0]!.toUpperCase()}${command.summary.slice(1)}.`,
    ...(command.details ? [command.details] : []),
  ].join('\n');
}

/** The command to run and its options; null when help was asked for and printed. */
function parseCommandLine(argv: string[]): { command: Command; values: Values } | null {
  const [groupName, commandName, ...rest] = argv;
  const wantsHelp = (arg: string | undefined) => arg === '--help' || arg === '-h' || arg === 'help';
  if (groupName === undefined || wantsHelp(groupName)) {
    if (groupName === undefined)
      throw new UsageError('a group and a command are needed (npm run cli -- --help lists them)');
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
    const parsed = parseArgs({
      args: withNegativeValues(rest, command),
      options: { ...command.options, help: { type: 'boolean', short: 'h' } },
      strict: true,
      allowPositionals: command.positional !== undefined,
    });
    values = { ...parsed.values, ...positionalValue(command, parsed.positionals) };
  } catch (error) {
    const problem = error instanceof Error ? error.message.split('\n')[0] : String(error);
    throw new UsageError(`${problem} ${commandHint}`);
  }
  if (values.help) {
    process.stdout.write(`${commandHelp(groupName, commandName, command)}\n`);
    return null;
  }
  const missing = command.required
    .filter((name) => values[name] === undefined)
    .map((name) => (name === command.positional ? name.toUpperCase() : `--${name}`));
  if (missing.length > 0) throw new UsageError(`missing ${missing.join(', ')} ${commandHint}`);
  return { command, values };
}

/**
 * `--daily-segments -3`: node's parser takes `-3` for an option and answers "argument is
 * ambiguous"; given as the option's value, the command itself says what it takes.
 */
function withNegativeValues(args: string[], command: Command): string[] {
  const joined: string[] = [];
  for (let index = 0; index < args.length; index += 1) {
    const arg = args[index]!;
    const next = args[index + 1];
    const option = arg.startsWith('--') ? command.options[arg.slice(2)] : undefined;
    if (option?.type === 'string' && next !== undefined && /^-[0-9.]/.test(next)) {
      joined.push(`${arg}=${next}`);
      index += 1;
    } else joined.push(arg);
  }
  return joined;
}

/** The one positional a command takes (`carriers add NAME`), under its name. */
function positionalValue(command: Command, positionals: string[]): Values {
  if (command.positional === undefined || positionals.length === 0) return {};
  if (positionals.length > 1) throw new UsageError(`one ${command.positional.toUpperCase()} only`);
  return { [command.positional]: positionals[0] };
}

/**
 * What a command needs to run, loaded once the command line is understood: help and a wrong
 * command line answer without loading the service (about two thirds of a run's CPU).
 */
async function loadRuntime() {
  const [
    { loadConfig },
    { readDatabaseTimeZones },
    { closeDependencies, createDependencies },
    { createServices },
  ] = await Promise.all([
    import('./config.js'),
    import('./db/time-zones.js'),
    import('./deps.js'),
    import('./services.js'),
  ]);
  return { loadConfig, readDatabaseTimeZones, closeDependencies, createDependencies, createServices };
}

async function main(argv: string[]): Promise<void> {
  const parsed = parseCommandLine(argv);
  if (!parsed) return;
  const { loadConfig, readDatabaseTimeZones, closeDependencies, createDependencies, createServices } =
    await loadRuntime();
  const config = loadConfig({ ...environmentWithDotEnv(), LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn' });
  await checkTernDatabase(config.directDatabaseUrl);
  const deps = createDependencies(config);
  try {
    await readDatabaseTimeZones(deps.pool);
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
    const allowed = (field: string) => {
      const hint = error.hints.get(field);
      return hint ? `: ${hint.replace(/^of /, '')}` : '';
    };
    message = `invalid ${error.details.map((d) => `${option(d.field)} (${d.issue.replaceAll('_', ' ')}${allowed(d.field)})`).join(', ')}`;
  } else if (
    !(
      error instanceof UsageError ||
      error instanceof AppError ||
      error instanceof ConfigError ||
      error instanceof UnreachableError ||
      error instanceof NotTernDatabaseError
    )
  ) {
    message = `unexpected error: ${message}`;
  }
  process.stderr.write(`tern: ${message}\n`);
  process.exit(1);
});
