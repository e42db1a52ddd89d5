import type { FastifyInstance } from 'fastify';
import type { GraphQLSchema } from 'graphql';
import { CarrierPool } from './carriers/carrier-pool.js';
import { defaultCarrierUrl } from './carriers/index.js';
import type { Role } from './config.js';
import type { Dependencies } from './deps.js';
import { closeDependencies } from './deps.js';
import { createSchema } from './graphql/schema.js';
import { Readiness } from './http/health.js';
import { createHttpServer } from './http/server.js';
import { type QueueKey, queueList } from './jobs/queues.js';
import { startRecovery } from './jobs/recovery.js';
import { type RunningWorkers, startWorkers, type WorkerFactory } from './jobs/workers.js';
import { readQueueDepths } from './metrics/metrics.js';
import { createCampaignDispatchWorker } from './modules/campaigns/campaign-dispatch.worker.js';
import { createContactImportWorker } from './modules/imports/contact-import.worker.js';
import { createMessageSendWorker } from './modules/messages/message-send.worker.js';
import { createRetentionWorker } from './modules/retention/retention.worker.js';
import { createWebhookDeliveryWorker } from './modules/webhooks/webhook-delivery.worker.js';
import { WebhookDispatcher } from './modules/webhooks/webhook-dispatcher.js';
import { createServices, type Services } from './services.js';

/** The service's BullMQ workers, one for each queue; the worker role runs all of them. */
const WORKERS: Readonly<Record<QueueKey, WorkerFactory>> = {
  messageSend: createMessageSendWorker,
  campaignDispatch: createCampaignDispatchWorker,
  webhookDelivery: createWebhookDeliveryWorker,
  contactImport: createContactImportWorker,
  retention: createRetentionWorker,
};

// How often an idle webhook dispatcher looks for new events: a bound on their wait before delivery.
const WEBHOOK_DISPATCH_POLL_MS = 100;

export interface Tern {
  deps: Dependencies;
  services: Services;
  schema: GraphQLSchema;
  http: FastifyInstance | null;
  /** The carriers of the worker role; null in an API-only process. */
  carriers: CarrierPool | null;
  /** Listens (API role) and starts the workers (worker role); resolves to the API's address. */
  start(): Promise<string | null>;
  /** Turns readiness off, stops taking requests, drains in-flight requests and jobs, then closes connections. */
  stop(): Promise<void>;
}

export function createTern(deps: Dependencies, role: Role): Tern {
  const services = createServices(deps);
  const schema = createSchema({
    strictQueries: deps.config.env !== 'production',
    inputs: { allowInsecureWebhooks: deps.config.webhookAllowInsecure },
  });
  const carrierHealth = services.carrierHealth;
  const carriers = role === 'api' ? null : createCarrierPool(deps, services);
  const localCarriers = carriers ? () => carriers.health() : null;
  let stopping = false;
  const readiness = new Readiness(deps, () => stopping);
  const http =
    role === 'worker'
      ? null
      : createHttpServer({
          deps,
          services,
          schema,
          carriers: () => carrierHealth.read(localCarriers),
          readiness,
          shuttingDown: () => stopping,
        });
  let workers: RunningWorkers | null = null;
  let recovery: { stop(): Promise<void> } | null = null;
  const dispatcher =
    role === 'api'
      ? null
      : new WebhookDispatcher({
          prisma: deps.prisma,
          clock: deps.clock,
          deliveries: services.webhookDeliveries,
          deliveryJobs: services.webhookDeliveryJobs,
          logger: deps.logger.child({ module: 'webhook-dispatcher' }),
          pollMs: WEBHOOK_DISPATCH_POLL_MS,
        });

  return {
    deps,
    services,
    schema,
    http,
    carriers,
    async start() {
      if (deps.redis.status === 'wait') await deps.redis.connect();
      await services.carrierCatalog.ensureDefault(
        defaultCarrierUrl(deps.config),
        deps.config.carrierMaxPerSecond,
      );
      await services.carrierDirectory.ready();
      services.carrierDirectory.start();
      if (carriers) {
        await carriers.start();
        carrierHealth.start(() => carriers.health());
        deps.metrics.observe({
          carriers: () => carriers.health(),
          queueDepths: () => readQueueDepths(queueList(deps.queues)),
          oldestQueuedMessage: () => services.messageDelivery.oldestQueued(),
        });
        workers = startWorkers(Object.values(WORKERS), { deps, services, carriers });
        recovery = startRecovery(deps, services);
        dispatcher?.start();
        services.scheduledReleases.start();
        deps.logger.info(
          { workers: workers.names, carriers: carriers.health().map((carrier) => carrier.carrier) },
          'workers started',
        );
      }
      if (!http) return null;
      return http.listen({ host: deps.config.host, port: deps.config.port });
    },
    async stop() {
      stopping = true;
      // Open event streams would hold the HTTP drain forever: they end first, and their clients reconnect elsewhere.
      await services.liveSubscriptions.close();
      await Promise.all([
        http?.close(),
        workers?.close(),
        recovery?.stop(),
        dispatcher?.stop(),
        carriers ? services.scheduledReleases.stop() : undefined,
      ]);
      await carrierHealth.stop();
      services.carrierDirectory.stop();
      await carriers?.stop();
      await closeDependencies(deps);
    },
  };
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
    // This process and every other worker that published its carriers lately.
    peers: async () =>
      1 + new Set((await services.carrierHealth.read(null)).map((entry) => entry.worker)).size,
    tickMs: CARRIER_TICK_MS,
    circuit: CIRCUIT,
    paceWaitMs: Math.floor(deps.config.claimLeaseMs / 4),
  });
}
