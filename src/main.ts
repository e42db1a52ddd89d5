import cluster from 'node:cluster';
import type { Logger } from 'pino';
import { AggregatorRegistry } from 'prom-client';
import { createTern, type Tern } from './app.js';
import { CarrierHealthBoard } from './carriers/routing/carrier-health.js';
import { CLUSTER_ROLE_VARIABLE, type ClusterPlan, clusterPlan, superviseCluster } from './cluster.js';
import { ConfigError, environmentWithDotEnv } from './config/environment.js';
import { type Config, loadConfig, type Role } from './config.js';
import { migrateDatabase } from './db/migrations.js';
import { createDependencies, createLogger } from './deps.js';
import { healthDetail } from './http/health.js';
import { UnreachableError } from './lib/unreachable.js';
import { type HealthDetailSource, type MetricsServer, serveMetrics } from './metrics/metrics-server.js';
import { checkRedis } from './startup.js';

const ROLES: readonly Role[] = ['all', 'api', 'worker'];

function fail(message: string): never {
  process.stderr.write(`tern: ${message}\n`);
  process.exit(1);
}

async function main() {
  const role = (process.env[CLUSTER_ROLE_VARIABLE] ?? process.argv[2] ?? 'all') as Role;
  if (!ROLES.includes(role)) fail(`unknown role "${role}"; use one of ${ROLES.join(', ')}`);
  const config = readConfig();
  const logger = createLogger(config);
  for (const warning of config.warnings) logger.warn(warning);

  await checkDependencies(config, logger);

  const plan = cluster.isPrimary ? clusterPlan(role, config.webConcurrency) : null;
  if (plan) await superviseProcesses(plan, config, logger);
  else await runProcess(role, config, logger);
}

function readConfig(): Config {
  try {
    return loadConfig(environmentWithDotEnv());
  } catch (error) {
    if (error instanceof ConfigError) fail(error.message);
    throw error;
  }
}

/** The supervisor serves the metrics of every process it forked, summed (see Metrics). */
async function superviseProcesses(plan: ClusterPlan, config: Config, logger: Logger): Promise<void> {
  const aggregator = new AggregatorRegistry();
  const metrics = await listenForMetrics(
    config,
    { contentType: aggregator.contentType, render: () => aggregator.clusterMetrics() },
    supervisorHealth(config, logger),
  );
  superviseCluster(plan, logger, config.shutdownTimeoutMs);
  if (metrics) logger.info({ metrics: metrics.address }, 'metrics listening');
}

async function runProcess(role: Role, config: Config, logger: Logger): Promise<void> {
  const deps = createDependencies(config, { logger });
  const tern = await createTern(deps, role);
  let metrics: MetricsServer | null = null;
  if (cluster.isWorker) {
    // Answers the supervisor's requests for this process's series.
    new AggregatorRegistry();
    AggregatorRegistry.setRegistries([deps.metrics.registry]);
  } else {
    const registry = deps.metrics.registry;
    metrics = await listenForMetrics(
      config,
      { contentType: registry.contentType, render: () => registry.metrics() },
      () => tern.healthDetail(),
    );
  }
  // Handlers go in before start: a SIGTERM while starting must still drain, not kill.
  const started = tern.start();
  const draining = drainOnSignals(tern, started, config, logger);

  const address = await started;
  logger.info({ role, address, ...(metrics ? { metrics: metrics.address } : {}) }, 'tern started');
  if (config.demoAccount && address && !draining()) await offerDemoAccount(tern, address);
}

/**
 * Drains in-flight requests and jobs on SIGTERM or SIGINT, within SHUTDOWN_TIMEOUT_MS. Answers
 * whether a drain began.
 */
function drainOnSignals(
  tern: Tern,
  started: Promise<unknown>,
  config: Config,
  logger: Logger,
): () => boolean {
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
  // Kept for the whole drain: a second signal (npm forwards the one its process group also got)
  // must not fall through to Node's default, which would kill the process mid-drain.
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
  return () => stopping;
}

async function offerDemoAccount(tern: Tern, address: string): Promise<void> {
  const demo = await tern.services.accounts.createDemoAccountIfEmpty();
  if (!demo) return;
  process.stdout.write(
    `\nDemo account created (shown once): e-mail ${demo.email}  password ${demo.password}\n` +
      `Log in: curl -s ${address}/v1/auth/login -H 'Content-Type: application/json' -d '{"email":"${demo.email}","password":"${demo.password}"}'\n\n`,
  );
}

/**
 * Redis answers (and keeps what it is given: its eviction policy is checked as BullMQ's
 * production guide asks) and the database is migrated, through DIRECT_DATABASE_URL.
 */
async function checkDependencies(config: Config, logger: Logger): Promise<void> {
  try {
    const redis = await checkRedis(config.redis);
    if (redis.evictionPolicy === null)
      logger.debug('Redis did not tell its maxmemory-policy; it must be noeviction for the queues');
    else if (redis.evictionPolicy !== 'noeviction')
      logger.warn(
        { maxmemoryPolicy: redis.evictionPolicy },
        `Redis's maxmemory-policy is ${redis.evictionPolicy}: when its memory is full it deletes keys, queued jobs among them; set it to noeviction`,
      );
    const applied = await migrateDatabase(config.directDatabaseUrl, {
      log: (message) => logger.info(message),
    });
    if (applied.length > 0) logger.info({ migrations: applied }, 'migrations applied');
  } catch (error) {
    if (error instanceof UnreachableError) fail(error.message);
    throw error;
  }
}

/**
 * The supervisor's health in detail: what its processes publish, read through connections of its
 * own, opened at once so that the first request does not wait for them.
 */
function supervisorHealth(config: Config, logger: Logger): HealthDetailSource {
  const deps = createDependencies(config, { logger });
  const board = new CarrierHealthBoard(deps.redis, config.redisPrefix, logger);
  // A failure here shows in the answers as postgres or redis down.
  const opened = Promise.allSettled([
    deps.redis.status === 'wait' ? deps.redis.connect() : null,
    deps.prisma.$queryRaw`SELECT 1`,
  ]);
  return async () => {
    await opened;
    return healthDetail(deps, () => board.read(null));
  };
}

/** The metrics listener, unless METRICS_PORT is off; a port that cannot be bound stops start-up. */
async function listenForMetrics(
  config: Config,
  registry: { contentType: string; render: () => Promise<string> },
  health: HealthDetailSource,
): Promise<MetricsServer | null> {
  if (!config.metrics) return null;
  try {
    return await serveMetrics({ ...config.metrics, ...registry, health });
  } catch (error) {
    fail(
      `cannot serve metrics on ${config.metrics.host}:${config.metrics.port} (METRICS_HOST, METRICS_PORT; METRICS_PORT=off turns them off): ${(error as Error).message}`,
    );
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`tern: could not start: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
