import type { WorkerCarrierHealth } from '../carriers/routing/carrier-health.js';
import { errorCountsByKind } from '../metrics/metrics.js';

/** A worker's carrier as GET /health shows it, in the API's snake_case names. */
export function carrierHealthBody(health: WorkerCarrierHealth) {
  return {
    carrier: health.carrier,
    state: health.state,
    ...(health.window ? { window: { in_use: health.window.inUse, size: health.window.size } } : {}),
    ...(health.errors ? { errors: errorCountsByKind(health.errors) } : {}),
    ...(health.lastError !== undefined ? { last_error: health.lastError } : {}),
    ...(health.enabled !== undefined ? { enabled: health.enabled } : {}),
    ...(health.bindsOpen !== undefined ? { binds_open: health.bindsOpen, binds: health.binds } : {}),
    ...(health.maxPerSecond !== undefined ? { max_per_second: health.maxPerSecond } : {}),
    ...(health.circuit !== undefined ? { circuit: health.circuit } : {}),
    worker: health.worker,
    updated_at: health.updatedAt,
  };
}
