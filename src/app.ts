import type { FastifyInstance } from 'fastify';
import type { GraphQLSchema } from 'graphql';
import type { Role } from './config.js';
import type { Dependencies } from './deps.js';
import { closeDependencies } from './deps.js';
import { createSchema } from './graphql/schema.js';
import { createHttpServer } from './http/server.js';
import { startWorkers, type RunningWorkers, type WorkerFactory } from './jobs/workers.js';
import { createServices, type Services } from './services.js';

/** The service's BullMQ workers; the worker role runs all of them. */
export const WORKERS: readonly WorkerFactory[] = [];

export interface Tern {
  deps: Dependencies;
  services: Services;
  schema: GraphQLSchema;
  http: FastifyInstance | null;
  /** Listens (API role) and starts the workers (worker role); resolves to the API's address. */
  start(): Promise<string | null>;
  /** Stops taking requests, drains in-flight requests and jobs, then closes connections. */
  stop(): Promise<void>;
}

export function createTern(deps: Dependencies, role: Role): Tern {
  const services = createServices(deps);
  const schema = createSchema(services, deps.prisma, { strictQueries: deps.config.env !== 'production' });
  const http = role === 'worker' ? null : createHttpServer({ deps, services, schema });
  let workers: RunningWorkers | null = null;

  return {
    deps,
    services,
    schema,
    http,
    async start() {
      await deps.redis.connect();
      if (role !== 'api') {
        workers = startWorkers(WORKERS, deps, services);
        deps.logger.info({ workers: workers.names }, 'workers started');
      }
      if (!http) return null;
      return http.listen({ host: deps.config.host, port: deps.config.port });
    },
    async stop() {
      await Promise.all([http?.close(), workers?.close()]);
      await closeDependencies(deps);
    },
  };
}
