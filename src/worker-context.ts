import type { Worker } from 'bullmq';
import type { CarrierPool } from './carriers/routing/carrier-pool.js';
import type { Dependencies } from './deps.js';

/**
 * What each queue's worker is made with, by the worker role of the process (`src/app.ts`):
 * `Services` names the services the worker calls, which the process's services include.
 */
export interface WorkerContext<Services> {
  deps: Dependencies;
  services: Services;
  carriers: CarrierPool;
}

/** A BullMQ worker of the service, started by the worker role of the process. */
export type WorkerFactory<Services> = (context: WorkerContext<Services>) => Worker;
