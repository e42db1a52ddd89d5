import cluster from 'node:cluster';
import { createTern } from './app.js';
import { CLUSTER_ROLE_VARIABLE, clusterPlan, superviseCluster } from './cluster.js';
import { ConfigError, loadConfig, type Config, type Role } from './config.js';
import { migrateDatabase } from './db/migrations.js';
import { createDependencies, createLogger } from './deps.js';
import { UnreachableError, checkRedis } from './startup.js';

const ROLES: readonly Role[] = ['all', 'api', 'worker'];

function fail(message: string): never {
  process.stderr.write(`tern: ${message}\n`);
  process.exit(1);
}

async function main() {
  const role = (process.env[CLUSTER_ROLE_VARIABLE] ?? process.argv[2] ?? 'all') as Role;
  if (!ROLES.includes(role)) fail(`unknown role "${role}"; use one of ${ROLES.join(', ')}`);

  let config: Config;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) fail(error.message);
    throw error;
  }
  const logger = createLogger(config);
  for (const warning of config.warnings) logger.warn(warning);

  try {
    await checkRedis(config.redisUrl);
    const applied = await migrateDatabase(config.databaseUrl, { log: (message) => logger.info(message) });
    if (applied.length > 0) logger.info({ migrations: applied }, 'migrations applied');
  } catch (error) {
    if (error instanceof UnreachableError) fail(error.message);
    throw error;
  }

  const plan = cluster.isPrimary ? clusterPlan(role, config.webConcurrency) : null;
  if (plan) {
    superviseCluster(plan, logger, config.shutdownTimeoutMs);
    return;
  }

  const tern = createTern(createDependencies(config, { logger }), role);
  // Handlers go in before start: a SIGTERM while starting must still drain, not kill.
  const started = tern.start();
  let stopping = false;
  const shutdown = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'draining in-flight requests and jobs');
    const deadline = setTimeout(() => {
      logger.error('shutdown timed out; exiting');
      process.exit(1);
    }, config.shutdownTimeoutMs);
    deadline.unref();
    started
      .catch(() => undefined)
      .then(() => tern.stop())
      .then(
        () => {
          logger.info('stopped');
          process.exit(0);
        },
        (error: unknown) => {
          logger.error({ err: error }, 'error while stopping');
          process.exit(1);
        },
      );
  };
  process.once('SIGTERM', () => shutdown('SIGTERM'));
  process.once('SIGINT', () => shutdown('SIGINT'));

  const address = await started;
  logger.info({ role, address }, 'tern started');

  if (config.demoAccount && role !== 'worker' && !stopping) {
    const demo = await tern.services.accounts.createDemoAccountIfEmpty();
    if (demo) {
      process.stdout.write(
        `\nDemo account created (shown once): e-mail ${demo.email}  password ${demo.password}\n` +
          `Log in: curl -s ${address}/v1/auth/login -H 'Content-Type: application/json' -d '{"email":"${demo.email}","password":"${demo.password}"}'\n\n`,
      );
    }
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`tern: could not start: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
