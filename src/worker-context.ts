import type { Worker } from 'bullmq';
import type { CarrierPool } from './carriers/carrier-pool.js';
import type { Dependencies } from './deps.js';
import type { Services } from './services.js';

/** What each queue's worker is made with, by the worker role of the process (`src/app.ts`). */
export interface WorkerContext {
  deps: Dependencies;
  services: Services;
  carriers: CarrierPool;
}

/** A BullMQ worker of the service, started by the worker role of the process. */
export type WorkerFactory = (context: WorkerContext) => Worker;
