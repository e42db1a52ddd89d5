import { parseArgs } from 'node:util';
import { ConfigError, environmentWithDotEnv, loadConfig } from './config.js';
import { migrateDatabase } from './db/migrations.js';
import { closeDependencies, createDependencies } from './deps.js';
import { AppError, ValidationError } from './errors.js';
import { createServices } from './services.js';
import { UnreachableError } from './startup.js';

const USAGE = 'usage: npm run cli -- accounts create --email EMAIL --password PASSWORD';

/** Operator commands. Prints one JSON line on success; errors go to stderr with exit code 1. */
async function main(argv: string[]) {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: { email: { type: 'string' }, password: { type: 'string' } },
    });
  } catch (error) {
    throw new UsageError(`${error instanceof Error ? error.message : String(error)}\n${USAGE}`);
  }
  const { positionals, values } = parsed;
  if (positionals[0] !== 'accounts' || positionals[1] !== 'create') throw new UsageError(USAGE);

  const config = loadConfig({ ...environmentWithDotEnv(), LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn' });
  await migrateDatabase(config.databaseUrl);
  const deps = createDependencies(config);
  try {
    const account = await createServices(deps).accounts.create({ email: values.email, password: values.password });
    process.stdout.write(`${JSON.stringify(account)}\n`);
  } finally {
    await closeDependencies(deps);
  }
}

class UsageError extends Error {}

main(process.argv.slice(2)).catch((error: unknown) => {
  let message = error instanceof Error ? error.message : String(error);
  if (error instanceof ValidationError) {
    message = `invalid ${error.details.map((d) => `${d.field} (${d.issue.replaceAll('_', ' ')})`).join(', ')}`;
  } else if (!(error instanceof UsageError || error instanceof AppError || error instanceof ConfigError || error instanceof UnreachableError)) {
    message = `unexpected error: ${message}`;
  }
  process.stderr.write(`tern: ${message}\n`);
  process.exit(1);
});
