import cluster, { type Worker } from 'node:cluster';
import type { Logger } from 'pino';
import type { Role } from './config.js';

/** The role a process forked by the supervisor runs; unset in a process started by hand. */
export const CLUSTER_ROLE_VARIABLE = 'TERN_CLUSTER_ROLE';

export interface ClusterPlan {
  /** API processes, sharing the port through node:cluster. */
  api: number;
  /** Worker processes (the `all` role gets one beside its API processes). */
  worker: number;
}

export function clusterPlan(role: Role, webConcurrency: number): ClusterPlan | null {
  if (webConcurrency <= 1 || role === 'worker') return null;
  return { api: webConcurrency, worker: role === 'all' ? 1 : 0 };
}

/**
 * `WEB_CONCURRENCY` above 1: this process only supervises. It forks the API processes, which
 * share one port, and for the `all` role one worker process. A process that dies stops the
 * others and the supervisor exits 1, so that whatever runs Tern (systemd, Kubernetes) restarts
 * it whole; SIGTERM drains every process and exits 0.
 */
export function superviseCluster(plan: ClusterPlan, logger: Logger, shutdownTimeoutMs: number): void {
  const expected = plan.api + plan.worker;
  let stopping = false;
  let exitCode = 0;
  let exited = 0;
  let listening = 0;

  const stopAll = (code: number) => {
    exitCode = Math.max(exitCode, code);
    if (stopping) return;
    stopping = true;
    for (const child of Object.values(cluster.workers ?? {})) child?.process.kill('SIGTERM');
    // Children have their own shutdown deadline; this one only covers a child that hangs anyway.
    setTimeout(() => process.exit(1), shutdownTimeoutMs + 2_000).unref();
  };

  cluster.on('listening', (_child: Worker, address) => {
    listening += 1;
    // A plain line, like the demo account's: what an operator (or the bench) waits for, whatever LOG_LEVEL says.
    if (listening === plan.api)
      process.stdout.write(`tern: ${plan.api} API processes listening on port ${address.port}\n`);
  });
  cluster.on('exit', (child, code, signal) => {
    exited += 1;
    if (!stopping) {
      logger.error({ pid: child.process.pid, code, signal }, 'a Tern process exited; stopping the others');
      stopAll(1);
    } else if (code !== 0) {
      exitCode = 1;
    }
    if (exited === expected) process.exit(exitCode);
  });
  // Kept for the whole drain, like a single process's (see main.ts).
  process.on('SIGTERM', () => stopAll(0));
  process.on('SIGINT', () => stopAll(0));

  for (let index = 0; index < plan.api; index += 1) cluster.fork({ [CLUSTER_ROLE_VARIABLE]: 'api' });
  for (let index = 0; index < plan.worker; index += 1) cluster.fork({ [CLUSTER_ROLE_VARIABLE]: 'worker' });
  logger.info(plan, 'supervising Tern processes');
}
