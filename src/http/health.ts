import { readdirSync } from 'node:fs';
import { DEFAULT_MIGRATIONS_DIR } from '../db/migrations.js';
import type { Dependencies } from '../deps.js';

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
