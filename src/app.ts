import type { FastifyInstance } from 'fastify';
import type { GraphQLSchema } from 'graphql';
import { defaultCarrierConflict, defaultCarrierUrl, publicUrlMissing } from './carriers/index.js';
import { CarrierPool } from './carriers/routing/carrier-pool.js';
import { ConfigError } from './config/environment.js';
import type { Role } from './config.js';
import { readDatabaseTimeZones } from './db/time-zones.js';
import type { Dependencies } from './deps.js';
import { closeDependencies } from './deps.js';
import { healthDetail, Readiness } from './http/health.js';
import { type QueueKey, queueList } from './jobs/queues.js';
import { type RecoveryTask, startRecovery } from './jobs/recovery.js';
import { type RunningWorkers, startWorkers } from './jobs/workers.js';
import { readQueueDepths } from './metrics/metrics.js';
import { createCampaignDispatchWorker } from './modules/campaigns/campaign-dispatch.worker.js';
import { createContactImportWorker } from './modules/imports/contact-import.worker.js';
import { createMessageSendWorker } from './modules/messages/message-send.worker.js';
import { createRetentionWorker } from './modules/retention/retention.worker.js';
import { createStatsSettleWorker } from './modules/stats/stats-settle.worker.js';
import { createWebhookDeliveryWorker } from './modules/webhooks/webhook-delivery.worker.js';
import { WebhookDispatcher } from './modules/webhooks/webhook-dispatcher.js';
import { createServices, type Services } from './services.js';
import type { WorkerFactory } from './worker-context.js';

/** The service's BullMQ workers, one for each queue; the worker role runs all of them. */
const WORKERS: Readonly<Record<QueueKey, WorkerFactory<Services>>> = {
  messageSend: createMessageSendWorker,
  campaignDispatch: createCampaignDispatchWorker,
  webhookDelivery: createWebhookDeliveryWorker,
  contactImport: createContactImportWorker,
  retention: createRetentionWorker,
  statsSettle: createStatsSettleWorker,
};

// How often an idle webhook dispatcher looks for new events: a bound on their wait before delivery.
const WEBHOOK_DISPATCH_POLL_MS = 100;

export interface Tern {
  deps: Dependencies;
  services: Services;
  /** The GraphQL schema of a process that serves the API; null in a worker-only process. */
  schema: GraphQLSchema | null;
  http: FastifyInstance | null;
  /** The carriers of the worker role; null in an API-only process. */
  carriers: CarrierPool | null;
  /** What GET /health on the metrics listener answers: the status with every worker's carriers in detail. */
  healthDetail(): ReturnType<typeof healthDetail>;
  /** Listens (API role) and starts the workers (worker role); resolves to the API's address. */
  start(): Promise<string | null>;
  /** Turns readiness off, stops taking requests, drains in-flight requests and jobs, then closes connections. */
  stop(): Promise<void>;
}

/**
 * The GraphQL schema and the HTTP server's maker, loaded only by a process that serves the API:
 * loading Yoga and Fastify and building the schema cost a worker-only process about a second of
 * CPU at each start.
 */
async function loadApiLayers(deps: Dependencies) {
  const [{ createSchema }, { createHttpServer }] = await Promise.all([
    import('./graphql/schema.js'),
    import('./http/server.js'),
  ]);
  const schema = createSchema({
    strictQueries: deps.config.env !== 'production',
    inputs: { allowInsecureWebhooks: deps.config.webhookAllowInsecure },
  });
  return { schema, createHttpServer };
}

export async function createTern(deps: Dependencies, role: Role): Promise<Tern> {
  const services = createServices(deps);
  const api = role === 'worker' ? null : await loadApiLayers(deps);
  const schema = api?.schema ?? null;
  const carriers = role === 'api' ? null : createCarrierPool(deps, services);
  const everyCarrier = () => services.carrierHealth.read(carriers ? () => carriers.health() : null);
  let stopping = false;
  const http = api
    ? api.createHttpServer({
        deps,
        services,
        schema: api.schema,
        carriers: everyCarrier,
        readiness: new Readiness(deps, () => stopping),
        shuttingDown: () => stopping,
      })
    : null;
  const background = carriers ? new BackgroundWork(deps, services, carriers) : null;

  return {
    deps,
    services,
    schema,
    http,
    carriers,
    healthDetail: () => healthDetail(deps, everyCarrier),
    async start() {
      if (deps.redis.status === 'wait') await deps.redis.connect();
      await readDatabaseTimeZones(deps.pool);
      await services.carrierCatalog.ensureDefault(
        defaultCarrierUrl(deps.config),
        deps.config.carrierMaxPerSecond,
      );
      await services.carrierCatalog.sealSecretOptionsLeftInUrls();
      const conflict = await defaultCarrierConflict(deps.config, services.carrierCatalog);
      if (conflict) throw new ConfigError(conflict);
      await services.carrierDirectory.ready();
      const missing = publicUrlMissing(deps.config, services.carrierDirectory.carriers);
      if (missing) throw new ConfigError(missing);
      services.carrierDirectory.start();
      await services.countrySenderRules.start();
      // Listening first: a port another process holds stops this one before it takes workers or bind leases.
      const address = http ? await http.listen({ host: deps.config.host, port: deps.config.port }) : null;
      await background?.start();
      return address;
    },
    async stop() {
      stopping = true;
      // Open event streams would hold the HTTP drain forever: they end first, and their clients reconnect elsewhere.
      await services.liveSubscriptions.close();
      await Promise.all([http?.close(), background?.stop()]);
      await services.carrierHealth.stop();
      for (const poll of [services.carrierDirectory, services.countrySenderRules]) poll.stop();
      await carriers?.stop();
      await closeDependencies(deps);
    },
  };
}

/** What the worker role runs besides the API: the carriers' binds, the queues' workers and the loops that feed them. */
class BackgroundWork {
  private workers: RunningWorkers | null = null;
  private recovery: { stop(): Promise<void> } | null = null;
  private readonly dispatcher: WebhookDispatcher;

  constructor(
    private readonly deps: Dependencies,
    private readonly services: Services,
    private readonly carriers: CarrierPool,
  ) {
    this.dispatcher = new WebhookDispatcher({
      prisma: deps.prisma,
      clock: deps.clock,
      deliveries: services.webhookDeliveries,
      deliveryJobs: services.webhookDeliveryJobs,
      logger: deps.logger.child({ module: 'webhook-dispatcher' }),
      pollMs: WEBHOOK_DISPATCH_POLL_MS,
    });
  }

  async start(): Promise<void> {
    const { deps, services, carriers } = this;
    await carriers.start();
    services.carrierHealth.start(() => carriers.health());
    deps.metrics.observe({
      carriers: () => carriers.health(),
      queueDepths: () => readQueueDepths([...queueList(deps.queues), ...carriers.handOverQueues()]),
      oldestQueuedMessage: () => services.messageDelivery.oldestQueued(),
    });
    this.workers = startWorkers(Object.values(WORKERS), { deps, services, carriers }, deps);
    this.recovery = startRecovery(deps, recoveryTasks(deps, services));
    this.dispatcher.start();
    services.scheduledReleases.start();
    deps.logger.info(
      { workers: this.workers.names, carriers: carriers.health().map((carrier) => carrier.carrier) },
      'workers started',
    );
  }

  async stop(): Promise<void> {
    await Promise.all([
      this.workers?.close(),
      this.recovery?.stop(),
      this.dispatcher.stop(),
      this.services.scheduledReleases.stop(),
    ]);
  }
}

const RECOVERY_SWEEP_LIMIT = 1_000;

/** What the recovery sweep puts back, in this order: stranded messages, then overdue campaign jobs, webhook attempts and imports. */
function recoveryTasks({ config }: Dependencies, services: Services): RecoveryTask[] {
  const after = config.recoveryAfterMs;
  return [
    {
      key: 'messages',
      found: 'stranded messages',
      run: () =>
        services.messageDelivery.recoverStranded({
          unclaimedForMs: after,
          leaseMs: config.claimLeaseMs,
          limit: RECOVERY_SWEEP_LIMIT,
        }),
    },
    {
      key: 'campaigns',
      found: 'overdue campaign jobs',
      run: () => services.campaignDispatch.recoverStalled(after),
    },
    {
      key: 'deliveries',
      found: 'overdue webhook attempts',
      run: () => services.webhookDeliveries.recoverStalled(after),
    },
    { key: 'imports', found: 'unfinished imports', run: () => services.contactImports.recoverStalled(after) },
    {
      key: 'verifications',
      found: 'expired verifications',
      run: () => services.verificationChecks.expireDue(),
    },
  ];
}

// How often a worker renews its carrier binds and looks for free ones; a dead holder's bind lapses after three.
const CARRIER_TICK_MS = 1_000;
// Unavailable hand-overs in a row that open a carrier's circuit, and how long it then stays open.
const CIRCUIT = { threshold: 5, openMs: 5_000 };

function createCarrierPool(deps: Dependencies, services: Services): CarrierPool {
  return new CarrierPool({
    directory: services.carrierDirectory,
    deps,
    redis: deps.redis,
    redisPrefix: deps.config.redisPrefix,
    worker: services.carrierHealth.worker,
    sinkFor: (carrier) => services.carrierReports.sinkFor(carrier),
    // Every other worker that published its carriers lately.
    cluster: () => services.carrierHealth.read(null),
    tickMs: CARRIER_TICK_MS,
    circuit: CIRCUIT,
    paceWaitMs: Math.floor(deps.config.claimLeaseMs / 4),
  });
}
