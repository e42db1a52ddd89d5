import type { WorkerCarrierHealth } from '../carriers/carrier-health.js';

const snakeCase = (name: string) => name.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`);

/** A worker's carrier as GET /health shows it, in the API's snake_case names. */
export function carrierHealthBody(health: WorkerCarrierHealth) {
  return {
    carrier: health.carrier,
    state: health.state,
    ...(health.window ? { window: { in_use: health.window.inUse, size: health.window.size } } : {}),
    ...(health.errors ? { errors: Object.fromEntries(Object.entries(health.errors).map(([name, count]) => [snakeCase(name), count])) } : {}),
    ...(health.lastError !== undefined ? { last_error: health.lastError } : {}),
    worker: health.worker,
    updated_at: health.updatedAt,
  };
}
