import { readdirSync } from 'node:fs';
import type { WorkerCarrierHealth } from '../carriers/routing/carrier-health.js';
import { DEFAULT_MIGRATIONS_DIR } from '../db/migrations.js';
import type { Dependencies } from '../deps.js';
import { carrierHealthBody } from './carrier-health-body.js';

export interface HealthReport {
  status: 'ok' | 'unavailable';
  postgres: 'up' | 'down';
  redis: 'up' | 'down';
}

export interface ReadinessReport extends HealthReport {
  migrations: 'applied' | 'pending' | 'unknown';
  shutting_down: boolean;
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  return Promise.race([
    promise,
    new Promise<T>((_, reject) => setTimeout(() => reject(new Error('timed out')), ms).unref()),
  ]);
}

export async function checkHealth(
  deps: Pick<Dependencies, 'prisma' | 'redis'>,
  timeoutMs = 2_000,
): Promise<HealthReport> {
  const [postgres, redis] = await Promise.all([
    withTimeout(deps.prisma.$queryRaw`SELECT 1`, timeoutMs).then(
      () => 'up' as const,
      () => 'down' as const,
    ),
    withTimeout(deps.redis.ping(), timeoutMs).then(
      () => 'up' as const,
      () => 'down' as const,
    ),
  ]);
  return { status: postgres === 'up' && redis === 'up' ? 'ok' : 'unavailable', postgres, redis };
}

/**
 * Whether this process should be sent traffic: PostgreSQL and Redis answer, every migration the
 * build ships is applied, and the process is not shutting down. Once the migrations are found
 * applied they are not looked up again.
 */
export class Readiness {
  private readonly expected: string[];
  private migrationsApplied = false;

  constructor(
    private readonly deps: Pick<Dependencies, 'prisma' | 'redis'>,
    private readonly shuttingDown: () => boolean,
    migrationsDir = DEFAULT_MIGRATIONS_DIR,
  ) {
    this.expected = readdirSync(migrationsDir, { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => entry.name);
  }

  async check(timeoutMs = 2_000): Promise<ReadinessReport> {
    const [health, migrations] = await Promise.all([
      checkHealth(this.deps, timeoutMs),
      this.migrations(timeoutMs),
    ]);
    const shutting_down = this.shuttingDown();
    const ready = health.status === 'ok' && migrations === 'applied' && !shutting_down;
    return { ...health, status: ready ? 'ok' : 'unavailable', migrations, shutting_down };
  }

  private async migrations(timeoutMs: number): Promise<ReadinessReport['migrations']> {
    if (this.migrationsApplied) return 'applied';
    try {
      const rows = await withTimeout(
        this.deps.prisma.$queryRaw<{ migration_name: string }[]>`
          SELECT migration_name FROM _prisma_migrations WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL`,
        timeoutMs,
      );
      const applied = new Set(rows.map((row) => row.migration_name));
      this.migrationsApplied = this.expected.every((name) => applied.has(name));
      return this.migrationsApplied ? 'applied' : 'pending';
    } catch {
      return 'unknown';
    }
  }
}

/** A component as anyone may see it: whether it works, never why. */
export type ComponentStatus = 'ok' | 'degraded';

/**
 * The carriers taken together: `ok` while every enabled carrier that some worker publishes is bound
 * (or ready) in at least one of them with its circuit closed; `degraded` otherwise, and when no
 * worker publishes any carrier.
 */
export function carriersStatus(workers: WorkerCarrierHealth[]): ComponentStatus {
  if (workers.length === 0) return 'degraded';
  const names = new Set(workers.map((entry) => entry.carrier));
  for (const name of names) {
    const seen = workers.filter((entry) => entry.carrier === name);
    if (seen.every((entry) => entry.enabled === false)) continue;
    const up = seen.some(
      (entry) =>
        (entry.state === 'bound' || entry.state === 'ready') &&
        (entry.circuit === undefined || entry.circuit === 'closed'),
    );
    if (!up) return 'degraded';
  }
  return 'ok';
}

/**
 * GET /health on the API's listener, which anyone can reach: PostgreSQL, Redis and the carriers,
 * each by its status only. No carrier name, host, process or error: those are in healthDetail,
 * served on the metrics listener.
 */
export function publicHealthBody(report: HealthReport, workers: WorkerCarrierHealth[]) {
  return { ...report, carriers: carriersStatus(workers) };
}

/** GET /health on the metrics listener: the status, with every worker's carriers in detail. */
export async function healthDetail(
  deps: Pick<Dependencies, 'prisma' | 'redis'>,
  carriers: () => Promise<WorkerCarrierHealth[]>,
) {
  const [report, workers] = await Promise.all([checkHealth(deps), carriers()]);
  return {
    ...report,
    carriers_status: carriersStatus(workers),
    carriers: workers.map(carrierHealthBody),
  };
}
