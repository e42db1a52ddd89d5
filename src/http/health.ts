import type { Dependencies } from '../deps.js';

export interface HealthReport {
  status: 'ok' | 'unavailable';
  postgres: 'up' | 'down';
  redis: 'up' | 'down';
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  return Promise.race([
    promise,
    new Promise<T>((_, reject) => setTimeout(() => reject(new Error('timed out')), ms).unref()),
  ]);
}

export async function checkHealth(deps: Pick<Dependencies, 'prisma' | 'redis'>, timeoutMs = 2_000): Promise<HealthReport> {
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
